import LabCore
import Testing

struct CoreTests {
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
