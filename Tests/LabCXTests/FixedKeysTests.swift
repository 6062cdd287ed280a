import Foundation
import LabBuiltIns
import LabCX
import LabCore
import LabOpenSSL
import LabSwiftCrypto
import LabTestSupport
import LabWire
import Testing

/// `"keys": "fixed"` and `"clientKeys": "fixed"`: the lab's published test keys, the same in
/// every run (for the counted gate).
@Suite(.tier(.unit)) struct FixedKeysTests {
    /// Every key with a fixed form, and its type as `cx_peer.py public-key` names it.
    static let specs: [(KeySpec, String)] = [
        (.rsa(bits: 512, use: .encryption), "rsa"), (.rsa(bits: 512, use: .signature), "rsa"),
        (.rsa(bits: 2048, use: .encryption), "rsa"), (.rsa(bits: 2048, use: .signature), "rsa"),
        (.x25519, "x25519"), (.ed25519, "ed25519"), (.mlkem768, "mlkem768"), (.mldsa65, "mldsa65"),
    ]

    /// The encoded public half of `spec`'s fixed key on `provider`; nil if the provider has
    /// no such key (swift-crypto and RSA-512, OpenSSL 3.0 and the ML algorithms).
    static func publicKey<P: CryptoProvider>(_ spec: KeySpec, on provider: P) throws -> [UInt8]? {
        if case .rsa(let bits, _) = spec, provider.capabilities.rsaBits?.contains(bits) != true { return nil }
        let key: P.PrivateKey
        do {
            key = try FixedKeys.key(spec, fixed: true, provider: provider)
        } catch let error as LabError where error.code == .unsupported {
            return nil
        }
        return try provider.encode(try provider.publicKey(for: key))
    }

    @Test("Each fixed key decodes, on every provider that has its type, to the public key Python derives")
    func keysMatchPython() async throws {
        let providers: [any CryptoProvider] = [SwiftCryptoProvider(), try OpenSSLProvider()]
        for (spec, type) in Self.specs {
            let python = try await PythonPeer.run([
                "public-key", "--type", type, "--private", FixedKeys.privateKey(spec).hexString,
            ])
            try #require(python.status == 0, "\(spec): \(python.errors)")
            let expected = try #require(python.string("public").flatMap { [UInt8](hex: $0) }, "\(python.output)")
            var decoded = 0
            for provider in providers {
                guard let key = try Self.publicKey(spec, on: provider) else { continue }
                #expect(key == expected, "\(spec) on \(provider.name)")
                decoded += 1
            }
            #expect(decoded >= 1, "no provider decodes the fixed \(spec) key")
        }
        // The four RSA keys are four keys.
        let rsa = Self.specs.prefix(4).map { FixedKeys.privateKey($0.0) }
        #expect(Set(rsa).count == 4)
    }

    @Test("An RSA size without a fixed key is refused, naming the sizes there are")
    func missingSize() throws {
        #expect(FixedKeys.missing(.rsa(bits: 2048, use: .signature)) == nil)
        let reason = try #require(FixedKeys.missing(.rsa(bits: 3072, use: .encryption)))
        #expect(reason.contains("RSA-3072") && reason.contains("RSA-512 and RSA-2048"), "\(reason)")
        let error = #expect(throws: LabError.self) {
            try FixedKeys.key(.rsa(bits: 3072, use: .encryption), fixed: true, provider: try OpenSSLProvider())
        }
        // `unsupported`, which a server answers a client of that size (ServerKeySizeTests).
        #expect(error?.code == .unsupported)
    }

    @Test("A server with fixed keys answers a client of an RSA size without one `unsupported`")
    func serverRefusesSizeWithoutFixedKey() throws {
        let provider = try OpenSSLProvider()
        var steps = StepTimings()
        let server = try CXServer(
            provider: provider,
            options: CXServerOptions(
                suites: [try BuiltInPlugins.suites.make("rsa-modern", options: SuiteOptions())],
                keyLifetime: .fixed
            ),
            recorder: &steps
        )
        var client = try CXClient(
            provider: provider,
            options: CXClientOptions(suite: try BuiltInPlugins.suites.make("rsa-modern", options: SuiteOptions(rsaBits: 3072))),
            recorder: &steps
        )
        let answer = server.respond(to: try client.makeRequest(recorder: &steps), recorder: &steps)
        #expect(answer.error?.code == .unsupported, "\(answer.error?.message ?? "no error")")
        #expect(answer.error?.message.contains("RSA-3072") == true, "\(answer.error?.message ?? "")")
    }

    /// The client key a new client sends, and the server key a new server answers with.
    static func keys(
        suite id: String,
        lifetime: KeyLifetime,
        provider: some CryptoProvider
    ) throws -> (client: [UInt8], server: [UInt8]) {
        let suite = try BuiltInPlugins.suites.make(id, options: SuiteOptions())
        var steps = StepTimings()
        let server = try CXServer(
            provider: provider,
            options: CXServerOptions(suites: [suite], keyLifetime: lifetime),
            recorder: &steps
        )
        var client = try CXClient(
            provider: provider,
            options: CXClientOptions(suite: suite, keyLifetime: lifetime),
            recorder: &steps
        )
        let answer = server.respond(to: try client.makeRequest(recorder: &steps), recorder: &steps)
        #expect(try client.open(answer.body, recorder: &steps) == Payload.standard)
        guard case .response(let response) = try CXReply(decoding: answer.body) else {
            throw LabError(.serverError, "\(id): the server answered an error")
        }
        return (client.encodedPublicKey, response.serverKey)
    }

    @Test(
        "Fixed keys are the same for every new client and server; per-run keys are not",
        arguments: [("x25519", "swift-crypto"), ("rsa-modern", "openssl"), ("pq", "swift-crypto")]
    )
    func sameInEveryRun(_ suite: String, _ provider: String) throws {
        let provider = Providers.named(provider)
        let fixed = try (0..<2).map { _ in try Self.keys(suite: suite, lifetime: .fixed, provider: provider) }
        #expect(fixed[0].client == fixed[1].client)
        #expect(fixed[0].server == fixed[1].server)
        let spec = try BuiltInPlugins.suites.make(suite, options: SuiteOptions()).clientKey
        #expect(fixed[0].client == (try Self.publicKey(spec, on: provider)))

        let perRun = try (0..<2).map { _ in try Self.keys(suite: suite, lifetime: .perRun, provider: provider) }
        #expect(perRun[0].client != perRun[1].client)
        #expect(perRun[0].server != perRun[1].server)
        #expect(perRun[0].server != fixed[0].server)
    }
}
