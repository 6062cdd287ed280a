import LabCore
import LabTestSupport
import Testing

@Suite(.tier(.unit)) struct CoreTests {
    @Test("Hex round-trips and rejects non-hex")
    func hex() {
        let bytes: [UInt8] = [0x00, 0x7f, 0x80, 0xff, 0x0a]
        #expect(bytes.hexString == "007f80ff0a")
        #expect([UInt8](hex: "007F80FF0a") == bytes)
        #expect([UInt8](hex: "abc") == nil)
        #expect([UInt8](hex: "zz") == nil)
        #expect([UInt8](hex: "") == [])
    }

    @Test("Capabilities name the first missing primitive or the RSA range")
    func capabilities() {
        let capabilities = ProviderCapabilities(
            primitives: [.aesGCM, .rsaPSS],
            rsaBits: 1024...4096,
            notes: [.mlkem768: "no ML-KEM in this build"]
        )
        #expect(capabilities.missing([.aesGCM], rsaBits: 2048) == nil)
        #expect(capabilities.missing([.aesGCM, .mlkem768], rsaBits: nil) == "no ML-KEM in this build")
        #expect(capabilities.missing([.x25519], rsaBits: nil) == "no X25519")
        #expect(capabilities.missing([], rsaBits: 512) == "RSA keys of 1024 to 4096 bits only, not 512")
    }

    @Test("Step timings keep every measurement and total by step")
    func timings() {
        var timings = StepTimings()
        timings.record(.wrap, nanoseconds: 5)
        timings.record(.wrap, nanoseconds: 7)
        let value = timings.measure(.sign) { 42 }
        #expect(value == 42)
        #expect(timings.total(.wrap) == 12)
        #expect(timings.total(.verify) == nil)
        #expect(timings.steps == [.wrap, .sign])
    }

    @Test("LabError carries code, message, cause and location")
    func labError() {
        let error = LabError(.pinMismatch, "pinned A, got B", cause: UnderlyingError("handshake"))
        #expect(error.code == .pinMismatch)
        #expect(error.description == "pinMismatch: pinned A, got B (cause: handshake)")
        #expect(error.location.hasPrefix("LabCoreTests/CoreTests.swift:"))
    }
}

/// `SecureRandom`: one kernel call per buffer, and bytes that look random.
@Suite(.tier(.unit)) struct SecureRandomTests {
    @Test("SecureRandom gives the asked count, never the same twice, every byte value about equally often")
    func bytes() {
        #expect(SecureRandom.bytes(0).isEmpty)
        #expect(SecureRandom.bytes(1).count == 1)
        let first = SecureRandom.bytes(32)
        let second = SecureRandom.bytes(32)
        #expect(first.count == 32 && second.count == 32)
        #expect(first != second)
        // 256 KiB: χ² over the 256 byte values, 255 degrees of freedom. Random bytes give
        // about 255; above 400 has probability under 1e-8. A constant or a byte-per-call bug
        // that repeats a word would be far above it.
        let sample = SecureRandom.bytes(256 * 1024)
        var counts = [Int](repeating: 0, count: 256)
        for byte in sample { counts[Int(byte)] += 1 }
        let expected = Double(sample.count) / 256
        let chiSquare = counts.reduce(0.0) { $0 + (Double($1) - expected) * (Double($1) - expected) / expected }
        #expect(chiSquare < 400, "χ² = \(chiSquare)")
        // The last byte is written too (a short fill would leave zeros at the end).
        #expect(sample.suffix(64).contains { $0 != 0 })
    }
}
