import Foundation
import LabBuiltIns
import LabCX
import LabCore
import LabOpenSSL
import LabSwiftCrypto
import LabTestSupport
import LabWire
import Synchronization
import Testing

/// docs/protocol.md §2.4: for `classic` and `rsa-modern` the server's key is "RSA, same encoding
/// and size" as the client's, whatever size the server was set up with.
@Suite(.tier(.unit)) struct ServerKeySizeTests {
    /// A server set up for one size, and clients of another, on a pair of providers.
    struct Case: Sendable, CustomStringConvertible {
        var suite: String
        var configured: Int
        var client: Int
        var serverProvider: String
        var clientProvider: String

        var description: String {
            "\(suite)@\(configured) server on \(serverProvider), \(client)-bit client on \(clientProvider)"
        }
    }

    static let cases: [Case] = [
        Case(suite: "classic", configured: 512, client: 1024, serverProvider: "openssl", clientProvider: "openssl"),
        Case(suite: "classic", configured: 512, client: 2048, serverProvider: "openssl", clientProvider: "openssl"),
        Case(
            suite: "classic",
            configured: 512,
            client: 1024,
            serverProvider: "openssl",
            clientProvider: "swift-crypto"
        ),
        Case(
            suite: "classic",
            configured: 1024,
            client: 2048,
            serverProvider: "swift-crypto",
            clientProvider: "swift-crypto"
        ),
        Case(suite: "classic", configured: 2048, client: 512, serverProvider: "openssl", clientProvider: "openssl"),
        Case(
            suite: "rsa-modern",
            configured: 2048,
            client: 3072,
            serverProvider: "openssl",
            clientProvider: "openssl"
        ),
        Case(
            suite: "rsa-modern",
            configured: 2048,
            client: 3072,
            serverProvider: "swift-crypto",
            clientProvider: "openssl"
        ),
    ]

    static func suite(_ id: String, bits: Int) throws -> any Suite {
        try BuiltInPlugins.suites.make(id, options: SuiteOptions(rsaBits: bits))
    }

    static func response(_ body: [UInt8]) throws -> CXResponse {
        switch try CXReply(decoding: body) {
        case .response(let response): return response
        case .error(let error): throw LabError(.serverError, "\(error.code): \(error.message)")
        }
    }

    /// The modulus size of an encoded RSA public key, as OpenSSL reads it.
    static func bits(_ encoded: [UInt8]) throws -> Int? {
        let openssl = try OpenSSLProvider()
        return openssl.rsaBits(of: try openssl.decodePublicKey(encoded, type: .rsa(.signature)))
    }

    static func count(_ step: Step, in timings: StepTimings) -> Int {
        timings.entries.filter { $0.step == step }.count
    }

    @Test("A per-run server answers with a key of the client's size, made once and kept", arguments: cases)
    func perRun(_ test: Case) throws {
        try Self.perRun(
            test,
            server: Providers.named(test.serverProvider),
            client: Providers.named(test.clientProvider)
        )
    }

    static func perRun<S: CryptoProvider, C: CryptoProvider>(_ test: Case, server provider: S, client: C) throws {
        var setup = StepTimings()
        let server = try CXServer(
            provider: provider,
            options: CXServerOptions(suites: [try Self.suite(test.suite, bits: test.configured)]),
            recorder: &setup
        )
        #expect(Self.count(.keygenServer, in: setup) == 1, "the configured size is made at start")

        let clientSuite = try Self.suite(test.suite, bits: test.client)
        var lazyKey: [UInt8]? = nil
        for index in 0..<2 {
            // A new client each time: the second finds the key the first one's request made.
            var clientSteps = StepTimings()
            var cx = try CXClient(
                provider: client,
                options: CXClientOptions(suite: clientSuite),
                recorder: &clientSteps
            )
            var steps = StepTimings()
            let answer = server.respond(to: try cx.makeRequest(recorder: &clientSteps), recorder: &steps)
            #expect(answer.error == nil, "\(answer.error?.message ?? "")")
            let response = try Self.response(answer.body)
            #expect(try Self.bits(response.serverKey) == test.client)
            #expect(try cx.open(answer.body, recorder: &clientSteps) == Payload.standard)
            #expect(
                Self.count(.keygenServer, in: steps) == (index == 0 ? 1 : 0),
                "exchange \(index): the \(test.client)-bit key is made on first use only"
            )
            if let lazyKey {
                #expect(response.serverKey == lazyKey, "the key made on first use is kept for the run")
            }
            lazyKey = response.serverKey
        }

        // A client of the configured size still gets the key made at start.
        guard client.capabilities.rsaBits?.contains(test.configured) == true else { return }
        var clientSteps = StepTimings()
        var cx = try CXClient(
            provider: client,
            options: CXClientOptions(suite: try Self.suite(test.suite, bits: test.configured)),
            recorder: &clientSteps
        )
        var steps = StepTimings()
        let answer = server.respond(to: try cx.makeRequest(recorder: &clientSteps), recorder: &steps)
        let response = try Self.response(answer.body)
        #expect(try Self.bits(response.serverKey) == test.configured)
        #expect(response.serverKey != lazyKey)
        #expect(Self.count(.keygenServer, in: steps) == 0)
        #expect(try cx.open(answer.body, recorder: &clientSteps) == Payload.standard)
    }

    @Test("Concurrent first requests for one size make one key", arguments: ["openssl", "swift-crypto"])
    func concurrentFirstUse(_ name: String) throws {
        try Self.concurrentFirstUse(Providers.named(name))
    }

    static func concurrentFirstUse<P: CryptoProvider>(_ provider: P) throws {
        var setup = StepTimings()
        let server = try CXServer(
            provider: provider,
            options: CXServerOptions(suites: [try RSAModernSuite(rsaBits: 2048)]),
            recorder: &setup
        )
        var clientSteps = StepTimings()
        var client = try CXClient(
            provider: provider,
            options: CXClientOptions(suite: try RSAModernSuite(rsaBits: 3072)),
            recorder: &clientSteps
        )
        let request = try client.makeRequest(recorder: &clientSteps)
        let results = Mutex<[(keygens: Int, key: [UInt8]?)]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            var steps = StepTimings()
            let answer = server.respond(to: request, recorder: &steps)
            let key = try? Self.response(answer.body).serverKey
            results.withLock { $0.append((Self.count(.keygenServer, in: steps), key)) }
        }
        let all = results.withLock { $0 }
        #expect(all.count == 8)
        #expect(all.allSatisfy { $0.key != nil })
        #expect(Set(all.compactMap(\.key)).count == 1, "every connection got the same 3072-bit key")
        #expect(all.map(\.keygens).reduce(0, +) == 1, "keygen.server recorded once, by the request that made it")
        #expect(try Self.bits(all[0].key ?? []) == 3072)
    }

    @Test("A per-exchange server makes a key of the client's size every time", arguments: ["openssl", "swift-crypto"])
    func perExchange(_ name: String) throws {
        try Self.perExchange(Providers.named(name))
    }

    static func perExchange<P: CryptoProvider>(_ provider: P) throws {
        let configured = provider.capabilities.rsaBits?.contains(512) == true ? 512 : 1024
        var setup = StepTimings()
        let server = try CXServer(
            provider: provider,
            options: CXServerOptions(suites: [try ClassicSuite(rsaBits: configured)], keyLifetime: .perExchange),
            recorder: &setup
        )
        #expect(setup.entries.isEmpty)
        var clientSteps = StepTimings()
        var client = try CXClient(
            provider: provider,
            options: CXClientOptions(suite: try ClassicSuite(rsaBits: 2048)),
            recorder: &clientSteps
        )
        var keys = Set<[UInt8]>()
        for _ in 0..<2 {
            var steps = StepTimings()
            let answer = server.respond(to: try client.makeRequest(recorder: &clientSteps), recorder: &steps)
            let response = try Self.response(answer.body)
            #expect(try Self.bits(response.serverKey) == 2048)
            #expect(Self.count(.keygenServer, in: steps) == 1)
            #expect(try client.open(answer.body, recorder: &clientSteps) == Payload.standard)
            keys.insert(response.serverKey)
        }
        #expect(keys.count == 2)
    }

    @Test("A client key of a size the suite does not allow is refused before any key generation")
    func disallowedSize() throws {
        let openssl = try OpenSSLProvider()
        var setup = StepTimings()
        let server = try CXServer(
            provider: openssl,
            options: CXServerOptions(suites: [try ClassicSuite(), try RSAModernSuite()]),
            recorder: &setup
        )
        for (suite, bits) in [("rsa-modern", 1024), ("classic", 768), ("classic", 3072)] {
            let key = try openssl.encode(try openssl.generatePrivateKey(.rsa(bits: bits, use: .encryption)))
            var steps = StepTimings()
            let body = try CXRequest(suite: suite, clientKey: key, isLegacy: false).encoded()
            let answer = server.respond(to: body, recorder: &steps)
            #expect(answer.error?.code == .badPublicKey, "\(suite) \(bits)")
            #expect(answer.error?.message.contains("has \(bits)") == true, "\(answer.error?.message ?? "")")
            #expect(!steps.steps.contains(.keygenServer))
        }
    }

    @Test("A client refuses a server key of another size than its own", arguments: ["openssl", "swift-crypto"])
    func clientRefusesOtherSize(_ name: String) throws {
        try Self.clientRefusesOtherSize(Providers.named(name))
    }

    static func clientRefusesOtherSize<P: CryptoProvider>(_ provider: P) throws {
        let openssl = try OpenSSLProvider()
        var steps = StepTimings()
        let server = try CXServer(
            provider: openssl,
            options: CXServerOptions(suites: [try ClassicSuite(rsaBits: 1024)]),
            recorder: &steps
        )
        var client = try CXClient(
            provider: provider,
            options: CXClientOptions(suite: try ClassicSuite(rsaBits: 1024)),
            recorder: &steps
        )
        let body = server.respond(to: try client.makeRequest(recorder: &steps), recorder: &steps).body
        #expect(try client.open(body, recorder: &steps) == Payload.standard)
        for bits in [512, 2048] {
            // Everything else about the response holds: only the server key's size is wrong,
            // and its signature verifies with it.
            var response = try Self.response(body)
            let other = try openssl.generatePrivateKey(.rsa(bits: bits, use: .signature))
            response.serverKey = try openssl.encode(try openssl.publicKey(for: other))
            response.signature = try openssl.sign(Payload.standard, with: other, scheme: .rsaPKCS1v15(.sha1))
            let error = try #require(throws: LabError.self) {
                try client.open(try response.encoded(), recorder: &steps)
            }
            #expect(error.code == .badPublicKey)
            #expect(error.message.contains("\(bits) bits") && error.message.contains("1024"), "\(error.message)")
        }
    }

    @Test("A well-formed 512-bit key is unsupported on swift-crypto, not a bad key")
    func swiftCrypto512() throws {
        let openssl = try OpenSSLProvider()
        var setup = StepTimings()
        let server = try CXServer(
            provider: SwiftCryptoProvider(),
            options: CXServerOptions(suites: [try ClassicSuite(rsaBits: 1024)]),
            recorder: &setup
        )
        let key = try openssl.encode(try openssl.generatePrivateKey(.rsa(bits: 512, use: .encryption)))
        for body in [try CXRequest(suite: "classic", clientKey: key, isLegacy: false).encoded(), key] {
            var steps = StepTimings()
            let answer = server.respond(to: body, recorder: &steps)
            #expect(answer.error?.code == .unsupported)
            let message = answer.error?.message ?? ""
            #expect(message.contains("swift-crypto") && message.contains("RSA-512"), "\(message)")
            #expect(!steps.steps.contains(.keygenServer))
        }
        // Not DER at all, or DER of something else, is still a bad key.
        var truncated = key
        truncated.removeLast()
        for bad in [truncated, key + [0], [UInt8](repeating: 0x30, count: 74)] {
            var steps = StepTimings()
            let body = try CXRequest(suite: "classic", clientKey: bad, isLegacy: false).encoded()
            #expect(server.respond(to: body, recorder: &steps).error?.code == .badPublicKey)
        }
    }

    @Test("The provider-free DER reader sizes RSA keys as the providers do")
    func modulusBits() throws {
        let openssl = try OpenSSLProvider()
        for bits in [512, 1000, 1024, 2048, 3072] {
            let key = try openssl.publicKey(for: try openssl.generatePrivateKey(.rsa(bits: bits, use: .encryption)))
            let encoded = try openssl.encode(key)
            #expect(RSAKeys.modulusBits(encoded) == bits)
            #expect(openssl.rsaBits(of: key) == bits)
            if bits >= 1024 {
                let swift = SwiftCryptoProvider()
                #expect(swift.rsaBits(of: try swift.decodePublicKey(encoded, type: .rsa(.encryption))) == bits)
            }
            #expect(RSAKeys.modulusBits(encoded + [0]) == nil, "trailing bytes")
            #expect(RSAKeys.modulusBits(Array(encoded.dropLast())) == nil, "truncated")
            let algorithm: [UInt8] = [
                0x30, 0x0D, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01, 0x05, 0x00,
            ]
            let spki = DER.element(0x30, algorithm + DER.element(0x03, [0x00] + encoded))
            #expect(RSAKeys.modulusBits(spki) == nil, "SubjectPublicKeyInfo is not PKCS#1")
        }
        #expect(RSAKeys.modulusBits([]) == nil)
        #expect(RSAKeys.modulusBits(DER.element(0x30, DER.element(0x02, [0x80]) + DER.element(0x02, [3]))) == nil)
        #expect(RSAKeys.modulusBits(DER.element(0x30, DER.element(0x02, [0, 0]) + DER.element(0x02, [3]))) == nil)
        #expect(RSAKeys.modulusBits(DER.element(0x30, DER.element(0x02, [0, 0x81]) + DER.element(0x02, [3]))) == 8)
    }
}
