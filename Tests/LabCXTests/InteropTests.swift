import LabBuiltIns
import LabCX
import LabCore
import LabFraming
import LabServer
import LabTestSupport
import LabWire
import Testing

/// The lab against an independent implementation (Python's `cryptography` + `plistlib`,
/// written from docs/protocol.md alone): each side opens what the other produced.
@Suite(.tier(.unit)) struct InteropTests {
    struct Case: Sendable, CustomStringConvertible {
        var suite: SuiteCase
        var provider: String
        var framing: FramingStyle = .u32be
        var legacy = false
        var payloadBytes: Int? = nil

        var description: String {
            var text = "\(self.suite) on \(self.provider)"
            if self.framing != .u32be { text += " \(self.framing.rawValue)" }
            if self.legacy { text += " legacy" }
            if let bytes = self.payloadBytes { text += " payload \(bytes)" }
            return text
        }

        var payload: [UInt8] { self.payloadBytes.map(Payload.bytes) ?? Payload.standard }
        var framingValue: Framing { Framing(style: self.framing) }

        var peerOptions: [String] {
            var options = ["--framing", self.framing.rawValue]
            if let bytes = self.payloadBytes { options += ["--payload-bytes", "\(bytes)"] }
            return options
        }
    }

    static let cases: [Case] = {
        var cases: [Case] = []
        for suite in SuiteCase.all {
            for provider in Providers.names {
                guard let made = try? suite.make(), made.unsupportedReason(on: Providers.named(provider)) == nil else {
                    continue
                }
                cases.append(Case(suite: suite, provider: provider))
            }
        }
        cases.append(Case(suite: SuiteCase("classic", rsaBits: 512), provider: "openssl", legacy: true))
        cases.append(Case(suite: SuiteCase("classic", rsaBits: 512), provider: "openssl", payloadBytes: 432))
        cases.append(Case(suite: SuiteCase("x25519"), provider: "swift-crypto", framing: .u64le, payloadBytes: 1))
        cases.append(Case(suite: SuiteCase("pq"), provider: "swift-crypto", framing: .u64le))
        return cases
    }()

    @Test("The Python client opens the lab server's response", arguments: cases)
    func labServesPython(_ testCase: Case) async throws {
        let peer = try PythonPeer()
        defer { peer.cleanUp() }
        var request = [
            "request", "--suite", testCase.suite.id, "--key-out", peer.path("client.key"), "--out",
            peer.path("request.frame"),
        ]
        if let bits = testCase.suite.rsaBits { request += ["--rsa-bits", "\(bits)"] }
        if testCase.legacy { request.append("--legacy") }
        let made = try await peer.run(request + ["--framing", testCase.framing.rawValue])
        try #require(made.status == 0, "python request: \(made.output) \(made.errors)")

        let response = try Self.serve(testCase, requestFrame: try peer.read("request.frame"))
        try peer.write("response.frame", response)

        var open = [
            "open", "--suite", testCase.suite.id, "--key", peer.path("client.key"), "--request",
            peer.path("request.frame"),
        ]
        open += ["--in", peer.path("response.frame")] + testCase.peerOptions
        if testCase.legacy { open.append("--legacy") }
        let opened = try await peer.run(open)
        #expect(opened.status == 0, "python open: \(opened.output) \(opened.errors)")
        #expect(opened.json["plaintext_hex"] == testCase.payload.hexString)
    }

    @Test("The lab client opens the Python server's response", arguments: cases)
    func pythonServesLab(_ testCase: Case) async throws {
        let peer = try PythonPeer()
        defer { peer.cleanUp() }
        let plaintext = try await Self.ask(testCase) { requestFrame in
            try peer.write("request.frame", requestFrame)
            var respond =
                ["respond", "--in", peer.path("request.frame"), "--out", peer.path("response.frame")]
                + testCase.peerOptions
            if let bits = testCase.suite.rsaBits { respond += ["--rsa-bits", "\(bits)"] }
            let answered = try await peer.run(respond)
            try #require(answered.status == 0, "python respond: \(answered.output) \(answered.errors)")
            return try peer.read("response.frame")
        }
        #expect(plaintext == testCase.payload)
    }

    @Test(
        "The Python client refuses a tampered lab response at the right stage",
        arguments: [("cryptoM", "decrypt"), ("cryptoS", "verify"), ("cryptoK", "unwrap")]
    )
    func pythonCatchesTampering(_ field: String, _ stage: String) async throws {
        let testCase = Case(suite: SuiteCase("x25519"), provider: "openssl")
        let peer = try PythonPeer()
        defer { peer.cleanUp() }
        let made = try await peer.run([
            "request", "--suite", "x25519", "--key-out", peer.path("client.key"), "--out", peer.path("request.frame"),
        ])
        try #require(made.status == 0)
        let frame = try Self.serve(testCase, requestFrame: try peer.read("request.frame"))
        guard case .response(var response) = try CXReply(decoding: try FrameParser.singleFrame(frame)) else {
            Issue.record("expected a response")
            return
        }
        switch field {
        case "cryptoM": response.message[3] ^= 0x10
        case "cryptoS": response.signature[3] ^= 0x10
        default: response.wrappedKey[40] ^= 0x10
        }
        try peer.write("response.frame", try Framing.standard.frame(try response.encoded()))
        let opened = try await peer.run([
            "open", "--suite", "x25519", "--key", peer.path("client.key"), "--request", peer.path("request.frame"),
            "--in",
            peer.path("response.frame"),
        ])
        #expect(opened.status == 1, "the independent client must refuse it too: \(opened.output)")
        #expect(opened.json["stage"] == stage, "\(opened.output)")
    }

    // MARK: - The lab's side

    /// The lab's server answers one request frame with one response frame.
    static func serve(_ testCase: Case, requestFrame: [UInt8]) throws -> [UInt8] {
        try self.serve(testCase, Providers.named(testCase.provider), requestFrame)
    }

    private static func serve<P: CryptoProvider>(
        _ testCase: Case,
        _ provider: P,
        _ requestFrame: [UInt8]
    ) throws -> [UInt8] {
        var steps = NoStepRecorder()
        let server = try CXServer(
            provider: provider,
            options: CXServerOptions(suites: [try testCase.suite.make()], payload: testCase.payload),
            recorder: &steps
        )
        let body = try FrameParser.singleFrame(requestFrame, framing: testCase.framingValue)
        let answer = server.respond(to: body, recorder: &steps)
        #expect(answer.error == nil, "lab server: \(answer.error.map { "\($0)" } ?? "")")
        return try testCase.framingValue.frame(answer.body)
    }

    /// The lab's client sends one request frame through `transport` and opens the answer.
    static func ask(_ testCase: Case, _ transport: ([UInt8]) async throws -> [UInt8]) async throws -> [UInt8] {
        try await self.ask(testCase, Providers.named(testCase.provider), transport)
    }

    private static func ask<P: CryptoProvider>(
        _ testCase: Case,
        _ provider: P,
        _ transport: ([UInt8]) async throws -> [UInt8]
    ) async throws -> [UInt8] {
        var steps = NoStepRecorder()
        let options = CXClientOptions(
            suite: try testCase.suite.make(),
            legacy: testCase.legacy,
            expectedPayload: testCase.payload
        )
        var client = try CXClient(provider: provider, options: options, recorder: &steps)
        let requestFrame = try testCase.framingValue.frame(try client.makeRequest(recorder: &steps))
        let responseFrame = try await transport(requestFrame)
        return try client.open(
            try FrameParser.singleFrame(responseFrame, framing: testCase.framingValue),
            recorder: &steps
        )
    }
}
