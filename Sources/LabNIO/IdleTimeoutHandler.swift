import LabCore
import NIOCore

/// Turns the idle handler's read timeout into an error, so the connection's reader sees why
/// it ends, but only when the peer is the one keeping us waiting.
///
/// It sits between the frame codec and the connection's reader, counting requests read and
/// answers written: while an answer is still being computed, the silence is the server's, not
/// an idle peer's (docs/protocol.md §1), and the connection stays open.
final class IdleTimeoutHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let timeout: TimeSpan
    private var unanswered = 0

    init(timeout: TimeSpan) {
        self.timeout = timeout
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
        guard self.unanswered == 0 else { return }
        context.fireErrorCaught(LabError(.timedOut, "No bytes from the peer for \(self.timeout) (idle timeout)"))
        context.close(promise: nil)
    }
}

extension TimeSpan {
    /// The same span as a NIO `TimeAmount`.
    var timeAmount: TimeAmount { .nanoseconds(Int64(clamping: self.nanoseconds)) }
}
