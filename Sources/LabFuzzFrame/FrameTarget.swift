import LabCore
import LabFraming
import LabFuzzSupport
import LabWire
import NIOCore

/// Frames: the server's NIO `FrameDecoder` and LabWire's `FrameParser` (the clients' and
/// tools' parser) must cut any byte stream the same way.
///
/// Input: byte 0 picks the style (bit 0) and the chunk size the stream arrives in (bits 1–7,
/// 1–128 bytes); byte 1 the frame limit (1 + 16 × value bytes, so small limits are reached);
/// the rest is the stream. Properties: the same frames and the same error from both; every
/// frame within 1...limit; the frames, framed again, are exactly the bytes consumed; only a
/// bad length (zero, over the limit) is an error, and bytes left at the end a truncated frame.
public enum FrameTarget {
    /// One input from libFuzzer (`Fuzz/Targets/frame`), on libFuzzer's thread: no task, no
    /// allocation that outlives the input (libFuzzer takes one for a leak and runs LeakSanitizer).
    public static func fuzz(_ data: UnsafePointer<UInt8>?, _ count: Int) {
        fuzzInput("frame", data, count, Self.run)
    }

    /// Runs one input; throws `FuzzFailure` when a property does not hold.
    public static func run(_ input: [UInt8]) throws {
        guard input.count >= 2 else { return }
        let framing = Framing(
            style: input[0] & 1 == 0 ? .u32be : .u64le,
            maxFrameBytes: 1 + Int(input[1]) * 16
        )
        let stream = Array(input[2...])
        let (parsed, decoded) = try Self.cut(stream, framing: framing, chunk: 1 + Int(input[0] >> 1))
        try expect(
            parsed.frames == decoded.frames,
            "FrameParser cut \(parsed.frames.count) frames, FrameDecoder \(decoded.frames.count) (or different bytes)"
        )
        try expect(
            parsed.error == decoded.error,
            "FrameParser ended with \(String(describing: parsed.error)), FrameDecoder with \(String(describing: decoded.error))"
        )
        for frame in parsed.frames {
            try expect(
                (1...framing.maxFrameBytes).contains(frame.count),
                "a frame of \(frame.count) bytes was returned"
            )
        }
        var again: [UInt8] = []
        for frame in parsed.frames { try framing.append(frame, to: &again) }
        try expect(
            stream.starts(with: again),
            "the frames, framed again, are not the first \(again.count) bytes of the stream"
        )
        if parsed.error == nil {
            try expect(
                again.count == stream.count,
                "the whole stream was accepted but \(again.count) of \(stream.count) bytes came out"
            )
        }
    }

    /// What one side cut from a stream: its frames, and the error it stopped at.
    struct Cut {
        var frames: [[UInt8]] = []
        var error: LabError.Code? = nil
    }

    /// `stream` fed in pieces of `chunk` bytes to both: `FrameParser`, then `FrameDecoder`
    /// (with NIO's end-of-stream call at the end); each stops at its first error.
    static func cut(_ stream: [UInt8], framing: Framing, chunk: Int) throws -> (parser: Cut, decoder: Cut) {
        var parser = FrameParser(framing: framing)
        var decoder = FrameDecoder(framing: framing)
        var buffer = ByteBufferAllocator().buffer(capacity: 0)
        var parsed = Cut()
        var decoded = Cut()
        var offset = 0
        while offset < stream.count, parsed.error == nil || decoded.error == nil {
            let piece = stream[offset..<min(stream.count, offset + chunk)]
            offset += piece.count
            if parsed.error == nil {
                parser.append(piece)
                do {
                    while let frame = try parser.nextFrame() { parsed.frames.append(frame) }
                } catch {
                    parsed.error = try Self.code(error)
                }
            }
            if decoded.error == nil {
                buffer.writeBytes(piece)
                do {
                    while let frame = try decoder.decode(buffer: &buffer) {
                        decoded.frames.append(Array(frame.readableBytesView))
                    }
                } catch {
                    decoded.error = try Self.code(error)
                }
            }
        }
        if decoded.error == nil {
            do {
                while let frame = try decoder.decodeLast(buffer: &buffer, seenEOF: true) {
                    decoded.frames.append(Array(frame.readableBytesView))
                }
            } catch {
                decoded.error = try Self.code(error)
            }
        }
        if parsed.error == nil, parser.bufferedBytes > 0 { parsed.error = .truncatedFrame }
        return (parsed, decoded)
    }

    /// The code of an error the framing may throw; anything else breaks the contract.
    private static func code(_ error: any Error) throws -> LabError.Code {
        guard let error = error as? LabError, [.emptyFrame, .frameTooLarge, .truncatedFrame].contains(error.code) else {
            throw FuzzFailure("framing threw an unexpected error: \(error)")
        }
        return error.code
    }
}
