public import LabCore

/// Frame layout and limits shared by both ends of a connection.
public struct Framing: Sendable, Hashable {
    /// The original sample's `kMaxMessageLength`: 5 MiB.
    public static let defaultMaxFrameBytes = 5_242_880

    /// The length encoding.
    public var style: FramingStyle
    /// The largest body accepted; a longer length ends the connection before the body is read.
    public var maxFrameBytes: Int

    /// Framing with the given style and limit.
    public init(style: FramingStyle = .u32be, maxFrameBytes: Int = Framing.defaultMaxFrameBytes) {
        precondition(maxFrameBytes >= 1, "maxFrameBytes must be at least 1")
        self.style = style
        self.maxFrameBytes = maxFrameBytes
    }

    /// The default: `u32be`, 5 MiB.
    public static let standard = Framing()

    /// Writes `body` as one frame (header + body) at the end of `buffer`.
    public func append(_ body: some Collection<UInt8>, to buffer: inout [UInt8]) throws {
        try self.check(length: UInt64(body.count))
        let length = UInt64(body.count)
        buffer.reserveCapacity(buffer.count + self.style.headerBytes + body.count)
        switch self.style {
        case .u32be:
            for shift in stride(from: 24, through: 0, by: -8) {
                buffer.append(UInt8(truncatingIfNeeded: length >> UInt64(shift)))
            }
        case .u64le:
            for shift in stride(from: 0, through: 56, by: 8) {
                buffer.append(UInt8(truncatingIfNeeded: length >> UInt64(shift)))
            }
        }
        buffer.append(contentsOf: body)
    }

    /// One frame holding `body`.
    public func frame(_ body: some Collection<UInt8>) throws -> [UInt8] {
        var buffer: [UInt8] = []
        try self.append(body, to: &buffer)
        return buffer
    }

    /// Reads a header's length; throws for zero or over-limit lengths.
    public func bodyLength(header: some Collection<UInt8>) throws -> Int {
        precondition(header.count == self.style.headerBytes)
        var length: UInt64 = 0
        switch self.style {
        case .u32be:
            for byte in header { length = length << 8 | UInt64(byte) }
        case .u64le:
            for (index, byte) in header.enumerated() { length |= UInt64(byte) << UInt64(8 * index) }
        }
        try self.check(length: length)
        return Int(length)
    }

    private func check(length: UInt64) throws {
        if length == 0 {
            throw LabError(.emptyFrame, "A frame of length 0 is not allowed (lengths are 1...\(self.maxFrameBytes))")
        }
        if length > UInt64(self.maxFrameBytes) {
            throw LabError(
                .frameTooLarge,
                "A frame of \(length) bytes is over the limit of \(self.maxFrameBytes) bytes (maxFrameBytes)"
            )
        }
    }
}

/// Cuts a byte stream into frame bodies, however the bytes arrive.
///
/// Feed it bytes with `append`, then call `nextFrame()` until it returns nil. A bad
/// length throws as soon as the header is complete, before any of the body is buffered.
public struct FrameParser: Sendable {
    /// The framing in force.
    public let framing: Framing
    private var buffer: [UInt8] = []
    private var readIndex = 0

    /// A parser for `framing`.
    public init(framing: Framing = .standard) {
        self.framing = framing
    }

    /// Bytes received but not yet returned as a frame.
    public var bufferedBytes: Int { self.buffer.count - self.readIndex }

    /// Adds received bytes.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        if self.readIndex > 0, self.readIndex == self.buffer.count {
            self.buffer.removeAll(keepingCapacity: true)
            self.readIndex = 0
        }
        self.buffer.append(contentsOf: bytes)
    }

    /// The next complete frame's body, or nil if more bytes are needed.
    public mutating func nextFrame() throws -> [UInt8]? {
        let header = self.framing.style.headerBytes
        guard self.bufferedBytes >= header else { return nil }
        let length = try self.framing.bodyLength(header: self.buffer[self.readIndex..<self.readIndex + header])
        guard self.bufferedBytes >= header + length else { return nil }
        let start = self.readIndex + header
        let body = Array(self.buffer[start..<start + length])
        self.readIndex = start + length
        if self.readIndex > 65_536, self.readIndex * 2 > self.buffer.count {
            self.buffer.removeFirst(self.readIndex)
            self.readIndex = 0
        }
        return body
    }

    /// Parses `bytes` that must hold exactly one frame.
    public static func singleFrame(_ bytes: some Sequence<UInt8>, framing: Framing = .standard) throws -> [UInt8] {
        var parser = FrameParser(framing: framing)
        parser.append(bytes)
        guard let body = try parser.nextFrame() else {
            throw LabError(.truncatedFrame, "The bytes ended inside a frame (\(parser.bufferedBytes) bytes buffered)")
        }
        if parser.bufferedBytes != 0 {
            throw LabError(.malformedMessage, "\(parser.bufferedBytes) bytes follow the frame")
        }
        return body
    }
}
