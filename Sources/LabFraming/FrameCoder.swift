public import LabCore
public import NIOCore
import Synchronization

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
    /// The server-wide bytes partial frames may hold, shared by every connection; nil: none.
    public let budget: BufferBudget?
    /// When the frame now arriving began to, if one is.
    private var partialSince: UInt64?
    /// What the frame now arriving holds of `budget`.
    private var reservation: BufferBudget.Reservation?

    /// A decoder for `framing`.
    public init(framing: Framing, frameTimeout: TimeSpan? = nil, budget: BufferBudget? = nil) {
        self.framing = framing
        self.frameTimeout = frameTimeout
        self.budget = budget
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
            // The frame's whole size is held against the budget once its header says it,
            // before the body is buffered, and given back when the frame is whole (or the
            // connection ends: the reservation goes with the decoder).
            if let budget = self.budget, self.reservation == nil {
                guard let reservation = budget.reserve(headerBytes + length) else {
                    throw LabError(
                        .busy,
                        "A frame of \(length) bytes would take the server's buffered frames past their budget of \(budget.limit) bytes"
                    )
                }
                self.reservation = reservation
            }
            return nil
        }
        self.partialSince = nil
        self.reservation = nil
        buffer.moveReaderIndex(forwardBy: headerBytes)
        return buffer.readSlice(length: length)
    }

    /// As `decode`, at the end of the stream: bytes left over are a truncated frame.
    public mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> ByteBuffer? {
        // At the end the stream is over, not slow: what is left is a truncated frame.
        self.partialSince = nil
        defer { self.reservation = nil }
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

/// The bytes that frames still arriving may hold in buffers, across every connection of a
/// server: past it, the connection whose frame would pass it is closed (`busy`, logged), so
/// that many connections each sending most of a large frame cannot take the server's memory.
/// A frame holds its whole announced size from its header until it is whole.
public final class BufferBudget: Sendable {
    /// Bytes at most.
    public let limit: Int
    private let used = Atomic<Int>(0)

    /// A budget of `limit` bytes.
    public init(limit: Int) {
        self.limit = limit
    }

    /// Bytes held now.
    public var held: Int { self.used.load(ordering: .relaxed) }

    /// Holds `bytes` until the reservation is released, or nil if that would pass the limit.
    public func reserve(_ bytes: Int) -> Reservation? {
        var current = self.used.load(ordering: .relaxed)
        while true {
            guard current + bytes <= self.limit else { return nil }
            let (exchanged, original) = self.used.compareExchange(
                expected: current,
                desired: current + bytes,
                ordering: .relaxed
            )
            if exchanged { return Reservation(budget: self, bytes: bytes) }
            current = original
        }
    }

    /// Bytes held for one frame, given back when it goes.
    public final class Reservation: Sendable {
        let budget: BufferBudget
        let bytes: Int

        init(budget: BufferBudget, bytes: Int) {
            self.budget = budget
            self.bytes = bytes
        }

        deinit {
            self.budget.used.subtract(self.bytes, ordering: .relaxed)
        }
    }
}

/// Holds each whole frame against the server's `BufferBudget` from the moment it is decoded
/// until its answer is written: so frames a peer pipelines ahead of its answers (whole ones,
/// which the decoder no longer holds) count as much as frames still arriving. Before, 24
/// connections each sending 40 whole 1 MiB frames grew the server by 202–355 MiB under a
/// 32 MiB budget. Past the budget the connection fails with `busy`, as the decoder's does.
///
/// Between the frame decoder and the frame encoder: it sees each request body on its way in
/// and each answer body on its way out; the server answers every request once, in order.
public final class FrameBudgetHandler: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = ByteBuffer
    public typealias InboundOut = ByteBuffer
    public typealias OutboundIn = ByteBuffer
    public typealias OutboundOut = ByteBuffer

    private let budget: BufferBudget
    private let headerBytes: Int
    /// One per request not answered yet, oldest first.
    private var held: [BufferBudget.Reservation] = []
    private var failed = false

    /// A handler that holds frames of `framing` against `budget`.
    public init(budget: BufferBudget, framing: Framing) {
        self.budget = budget
        self.headerBytes = framing.style.headerBytes
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !self.failed else { return }
        let frame = Self.unwrapInboundIn(data)
        guard let reservation = self.budget.reserve(self.headerBytes + frame.readableBytes) else {
            self.failed = true
            self.held.removeAll()
            context.fireErrorCaught(
                LabError(
                    .busy,
                    "A frame of \(frame.readableBytes) bytes, with the requests before it not answered yet, would take the server's buffered frames past their budget of \(self.budget.limit) bytes"
                )
            )
            return
        }
        self.held.append(reservation)
        context.fireChannelRead(data)
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if !self.held.isEmpty { self.held.removeFirst() }
        context.write(data, promise: promise)
    }

    public func channelInactive(context: ChannelHandlerContext) {
        self.held.removeAll()
        context.fireChannelInactive()
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        self.held.removeAll()
    }
}
