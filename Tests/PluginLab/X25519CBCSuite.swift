import LabCX
import LabCore

/// `x25519-cbc`: x25519's key agreement and key wrap, with the message in AES-256-CBC under
/// a fresh IV (carried as `cryptoN`) instead of AES-GCM: the test-only suite.
struct X25519CBCSuite: Suite {
    static let id = "x25519-cbc"
    let base = X25519Suite()

    init(options: SuiteOptions) throws {
        try SuiteCatalog.requireNoRSA(options, suite: Self.id)
    }

    var isInsecure: Bool { false }
    var clientKey: KeySpec { .x25519 }
    var serverKey: KeySpec { .ed25519 }
    var sessionKeyBytes: Int { 32 }
    var signature: SignatureScheme { .ed25519 }
    var primitives: Set<Primitive> { [.x25519, .hkdfSHA256, .aesKeyWrap, .ed25519, .aesCBC] }

    func wrap<P: CryptoProvider>(_ sessionKey: [UInt8], forClientKey clientKey: [UInt8], provider: P) throws -> [UInt8] {
        try self.base.wrap(sessionKey, forClientKey: clientKey, provider: provider)
    }

    func unwrap<P: CryptoProvider>(
        _ wrapped: [UInt8],
        privateKey: P.PrivateKey,
        publicKey: [UInt8],
        provider: P
    ) throws -> [UInt8] {
        try self.base.unwrap(wrapped, privateKey: privateKey, publicKey: publicKey, provider: provider)
    }

    func seal<P: CryptoProvider>(_ message: [UInt8], key: [UInt8], provider: P) throws -> SealedMessage {
        let iv = try provider.randomBytes(count: 16)
        let ciphertext = try provider.aesCBCEncrypt(message, key: key, iv: iv, padding: true)
        return SealedMessage(ciphertext: ciphertext, padded: true, nonce: iv)
    }

    func open<P: CryptoProvider>(_ sealed: SealedMessage, key: [UInt8], provider: P) throws -> [UInt8] {
        guard let iv = sealed.nonce, iv.count == 16 else {
            throw CXVerdict(.decryptFailed, "x25519-cbc carries a 16-byte IV as cryptoN")
        }
        return try provider.aesCBCDecrypt(sealed.ciphertext, key: key, iv: iv, padding: true)
    }
}
