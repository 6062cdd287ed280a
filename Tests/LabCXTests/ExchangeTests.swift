import LabBuiltIns
import LabCX
import LabCore
import LabFraming
import LabOpenSSL
import LabServer
import LabTestSupport
import LabWire
import Testing

/// cx/1 end to end, in process: every suite on every provider pair.
@Suite(.tier(.unit)) struct ExchangeTests {
    static let pairs: [String] = SuiteCase.all.flatMap { suite in
        Providers.names.flatMap { client in Providers.names.map { server in "\(suite) \(client) \(server)" } }
    }

    @Test("An exchange verifies, or the provider says who can", arguments: pairs)
    func exchange(_ label: String) throws {
        let parts = label.split(separator: " ").map(String.init)
        let suiteCase = SuiteCase.all.first { $0.description == parts[0] }!
        let suite = try suiteCase.make()
        let client = Providers.named(parts[1])
        let server = Providers.named(parts[2])
        let clientReason = suite.unsupportedReason(on: client)
        let serverReason = suite.unsupportedReason(on: server)
        if clientReason != nil || serverReason != nil {
            let error = try #require(throws: LabError.self) {
                try CXExchange.run(suite: suite, client: client, server: server, others: Providers.all)
            }
            let refusing = serverReason != nil ? server.name : client.name
            #expect(error.code == .unsupported)
            #expect(error.message.contains("The \(refusing) provider cannot do suite '\(suite.id)'"))
            let able = Providers.all.filter { suite.unsupportedReason(on: $0) == nil }.map(\.name)
            #expect(!able.isEmpty, "some provider can do every suite")
            for name in able {
                #expect(error.message.contains(name), "the error names \(name), which can: \(error.message)")
            }
            return
        }
        let result = try CXExchange.run(suite: suite, client: client, server: server, count: 2, others: Providers.all)
        #expect(result.outcomes.count == 2)
        for outcome in result.outcomes {
            #expect(outcome.plaintext == Payload.standard)
            #expect(outcome.client.steps == [.encode, .decode, .unwrap, .decrypt, .verify, .exchange])
            #expect(outcome.server.steps == [.decode, .keygenSession, .wrap, .encrypt, .sign, .encode])
        }
        #expect(result.setup.steps == [.keygenClient, .keygenServer])
    }

    @Test("The 2009 client's bare key selects classic and gets an answer without a suite echo")
    func legacyRequest() throws {
        let provider = try OpenSSLProvider()
        let suite = try ClassicSuite()
        var steps = StepTimings()
        var client = try CXClient(
            provider: provider,
            options: CXClientOptions(suite: suite, legacy: true),
            recorder: &steps
        )
        let server = try CXServer(provider: provider, options: CXServerOptions(suites: [suite]), recorder: &steps)
        let request = try client.makeRequest(recorder: &steps)
        #expect(request == client.encodedPublicKey, "the body is the PKCS#1 key itself")
        #expect(!request.starts(with: Array("bplist00".utf8)))
        let answer = server.respond(to: request, recorder: &steps)
        #expect(answer.error == nil)
        guard case .response(let response) = try CXReply(decoding: answer.body) else {
            Issue.record("expected a response")
            return
        }
        #expect(response.suite == nil)
        #expect(try client.open(answer.body, recorder: &steps) == Payload.standard)
    }

    @Test("u64le framing carries the same exchange", arguments: ["openssl", "swift-crypto"])
    func u64leFraming(_ name: String) throws {
        let result = try CXExchange.run(
            suite: X25519Suite(),
            client: Providers.named(name),
            server: Providers.named(name),
            framing: Framing(style: .u64le)
        )
        #expect(result.outcomes.map(\.plaintext) == [Payload.standard])
    }

    @Test("crypto7 follows the padding rule", arguments: [(427, true), (432, false), (1, true), (16, false)])
    func paddingFlag(_ size: Int, _ padded: Bool) throws {
        let provider = try OpenSSLProvider()
        for suite in [try ClassicSuite() as any Suite, X25519Suite()] {
            var steps = StepTimings()
            let payload = Payload.bytes(size)
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
            let body = server.respond(to: try client.makeRequest(recorder: &steps), recorder: &steps).body
            guard case .response(let response) = try CXReply(decoding: body) else {
                Issue.record("expected a response")
                return
            }
            if suite.id == ClassicSuite.id {
                #expect(response.padded == padded)
                #expect(response.message.count == (padded ? (size / 16 + 1) * 16 : size))
                #expect(response.nonce == nil)
            } else {
                #expect(response.padded == false)
                #expect(response.message.count == size + 16)
                #expect(response.nonce?.count == 12)
            }
            #expect(try client.open(body, recorder: &steps) == payload)
        }
    }

    @Test("The default classic response is 432 bytes of cryptoM with crypto7 = 1")
    func classicFidelity() throws {
        let provider = try OpenSSLProvider()
        var steps = StepTimings()
        let suite = try ClassicSuite()
        var client = try CXClient(provider: provider, options: CXClientOptions(suite: suite), recorder: &steps)
        let server = try CXServer(provider: provider, options: CXServerOptions(suites: [suite]), recorder: &steps)
        #expect(Payload.standard.count == 427)
        let body = server.respond(to: try client.makeRequest(recorder: &steps), recorder: &steps).body
        guard case .response(let response) = try CXReply(decoding: body) else {
            Issue.record("expected a response")
            return
        }
        #expect(response.message.count == 432)
        #expect(response.padded)
        #expect(response.wrappedKey.count == 64, "512-bit RSA")
        #expect(response.signature.count == 64)
        // The zero IV: CBC's first block is AES(key, P1 ⊕ 0), so decrypting with the session key and a zero IV gives P1.
        let sessionKey = try provider.rsaDecrypt(response.wrappedKey, with: client.privateKey, padding: .pkcs1v15)
        let first = try provider.aesCBCDecrypt(
            Array(response.message.prefix(16)),
            key: sessionKey,
            iv: [UInt8](repeating: 0, count: 16),
            padding: false
        )
        #expect(first == Array(Payload.standard.prefix(16)))
    }

    @Test("Per-exchange key lifetimes make fresh keys on both sides")
    func freshKeys() throws {
        let provider = try OpenSSLProvider()
        var steps = StepTimings()
        let suite = X25519Suite()
        var client = try CXClient(
            provider: provider,
            options: CXClientOptions(suite: suite, keyLifetime: .perExchange),
            recorder: &steps
        )
        let server = try CXServer(
            provider: provider,
            options: CXServerOptions(suites: [suite], keyLifetime: .perExchange),
            recorder: &steps
        )
        var clientKeys = Set<[UInt8]>()
        var serverKeys = Set<[UInt8]>()
        for _ in 0..<3 {
            var run = StepTimings()
            let body = server.respond(to: try client.makeRequest(recorder: &run), recorder: &run).body
            #expect(try client.open(body, recorder: &run) == Payload.standard)
            clientKeys.insert(client.encodedPublicKey)
            if case .response(let response) = try CXReply(decoding: body) { serverKeys.insert(response.serverKey) }
            #expect(run.steps.contains(.keygenServer))
        }
        #expect(clientKeys.count == 3)
        #expect(serverKeys.count == 3)
    }
}
