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

/// Turns the idle handler's read timeout into an error, so the connection's reader sees why it ends.
final class IdleTimeoutHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = NIOAny

    let timeout: TimeSpan

    init(timeout: TimeSpan) {
        self.timeout = timeout
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let idle = event as? IdleStateHandler.IdleStateEvent, idle == .read {
            context.fireErrorCaught(
                LabError(.timedOut, "No bytes from the peer for \(self.timeout) (idle timeout)")
            )
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }
}

extension TimeSpan {
    /// The same span as a NIO `TimeAmount`.
    var timeAmount: TimeAmount { .nanoseconds(Int64(clamping: self.nanoseconds)) }
}
