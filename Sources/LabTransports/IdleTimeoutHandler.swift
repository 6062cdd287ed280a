import LabCore
import NIOCore

/// Turns the idle handler's timeout into an error, so the connection's reader sees why it
/// ends, but only when the peer is the one keeping us waiting: by sending nothing, or by
/// reading nothing.
///
/// It sits between the frame codec and the connection's reader, counting requests read and
/// answers written: while an answer is still being computed, the silence is the server's, not
/// an idle peer's (docs/protocol.md §1), and the connection stays open. But an answer that
/// waits for the peer to read is the peer's silence: once the channel stops being writable
/// (its unsent bytes past NIO's high-water mark, the kernel's buffers full), the connection's
/// reader stops reading requests, and when nothing has moved either way for the timeout, the
/// peer is timed out. Without that, a client that pipelined tens of thousands of requests and
/// never read held its connection, and its place under `--max-connections`, for good.
final class IdleTimeoutHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let timeout: TimeSpan
    /// Told why a connection is closed when its task may be waiting to write, not to read.
    let connections: ConnectionSet?
    private var unanswered = 0

    init(timeout: TimeSpan, connections: ConnectionSet? = nil) {
        self.timeout = timeout
        self.connections = connections
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        self.unanswered += 1
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        self.unanswered = max(0, self.unanswered - 1)
        context.write(data, promise: promise)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // `.all`: nothing read and nothing written for the timeout, so the clock restarts
        // when an answer goes out, not only when the peer last sent something.
        guard let idle = event as? IdleStateHandler.IdleStateEvent, idle == .all else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        if !context.channel.isWritable {
            let error = LabError(
                .timedOut,
                "The peer read none of its answers for \(self.timeout), \(self.unanswered) requests unanswered (idle timeout)"
            )
            // Its task waits to write, and will see only the closed channel.
            self.connections?.closing(context.channel, because: error)
            context.fireErrorCaught(error)
        } else if self.unanswered == 0 {
            context.fireErrorCaught(LabError(.timedOut, "No bytes from the peer for \(self.timeout) (idle timeout)"))
        } else {
            return
        }
        context.close(promise: nil)
    }
}

extension TimeSpan {
    /// The same span as a NIO `TimeAmount`.
    var timeAmount: TimeAmount { .nanoseconds(Int64(clamping: self.nanoseconds)) }
}
