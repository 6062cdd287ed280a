import LabBuiltIns
import LabCX
import LabCore
import LabFraming
import LabServer
import LabTestSupport
import LabWire
import Testing

/// A response altered in flight is refused with a specific error, never a crash or a wrong plaintext.
@Suite(.tier(.unit)) struct TamperTests {
    /// Each suite on each provider that can do it (client and server on the same one).
    static let cases: [String] = SuiteCase.all.filter { $0.rsaBits != 2048 || $0.id != "classic" }.flatMap { suite in
        Providers.names.compactMap { name in
            (try? suite.make()).flatMap {
                $0.unsupportedReason(on: Providers.named(name)) == nil ? "\(suite) \(name)" : nil
            }
        }
    }

    enum Field: String, CaseIterable, Sendable {
        case message, signature, wrappedKey
    }

    @Test("A flipped bit is caught", arguments: cases, Field.allCases)
    func flippedBit(_ label: String, _ field: Field) throws {
        let parts = label.split(separator: " ").map(String.init)
        let suite = try SuiteCase.all.first { $0.description == parts[0] }!.make()
        try Self.withExchange(suite, Providers.named(parts[1])) { response, open in
            let original: [UInt8] =
                switch field {
                case .message: response.message
                case .signature: response.signature
                case .wrappedKey: response.wrappedKey
                }
            // First, middle and last byte, low and high bit: every position must be caught.
            // In classic's CBC a flip in the last block scrambles it, so whether the padding
            // still checks is chance; the second-to-last block's last byte flips the final
            // padding byte exactly, so that is the "last" byte tried there.
            let last = field == .message && suite.id == ClassicSuite.id ? original.count - 17 : original.count - 1
            for (index, bit) in [(0, 0), (original.count / 2, 7), (last, 0), (last, 7)] {
                var tampered = response
                var bytes = original
                bytes[index] ^= 1 << bit
                switch field {
                case .message: tampered.message = bytes
                case .signature: tampered.signature = bytes
                case .wrappedKey: tampered.wrappedKey = bytes
                }
                let error = try #require(throws: CXVerdict.self, "byte \(index) bit \(bit)") { try open(tampered) }
                #expect(
                    error.code == Self.expectedCode(field, suite: suite, byte: index, of: original.count),
                    "byte \(index) bit \(bit): \(error)"
                )
            }
        }
    }

    /// What a flipped bit must produce. AEAD tags catch any change to `cryptoM`; in `classic`
    /// (CBC, no MAC) a change garbles the plaintext, so the signature catches it — unless it
    /// flips a padding byte of the last block, which breaks the PKCS#7 padding first.
    static func expectedCode(_ field: Field, suite: any Suite, byte: Int, of count: Int) -> CXVerdict.Code {
        switch field {
        case .signature: return .signatureInvalid
        case .wrappedKey: return .unwrapFailed
        case .message:
            guard suite.id == ClassicSuite.id else { return .decryptFailed }
            // A byte of the second-to-last block flips the same byte of the last block; the
            // default 427-byte payload leaves 5 padding bytes at the end of the last block.
            let paddingBytes = 432 - Payload.standard.count
            return byte >= count - 16 - paddingBytes && byte < count - 16 ? .paddingInvalid : .signatureInvalid
        }
    }

    @Test("A wrong crypto7 is caught", arguments: cases)
    func wrongPaddingFlag(_ label: String) throws {
        let parts = label.split(separator: " ").map(String.init)
        let suite = try SuiteCase.all.first { $0.description == parts[0] }!.make()
        try Self.withExchange(suite, Providers.named(parts[1])) { response, open in
            var tampered = response
            tampered.padded.toggle()
            let error = try #require(throws: CXVerdict.self) { try open(tampered) }
            if suite.id == ClassicSuite.id {
                // 427 bytes were padded to 432; read unpadded, the 5 padding bytes stay and the signature fails.
                #expect(error.code == .signatureInvalid, "\(error)")
            } else {
                #expect(error.code == .paddingInvalid, "\(error)")
            }
        }
        // With a 432-byte payload classic does not pad; claiming padding must fail the unpadding.
        if suite.id == ClassicSuite.id {
            try Self.withExchange(suite, Providers.named(parts[1]), payload: Payload.bytes(432)) { response, open in
                var tampered = response
                #expect(!tampered.padded)
                tampered.padded = true
                let error = try #require(throws: CXVerdict.self) { try open(tampered) }
                #expect(error.code == .paddingInvalid, "\(error)")
            }
        }
    }

    @Test("A truncated or mistyped property list is a malformed message", arguments: cases)
    func malformedBodies(_ label: String) throws {
        let parts = label.split(separator: " ").map(String.init)
        let suite = try SuiteCase.all.first { $0.description == parts[0] }!.make()
        try Self.withExchange(suite, Providers.named(parts[1])) { response, open in
            let body = try response.encoded()
            for cut in [1, 10, body.count / 2] {
                let error = try #require(throws: LabError.self) { try Self.openBody(Array(body.dropLast(cut)), open) }
                #expect(error.code == .malformedMessage, "cut \(cut): \(error)")
            }
            // crypto7 as a boolean, as a careless encoder would write it.
            var plist = PropertyListDictionary()
            plist.set(CXKey.suite, string: suite.id)
            plist.set(CXKey.publicKey, data: response.serverKey)
            plist.set(CXKey.message, data: response.message)
            plist.set(CXKey.padding, bool: response.padded)
            plist.set(CXKey.signature, data: response.signature)
            plist.set(CXKey.wrappedKey, data: response.wrappedKey)
            if let nonce = response.nonce { plist.set(CXKey.nonce, data: nonce) }
            let error = try #require(throws: LabError.self) { try Self.openBody(try plist.encoded(), open) }
            #expect(error.code == .malformedMessage)
            #expect(error.message.contains("crypto7") && error.message.contains("boolean"), "\(error)")
        }
    }

    @Test("A body over the frame limit is refused before it is read", arguments: cases)
    func oversizedFrame(_ label: String) throws {
        let parts = label.split(separator: " ").map(String.init)
        let suite = try SuiteCase.all.first { $0.description == parts[0] }!.make()
        let provider = Providers.named(parts[1])
        // Every cx/1 response is bigger than 64 bytes; every request but the legacy one too.
        let framing = Framing(maxFrameBytes: 64)
        let error = try #require(throws: LabError.self) {
            try CXExchange.run(suite: suite, client: provider, server: provider, framing: framing)
        }
        #expect(error.code == .frameTooLarge, "\(error)")
        #expect(error.message.contains("over the limit of 64 bytes"))
    }

    // MARK: - Helpers

    typealias Opener = (CXResponse) throws -> [UInt8]

    /// Runs one honest exchange and hands the test its response and a way to open altered copies.
    static func withExchange(
        _ suite: any Suite,
        _ provider: any CryptoProvider,
        payload: [UInt8] = Payload.standard,
        _ body: (CXResponse, Opener) throws -> Void
    ) throws {
        try self.open(suite, provider, payload, body)
    }

    private static func open<P: CryptoProvider>(
        _ suite: any Suite,
        _ provider: P,
        _ payload: [UInt8],
        _ body: (CXResponse, Opener) throws -> Void
    ) throws {
        var steps = NoStepRecorder()
        var client = try CXClient(
            provider: provider,
            options: CXClientOptions(suite: suite, expectedPayload: payload),
            recorder: &steps
        )
        let server = try CXServer(
            provider: provider,
            options: CXServerOptions(suites: [suite], payload: payload),
            recorder: &steps
        )
        let answer = server.respond(to: try client.makeRequest(recorder: &steps), recorder: &steps)
        guard case .response(let response) = try CXReply(decoding: answer.body) else {
            Issue.record("the honest exchange failed: \(answer.error.map { "\($0)" } ?? "")")
            return
        }
        // The unaltered response opens: the failures below are the tampering's doing.
        #expect(try client.open(answer.body, recorder: &steps) == payload)
        try body(response) { altered in
            var steps = NoStepRecorder()
            return try client.open(try altered.encoded(), recorder: &steps)
        }
    }

    static func openBody(_ body: [UInt8], _ open: Opener) throws -> [UInt8] {
        // Decoding is where a malformed body must fail, before any crypto runs.
        _ = try CXReply(decoding: body)
        Issue.record("a malformed body decoded")
        return []
    }
}
