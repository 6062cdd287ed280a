import LabCore

/// A provider that breaks chosen primitives of a real one: outputs get a flipped bit and
/// verifications accept anything. Tests use it to prove their checks can fail.
public struct FaultyProvider<Base: CryptoProvider>: CryptoProvider {
    public typealias PrivateKey = Base.PrivateKey
    public typealias PublicKey = Base.PublicKey

    public static var name: String { "faulty-\(Base.name)" }

    /// The real provider.
    public let base: Base
    /// The primitives to break.
    public let faults: Set<Primitive>

    /// Breaks `faults` of `base`.
    public init(_ base: Base, faults: Set<Primitive>) {
        self.base = base
        self.faults = faults
    }

    /// A faulty provider breaks nothing until told what to break.
    public init() throws {
        self.init(try Base(), faults: [])
    }

    public var version: String { "faulty \(self.base.version)" }
    public var capabilities: ProviderCapabilities { self.base.capabilities }

    private func corrupt(_ primitive: Primitive, _ bytes: [UInt8]) -> [UInt8] {
        guard self.faults.contains(primitive), !bytes.isEmpty else { return bytes }
        var corrupted = bytes
        corrupted[corrupted.count / 2] ^= 0x01
        return corrupted
    }

    public func randomBytes(count: Int) throws -> [UInt8] { try self.base.randomBytes(count: count) }
    public func generatePrivateKey(_ spec: KeySpec) throws -> PrivateKey { try self.base.generatePrivateKey(spec) }
    public func publicKey(for privateKey: PrivateKey) throws -> PublicKey { try self.base.publicKey(for: privateKey) }
    public func encode(_ publicKey: PublicKey) throws -> [UInt8] { try self.base.encode(publicKey) }
    public func decodePublicKey(_ bytes: [UInt8], type: KeyType) throws -> PublicKey {
        try self.base.decodePublicKey(bytes, type: type)
    }
    public func decodePrivateKey(_ bytes: [UInt8], type: KeyType) throws -> PrivateKey {
        try self.base.decodePrivateKey(bytes, type: type)
    }
    public func rsaBits(of publicKey: PublicKey) -> Int? { self.base.rsaBits(of: publicKey) }

    public func rsaEncrypt(
        _ plaintext: [UInt8],
        for publicKey: PublicKey,
        padding: RSAEncryptionPadding
    ) throws -> [UInt8] {
        self.corrupt(Self.primitive(padding), try self.base.rsaEncrypt(plaintext, for: publicKey, padding: padding))
    }
    public func rsaDecrypt(
        _ ciphertext: [UInt8],
        with privateKey: PrivateKey,
        padding: RSAEncryptionPadding
    ) throws -> [UInt8] {
        self.corrupt(Self.primitive(padding), try self.base.rsaDecrypt(ciphertext, with: privateKey, padding: padding))
    }
    public func sign(_ message: [UInt8], with privateKey: PrivateKey, scheme: SignatureScheme) throws -> [UInt8] {
        self.corrupt(Self.primitive(scheme), try self.base.sign(message, with: privateKey, scheme: scheme))
    }
    public func isValidSignature(
        _ signature: [UInt8],
        for message: [UInt8],
        publicKey: PublicKey,
        scheme: SignatureScheme
    ) throws -> Bool {
        if self.faults.contains(Self.primitive(scheme)) { return true }
        return try self.base.isValidSignature(signature, for: message, publicKey: publicKey, scheme: scheme)
    }
    public func x25519(_ privateKey: PrivateKey, peer: PublicKey) throws -> [UInt8] {
        self.corrupt(.x25519, try self.base.x25519(privateKey, peer: peer))
    }
    public func mlkemEncapsulate(to publicKey: PublicKey) throws -> (ciphertext: [UInt8], sharedSecret: [UInt8]) {
        let result = try self.base.mlkemEncapsulate(to: publicKey)
        return (result.ciphertext, self.corrupt(.mlkem768, result.sharedSecret))
    }
    public func mlkemDecapsulate(_ ciphertext: [UInt8], with privateKey: PrivateKey) throws -> [UInt8] {
        self.corrupt(.mlkem768, try self.base.mlkemDecapsulate(ciphertext, with: privateKey))
    }
    public func aesCBCEncrypt(_ plaintext: [UInt8], key: [UInt8], iv: [UInt8], padding: Bool) throws -> [UInt8] {
        self.corrupt(.aesCBC, try self.base.aesCBCEncrypt(plaintext, key: key, iv: iv, padding: padding))
    }
    public func aesCBCDecrypt(_ ciphertext: [UInt8], key: [UInt8], iv: [UInt8], padding: Bool) throws -> [UInt8] {
        self.corrupt(.aesCBC, try self.base.aesCBCDecrypt(ciphertext, key: key, iv: iv, padding: padding))
    }
    public func aesGCMSeal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8]) throws -> [UInt8] {
        self.corrupt(.aesGCM, try self.base.aesGCMSeal(plaintext, key: key, nonce: nonce, aad: aad))
    }
    public func aesGCMOpen(_ sealed: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8]) throws -> [UInt8] {
        self.corrupt(.aesGCM, try self.base.aesGCMOpen(sealed, key: key, nonce: nonce, aad: aad))
    }
    public func hkdfSHA256(
        inputKeyMaterial: [UInt8],
        salt: [UInt8],
        info: [UInt8],
        outputByteCount: Int
    ) throws -> [UInt8] {
        self.corrupt(
            .hkdfSHA256,
            try self.base.hkdfSHA256(
                inputKeyMaterial: inputKeyMaterial,
                salt: salt,
                info: info,
                outputByteCount: outputByteCount
            )
        )
    }
    public func aesKeyWrap(_ key: [UInt8], kek: [UInt8]) throws -> [UInt8] {
        self.corrupt(.aesKeyWrap, try self.base.aesKeyWrap(key, kek: kek))
    }
    public func aesKeyUnwrap(_ wrapped: [UInt8], kek: [UInt8]) throws -> [UInt8] {
        self.corrupt(.aesKeyWrap, try self.base.aesKeyUnwrap(wrapped, kek: kek))
    }

    private static func primitive(_ padding: RSAEncryptionPadding) -> Primitive {
        switch padding {
        case .pkcs1v15: .rsaPKCS1Encryption
        case .oaep: .rsaOAEP
        }
    }

    private static func primitive(_ scheme: SignatureScheme) -> Primitive {
        switch scheme {
        case .rsaPKCS1v15: .rsaPKCS1Signature
        case .rsaPSS: .rsaPSS
        case .ed25519: .ed25519
        case .mldsa65: .mldsa65
        }
    }
}
