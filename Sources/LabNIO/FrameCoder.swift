import LabCore
import LabWire
import NIOCore

/// Cuts the inbound byte stream into frame bodies (PROTOCOL.md §1).
///
/// A zero or over-limit length throws as soon as the header is in, before any of the body is
/// buffered, so an oversized frame never costs its size in memory. Bytes left over when the
/// peer closes are a truncated frame.
struct FrameDecoder: NIOSingleStepByteToMessageDecoder {
    typealias InboundOut = ByteBuffer

    let framing: Framing

    mutating func decode(buffer: inout ByteBuffer) throws -> ByteBuffer? {
        let headerBytes = self.framing.style.headerBytes
        guard let header = buffer.getBytes(at: buffer.readerIndex, length: headerBytes) else { return nil }
        let length = try self.framing.bodyLength(header: header)
        guard buffer.readableBytes >= headerBytes + length else { return nil }
        buffer.moveReaderIndex(forwardBy: headerBytes)
        return buffer.readSlice(length: length)
    }

    mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> ByteBuffer? {
        if let frame = try self.decode(buffer: &buffer) { return frame }
        if buffer.readableBytes > 0 {
            let pending = buffer.readableBytes
            buffer.moveReaderIndex(forwardBy: pending)
            throw LabError(.truncatedFrame, "The peer closed the connection \(pending) bytes into a frame")
        }
        return nil
    }
}

/// Frames outbound bodies: the length header, then the body.
struct FrameEncoder: MessageToByteEncoder {
    typealias OutboundIn = ByteBuffer

    let framing: Framing

    func encode(data: ByteBuffer, out: inout ByteBuffer) throws {
        let length = data.readableBytes
        guard length >= 1, length <= self.framing.maxFrameBytes else {
            throw LabError(
                length == 0 ? .emptyFrame : .frameTooLarge,
                "Cannot send a frame of \(length) bytes (lengths are 1...\(self.framing.maxFrameBytes))"
            )
        }
        switch self.framing.style {
        case .u32be: out.writeInteger(UInt32(length), endianness: .big)
        case .u64le: out.writeInteger(UInt64(length), endianness: .little)
        }
        out.writeImmutableBuffer(data)
    }
}

/// Turns the idle handler's read timeout into an error, so the connection's reader sees why
/// it ends, but only when the peer is the one keeping us waiting.
///
/// It sits between the frame codec and the connection's reader, counting requests read and
/// answers written: while an answer is still being computed, the silence is the server's, not
/// an idle peer's (PROTOCOL.md §1), and the connection stays open.
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
