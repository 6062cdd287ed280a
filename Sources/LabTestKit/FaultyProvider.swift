public import LabCore

/// How a `FaultyProvider`'s broken primitives misbehave.
public enum ProviderFault: Sendable, Equatable {
    /// Every output gets a flipped bit, and every signature is called invalid.
    case corruptOutputs
    /// Nothing is refused: an operation that fails returns bytes all the same, every
    /// signature is called valid, and a key of the wrong length is cut or padded to fit.
    case acceptAnything
    /// Right, but slower: each operation is done this many times (at least once), the last
    /// answer kept. Real work inside the caller's timed step, so a slowed provider meets the
    /// machine's noise as the real one does.
    case repeated(Int)
}

/// A provider that breaks chosen primitives of a real one (`Fault`). Tests use it to prove
/// that their checks can fail: a check of valid inputs must catch `.corruptOutputs`, a check
/// of invalid inputs must catch `.acceptAnything`, a comparison must find `.repeated(n)`.
public struct FaultyProvider<Base: CryptoProvider>: CryptoProvider {
    public typealias PrivateKey = Base.PrivateKey
    public typealias PublicKey = Base.PublicKey

    /// How a broken primitive misbehaves.
    public typealias Fault = ProviderFault

    public static var name: String { "faulty-\(Base.name)" }

    /// The real provider.
    public let base: Base
    /// The primitives to break.
    public let faults: Set<Primitive>
    /// How they break.
    public let fault: Fault
    /// The primitives it does not claim (`capabilities` lacks them), to prove a check refuses
    /// a provider without what a flow needs.
    public let withheld: Set<Primitive>

    /// Breaks `faults` of `base` the way `fault` says, and claims none of `withheld`.
    public init(
        _ base: Base,
        faults: Set<Primitive>,
        fault: Fault = .corruptOutputs,
        withholding withheld: Set<Primitive> = []
    ) {
        self.base = base
        self.faults = faults
        self.fault = fault
        self.withheld = withheld
    }

    /// A faulty provider breaks nothing until told what to break.
    public init() throws {
        self.init(try Base(), faults: [])
    }

    public var version: String { "faulty \(self.base.version)" }
    public var capabilities: ProviderCapabilities {
        var capabilities = self.base.capabilities
        for primitive in self.withheld {
            capabilities.primitives.remove(primitive)
            capabilities.notes[primitive] = "\(primitive) withheld by the test"
        }
        return capabilities
    }

    /// `operation`'s output, broken if `primitive` is.
    private func run(_ primitive: Primitive, _ operation: () throws -> [UInt8]) throws -> [UInt8] {
        guard self.faults.contains(primitive) else { return try operation() }
        switch self.fault {
        case .corruptOutputs:
            var output = try operation()
            if !output.isEmpty { output[output.count / 2] ^= 0x01 }
            return output
        case .acceptAnything:
            // Whatever the input, an answer: the real one, or made-up bytes.
            return (try? operation()) ?? [UInt8](repeating: 0x5A, count: 32)
        case .repeated(let times):
            for _ in 1..<max(times, 1) { _ = try operation() }
            return try operation()
        }
    }

    /// The verdict of a broken signature check: never the real one.
    private func verdict(_ primitive: Primitive, _ check: () throws -> Bool) throws -> Bool {
        guard self.faults.contains(primitive) else { return try check() }
        switch self.fault {
        case .corruptOutputs: return false
        case .acceptAnything: return true
        case .repeated(let times):
            for _ in 1..<max(times, 1) { _ = try check() }
            return try check()
        }
    }

    private func corrupt(_ primitive: Primitive, _ bytes: [UInt8]) -> [UInt8] {
        (try? self.run(primitive) { bytes }) ?? bytes
    }

    public func randomBytes(count: Int) throws -> [UInt8] { try self.base.randomBytes(count: count) }
    public func generatePrivateKey(_ spec: KeySpec) throws -> PrivateKey { try self.base.generatePrivateKey(spec) }
    public func publicKey(for privateKey: PrivateKey) throws -> PublicKey { try self.base.publicKey(for: privateKey) }
    public func encode(_ publicKey: PublicKey) throws -> [UInt8] { try self.base.encode(publicKey) }
    public func decodePublicKey(_ bytes: [UInt8], type: KeyType) throws -> PublicKey {
        try self.base.decodePublicKey(bytes, type: type)
    }
    public func decodePrivateKey(_ bytes: [UInt8], type: KeyType) throws -> PrivateKey {
        do {
            return try self.base.decodePrivateKey(bytes, type: type)
        } catch {
            // Accept anything: a seed or raw key of the wrong length is cut or zero-padded.
            let sizes: [Primitive: Int] = [.x25519: 32, .ed25519: 32, .mlkem768: 64, .mldsa65: 32]
            guard self.fault == .acceptAnything,
                let primitive = Self.primitive(type), self.faults.contains(primitive), let size = sizes[primitive]
            else { throw error }
            let fitted = Array(bytes.prefix(size)) + [UInt8](repeating: 0, count: max(0, size - bytes.count))
            return try self.base.decodePrivateKey(fitted, type: type)
        }
    }
    public func rsaBits(of publicKey: PublicKey) -> Int? { self.base.rsaBits(of: publicKey) }

    public func rsaEncrypt(
        _ plaintext: [UInt8],
        for publicKey: PublicKey,
        padding: RSAEncryptionPadding
    ) throws -> [UInt8] {
        try self.run(Self.primitive(padding)) { try self.base.rsaEncrypt(plaintext, for: publicKey, padding: padding) }
    }
    public func rsaDecrypt(
        _ ciphertext: [UInt8],
        with privateKey: PrivateKey,
        padding: RSAEncryptionPadding
    ) throws -> [UInt8] {
        try self.run(Self.primitive(padding)) {
            try self.base.rsaDecrypt(ciphertext, with: privateKey, padding: padding)
        }
    }
    public func sign(_ message: [UInt8], with privateKey: PrivateKey, scheme: SignatureScheme) throws -> [UInt8] {
        try self.run(Self.primitive(scheme)) { try self.base.sign(message, with: privateKey, scheme: scheme) }
    }
    public func isValidSignature(
        _ signature: [UInt8],
        for message: [UInt8],
        publicKey: PublicKey,
        scheme: SignatureScheme
    ) throws -> Bool {
        try self.verdict(Self.primitive(scheme)) {
            try self.base.isValidSignature(signature, for: message, publicKey: publicKey, scheme: scheme)
        }
    }
    public func x25519(_ privateKey: PrivateKey, peer: PublicKey) throws -> [UInt8] {
        try self.run(.x25519) { try self.base.x25519(privateKey, peer: peer) }
    }
    public func mlkemEncapsulate(to publicKey: PublicKey) throws -> (ciphertext: [UInt8], sharedSecret: [UInt8]) {
        let result = try self.base.mlkemEncapsulate(to: publicKey)
        return (result.ciphertext, self.corrupt(.mlkem768, result.sharedSecret))
    }
    public func mlkemDecapsulate(_ ciphertext: [UInt8], with privateKey: PrivateKey) throws -> [UInt8] {
        try self.run(.mlkem768) { try self.base.mlkemDecapsulate(ciphertext, with: privateKey) }
    }
    public func aesCBCEncrypt(_ plaintext: [UInt8], key: [UInt8], iv: [UInt8], padding: Bool) throws -> [UInt8] {
        try self.run(.aesCBC) { try self.base.aesCBCEncrypt(plaintext, key: key, iv: iv, padding: padding) }
    }
    public func aesCBCDecrypt(_ ciphertext: [UInt8], key: [UInt8], iv: [UInt8], padding: Bool) throws -> [UInt8] {
        try self.run(.aesCBC) { try self.base.aesCBCDecrypt(ciphertext, key: key, iv: iv, padding: padding) }
    }
    public func aesGCMSeal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8]) throws -> [UInt8] {
        try self.run(.aesGCM) { try self.base.aesGCMSeal(plaintext, key: key, nonce: nonce, aad: aad) }
    }
    public func aesGCMOpen(_ sealed: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8]) throws -> [UInt8] {
        try self.run(.aesGCM) { try self.base.aesGCMOpen(sealed, key: key, nonce: nonce, aad: aad) }
    }
    public func hkdfSHA256(
        inputKeyMaterial: [UInt8],
        salt: [UInt8],
        info: [UInt8],
        outputByteCount: Int
    ) throws -> [UInt8] {
        try self.run(.hkdfSHA256) {
            try self.base.hkdfSHA256(
                inputKeyMaterial: inputKeyMaterial,
                salt: salt,
                info: info,
                outputByteCount: outputByteCount
            )
        }
    }
    public func aesKeyWrap(_ key: [UInt8], kek: [UInt8]) throws -> [UInt8] {
        try self.run(.aesKeyWrap) { try self.base.aesKeyWrap(key, kek: kek) }
    }
    public func aesKeyUnwrap(_ wrapped: [UInt8], kek: [UInt8]) throws -> [UInt8] {
        try self.run(.aesKeyWrap) { try self.base.aesKeyUnwrap(wrapped, kek: kek) }
    }

    private static func primitive(_ padding: RSAEncryptionPadding) -> Primitive {
        switch padding {
        case .pkcs1v15: .rsaPKCS1Encryption
        case .oaep: .rsaOAEP
        }
    }

    private static func primitive(_ type: KeyType) -> Primitive? {
        switch type {
        case .x25519: .x25519
        case .ed25519: .ed25519
        case .mlkem768: .mlkem768
        case .mldsa65: .mldsa65
        case .rsa: nil
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
