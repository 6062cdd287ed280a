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
        let chunk = 1 + Int(input[0] >> 1)
        let stream = Array(input[2...])

        var parser = FrameParser(framing: framing)
        var decoder = FrameDecoder(framing: framing)
        var buffer = ByteBufferAllocator().buffer(capacity: 0)
        var parsed: [[UInt8]] = []
        var decoded: [[UInt8]] = []
        var parserError: LabError.Code? = nil
        var decoderError: LabError.Code? = nil

        var offset = 0
        while offset < stream.count, parserError == nil || decoderError == nil {
            let piece = stream[offset..<min(stream.count, offset + chunk)]
            offset += piece.count
            if parserError == nil {
                parser.append(piece)
                do {
                    while let frame = try parser.nextFrame() { parsed.append(frame) }
                } catch {
                    parserError = try Self.code(error)
                }
            }
            if decoderError == nil {
                buffer.writeBytes(piece)
                do {
                    while let frame = try decoder.decode(buffer: &buffer) {
                        decoded.append(Array(frame.readableBytesView))
                    }
                } catch {
                    decoderError = try Self.code(error)
                }
            }
        }
        if decoderError == nil {
            do {
                while let frame = try decoder.decodeLast(buffer: &buffer, seenEOF: true) {
                    decoded.append(Array(frame.readableBytesView))
                }
            } catch {
                decoderError = try Self.code(error)
            }
        }
        if parserError == nil, parser.bufferedBytes > 0 { parserError = .truncatedFrame }

        try expect(
            parsed == decoded,
            "FrameParser cut \(parsed.count) frames, FrameDecoder \(decoded.count) (or different bytes)"
        )
        try expect(
            parserError == decoderError,
            "FrameParser ended with \(String(describing: parserError)), FrameDecoder with \(String(describing: decoderError))"
        )
        for frame in parsed {
            try expect(
                (1...framing.maxFrameBytes).contains(frame.count),
                "a frame of \(frame.count) bytes was returned"
            )
        }
        var again: [UInt8] = []
        for frame in parsed { try framing.append(frame, to: &again) }
        try expect(
            stream.starts(with: again),
            "the frames, framed again, are not the first \(again.count) bytes of the stream"
        )
        if parserError == nil {
            try expect(
                again.count == stream.count,
                "the whole stream was accepted but \(again.count) of \(stream.count) bytes came out"
            )
        }
    }

    /// The code of an error the framing may throw; anything else breaks the contract.
    private static func code(_ error: any Error) throws -> LabError.Code {
        guard let error = error as? LabError, [.emptyFrame, .frameTooLarge, .truncatedFrame].contains(error.code) else {
            throw FuzzFailure("framing threw an unexpected error: \(error)")
        }
        return error.code
    }
}
