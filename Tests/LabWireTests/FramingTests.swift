import LabCore
import LabFraming
import LabTestSupport
import LabWire
import Testing

@Suite(.tier(.unit)) struct FramingTests {
    @Test("u32be writes a 4-byte big-endian length, u64le an 8-byte little-endian one")
    func headers() throws {
        let body: [UInt8] = Array(repeating: 0xAB, count: 0x0102)
        #expect(Array(try Framing(style: .u32be).frame(body).prefix(4)) == [0, 0, 1, 2])
        #expect(Array(try Framing(style: .u64le).frame(body).prefix(8)) == [2, 1, 0, 0, 0, 0, 0, 0])
        for style in FramingStyle.allCases {
            let framing = Framing(style: style)
            #expect(try FrameParser.singleFrame(try framing.frame(body), framing: framing) == body)
        }
    }

    @Test("Frames arriving a byte at a time, several per read, all come out", arguments: FramingStyle.allCases)
    func incremental(_ style: FramingStyle) throws {
        let framing = Framing(style: style)
        let bodies: [[UInt8]] = [[1], Array(repeating: 7, count: 300), Array(0...255), [42]]
        var stream: [UInt8] = []
        for body in bodies { try framing.append(body, to: &stream) }
        for chunkSize in [1, 3, 64, stream.count] {
            var parser = FrameParser(framing: framing)
            var received: [[UInt8]] = []
            var offset = 0
            while offset < stream.count {
                parser.append(stream[offset..<min(offset + chunkSize, stream.count)])
                offset += chunkSize
                while let frame = try parser.nextFrame() { received.append(frame) }
            }
            #expect(received == bodies, "chunks of \(chunkSize)")
            #expect(parser.bufferedBytes == 0)
        }
    }

    @Test("A zero length is refused as soon as the header is in", arguments: FramingStyle.allCases)
    func zeroLength(_ style: FramingStyle) throws {
        var parser = FrameParser(framing: Framing(style: style))
        parser.append([UInt8](repeating: 0, count: style.headerBytes))
        let error = try #require(throws: LabError.self) { try parser.nextFrame() }
        #expect(error.code == .emptyFrame)
    }

    @Test("An oversized length is refused from the header alone, before any body byte")
    func oversized() throws {
        let framing = Framing(style: .u32be, maxFrameBytes: 1000)
        var parser = FrameParser(framing: framing)
        parser.append([0, 0, 0x03, 0xE9])  // 1001
        let error = try #require(throws: LabError.self) { try parser.nextFrame() }
        #expect(error.code == .frameTooLarge)
        #expect(error.message.contains("1001") && error.message.contains("1000"))
        // Exactly the limit is fine.
        var fine = FrameParser(framing: framing)
        fine.append([0, 0, 0x03, 0xE8])
        #expect(try fine.nextFrame() == nil, "a 1000-byte frame waits for its body")
        // The default limit is the 2009 sample's 5 MiB; u64le lengths beyond Int are refused, not trapped on.
        #expect(Framing.standard.maxFrameBytes == 5_242_880)
        var huge = FrameParser(framing: Framing(style: .u64le))
        huge.append([UInt8](repeating: 0xFF, count: 8))
        #expect(throws: LabError.self) { try huge.nextFrame() }
        // And the writer refuses what the reader would.
        #expect(throws: LabError.self) { try framing.frame([UInt8](repeating: 0, count: 1001)) }
        #expect(throws: LabError.self) { try framing.frame([UInt8]()) }
    }

    @Test("A stream that ends inside a frame is truncated")
    func truncated() throws {
        let frame = try Framing.standard.frame([1, 2, 3, 4])
        let error = try #require(throws: LabError.self) { try FrameParser.singleFrame(frame.dropLast()) }
        #expect(error.code == .truncatedFrame)
    }
}
