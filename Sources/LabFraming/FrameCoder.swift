public import LabCore
public import LabWire
public import NIOCore

/// Cuts the inbound byte stream into frame bodies (docs/protocol.md §1).
///
/// A zero or over-limit length throws as soon as the header is in, before any of the body is
/// buffered, so an oversized frame never costs its size in memory. Bytes left over when the
/// peer closes are a truncated frame. With a `frameTimeout`, a frame whose bytes are still
/// arriving that long after its first one throws too: a peer trickling a byte at a time (a
/// slow-loris) cannot keep a connection and its buffer forever by staying just under the idle
/// timeout.
public struct FrameDecoder: NIOSingleStepByteToMessageDecoder {
    public typealias InboundOut = ByteBuffer

    /// The framing and its limit.
    public let framing: Framing
    /// How long one frame may take to arrive, from its first byte to its last; nil: no limit.
    public let frameTimeout: TimeSpan?
    /// When the frame now arriving began to, if one is.
    private var partialSince: UInt64?

    /// A decoder for `framing`.
    public init(framing: Framing, frameTimeout: TimeSpan? = nil) {
        self.framing = framing
        self.frameTimeout = frameTimeout
    }

    /// The next frame's body, or nil until all of it is in; throws on a bad length, or on a
    /// frame that has taken longer than `frameTimeout` so far.
    public mutating func decode(buffer: inout ByteBuffer) throws -> ByteBuffer? {
        let headerBytes = self.framing.style.headerBytes
        guard let header = buffer.getBytes(at: buffer.readerIndex, length: headerBytes) else {
            try self.waiting(buffer)
            return nil
        }
        let length = try self.framing.bodyLength(header: header)
        guard buffer.readableBytes >= headerBytes + length else {
            try self.waiting(buffer)
            return nil
        }
        self.partialSince = nil
        buffer.moveReaderIndex(forwardBy: headerBytes)
        return buffer.readSlice(length: length)
    }

    /// As `decode`, at the end of the stream: bytes left over are a truncated frame.
    public mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> ByteBuffer? {
        // At the end the stream is over, not slow: what is left is a truncated frame.
        self.partialSince = nil
        if let frame = try self.decode(buffer: &buffer) { return frame }
        if buffer.readableBytes > 0 {
            let pending = buffer.readableBytes
            buffer.moveReaderIndex(forwardBy: pending)
            throw LabError(.truncatedFrame, "The peer closed the connection \(pending) bytes into a frame")
        }
        return nil
    }

    /// Notes that a frame is incomplete (or that none has begun); throws once one has been
    /// arriving for longer than `frameTimeout`.
    private mutating func waiting(_ buffer: ByteBuffer) throws {
        guard let timeout = self.frameTimeout, buffer.readableBytes > 0 else {
            self.partialSince = nil
            return
        }
        let now = Stopwatch.now()
        guard let since = self.partialSince else {
            self.partialSince = now
            return
        }
        if now &- since > timeout.nanoseconds {
            throw LabError(
                .timedOut,
                "A frame was still arriving \(timeout) after its first byte (\(buffer.readableBytes) bytes in; frameTimeout)"
            )
        }
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
