import LabCore
import LabWire
import NIOCore

/// Cuts the inbound byte stream into frame bodies (PROTOCOL.md §1).
///
/// A zero or over-limit length throws as soon as the header is in, before any of the body is
/// buffered, so an oversized frame never costs its size in memory. Bytes left over when the
/// peer closes are a truncated frame.
public struct FrameDecoder: NIOSingleStepByteToMessageDecoder {
    public typealias InboundOut = ByteBuffer

    /// The framing and its limit.
    public let framing: Framing

    /// A decoder for `framing`.
    public init(framing: Framing) {
        self.framing = framing
    }

    /// The next frame's body, or nil until all of it is in; throws on a bad length.
    public mutating func decode(buffer: inout ByteBuffer) throws -> ByteBuffer? {
        let headerBytes = self.framing.style.headerBytes
        guard let header = buffer.getBytes(at: buffer.readerIndex, length: headerBytes) else { return nil }
        let length = try self.framing.bodyLength(header: header)
        guard buffer.readableBytes >= headerBytes + length else { return nil }
        buffer.moveReaderIndex(forwardBy: headerBytes)
        return buffer.readSlice(length: length)
    }

    /// As `decode`, at the end of the stream: bytes left over are a truncated frame.
    public mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> ByteBuffer? {
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
public struct FrameEncoder: MessageToByteEncoder {
    public typealias OutboundIn = ByteBuffer

    /// The framing and its limit.
    public let framing: Framing

    /// An encoder for `framing`.
    public init(framing: Framing) {
        self.framing = framing
    }

    /// Writes the header and `data`; throws for an empty or over-limit body.
    public func encode(data: ByteBuffer, out: inout ByteBuffer) throws {
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
