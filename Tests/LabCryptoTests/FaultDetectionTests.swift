import LabCore
import LabCrypto
import LabOpenSSL
import LabSwiftCrypto
import LabTesting
import Testing

/// The checks above can fail: a provider with one broken primitive fails its vectors and
/// its exchanges.
struct FaultDetectionTests {
    @Test("A broken primitive fails its Wycheproof file", arguments: WycheproofFiles.all.map(\.name))
    func vectorsCatchFaults(_ file: String) throws {
        let primitive = WycheproofFiles.all.first { $0.name == file }!.primitive
        let provider = FaultyProvider(SwiftCryptoProvider(), faults: [primitive])
        let tally = try WycheproofRunner(provider: provider).run(file)
        #expect(!tally.failures.isEmpty, "\(tally)")
    }

    @Test(
        "A broken primitive fails the exchange",
        arguments: [
            ("x25519", Primitive.x25519), ("x25519", .hkdfSHA256), ("x25519", .aesKeyWrap), ("x25519", .aesGCM),
            ("x25519", .ed25519), ("rsa-modern", .rsaOAEP), ("rsa-modern", .rsaPSS), ("pq", .mlkem768),
            ("pq", .mldsa65),
            ("classic", .aesCBC), ("classic", .rsaPKCS1Encryption), ("classic", .rsaPKCS1Signature),
        ]
    )
    func exchangesCatchFaults(_ suiteID: String, _ primitive: Primitive) throws {
        let suite = try SuiteCase.all.first { $0.id == suiteID && ($0.rsaBits ?? 1024) >= 1024 }!.make()
        // The server is broken; the honest client must notice.
        let server = FaultyProvider(SwiftCryptoProvider(), faults: [primitive])
        var exchange = try InProcessExchange(suite: suite, client: SwiftCryptoProvider(), server: server)
        #expect(throws: LabError.self) { try exchange.run() }
    }
}
