import LabBuiltIns
import LabCX
import LabCore
import LabOpenSSL
import LabServer
import LabSwiftCrypto
import LabTestSupport
import Testing

/// The checks above can fail: a provider with one broken primitive fails its vectors and
/// its exchanges, whichever way it is broken.
@Suite(.tier(.unit)) struct FaultDetectionTests {
    /// Runs `file` on `base` with its primitive broken by `fault`.
    static func tally<P: CryptoProvider>(_ file: String, on base: P, fault: ProviderFault) throws -> VectorTally {
        let primitive = WycheproofFiles.all.first { $0.name == file }!.primitive
        return try WycheproofRunner(provider: FaultyProvider(base, faults: [primitive], fault: fault)).run(file)
    }

    /// Runs `file` on the first built-in provider that is offered it.
    static func tally(_ file: String, fault: ProviderFault) throws -> VectorTally {
        let swiftCrypto = SwiftCryptoProvider()
        if WycheproofFiles.notOffered(file, by: swiftCrypto.capabilities) == nil {
            return try Self.tally(file, on: swiftCrypto, fault: fault)
        }
        let openSSL = try OpenSSLProvider()
        try #require(WycheproofFiles.notOffered(file, by: openSSL.capabilities) == nil, "no provider is offered \(file)")
        return try Self.tally(file, on: openSSL, fault: fault)
    }

    /// How many of `file`'s vectors expect `result` and are not skipped for a parameter.
    static func count(_ file: String, _ result: WycheproofFile.Expectation) throws -> Int {
        try WycheproofFile(file).groups.flatMap(\.tests).filter { $0.result == result }.count
    }

    @Test("Corrupted outputs fail a file's valid vectors", arguments: WycheproofFiles.all.map(\.name))
    func corruptedOutputsAreCaught(_ file: String) throws {
        let tally = try Self.tally(file, fault: .corruptOutputs)
        // Files of "acceptable" vectors only (RSA-1024 signing) must give their outputs too.
        let expectation = try Self.count(file, .valid) > 0 ? "expected valid" : "expected acceptable"
        #expect(tally.failures.contains { $0.contains(expectation) }, "\(tally)")
    }

    @Test(
        "Accepting anything fails a file's invalid vectors",
        arguments: try WycheproofFiles.all.map(\.name).filter { try Self.count($0, .invalid) > 0 }
    )
    func acceptingAnythingIsCaught(_ file: String) throws {
        let tally = try Self.tally(file, fault: .acceptAnything)
        #expect(tally.failures.contains { $0.contains("expected invalid") }, "\(tally)")
    }

    @Test(
        "A broken primitive fails the exchange with the error that names it",
        arguments: [
            ("x25519", Primitive.x25519, CXVerdict.Code.unwrapFailed),
            ("x25519", .hkdfSHA256, .unwrapFailed),
            ("x25519", .aesKeyWrap, .unwrapFailed),
            ("x25519", .aesGCM, .decryptFailed),
            ("x25519", .ed25519, .signatureInvalid),
            ("rsa-modern", .rsaOAEP, .unwrapFailed),
            ("rsa-modern", .rsaPSS, .signatureInvalid),
            ("pq", .mlkem768, .unwrapFailed),
            ("pq", .mldsa65, .signatureInvalid),
            // No AEAD in the 2009 suite: a flipped ciphertext bit garbles the plaintext, whose
            // signature then fails (the padding usually survives).
            ("classic", .aesCBC, .signatureInvalid),
            ("classic", .rsaPKCS1Encryption, .unwrapFailed),
            ("classic", .rsaPKCS1Signature, .signatureInvalid),
        ]
    )
    func exchangesCatchFaults(_ suiteID: String, _ primitive: Primitive, _ code: CXVerdict.Code) throws {
        let suite = try SuiteCase.all.first { $0.id == suiteID && ($0.rsaBits ?? 1024) >= 1024 }!.make()
        // The server is broken; the honest client must notice, and say what broke.
        let server = FaultyProvider(SwiftCryptoProvider(), faults: [primitive])
        var exchange = try InProcessExchange(suite: suite, client: SwiftCryptoProvider(), server: server)
        let error = #expect(throws: CXVerdict.self) { try exchange.run() }
        #expect(error?.code == code, "\(String(describing: error))")
    }
}
