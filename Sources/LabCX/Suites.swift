public import LabCore

/// `classic`: the 2009 sample, faithfully: RSA PKCS#1 v1.5 wrap, AES-128-CBC with a zero IV,
/// PKCS#7 padding only when the length needs it, RSASSA-PKCS1-v1_5 over SHA-1. Insecure by design.
public struct ClassicSuite: RSASuite {
    public static let id = "classic"
    /// The RSA sizes docs/protocol.md §2.4 allows.
    public static let allowedRSABits = [512, 1024, 2048]
    /// The 2009 sample's size.
    public static let defaultRSABits = 512
    static let wrapPadding = RSAEncryptionPadding.pkcs1v15
    /// The RSA size of both sides' keys.
    public let bits: Int

    /// The suite with `rsaBits` (512 by default, as in 2009).
    public init(rsaBits: Int = ClassicSuite.defaultRSABits) throws {
        try SuiteCatalog.checkRSABits(rsaBits, allowed: Self.allowedRSABits, suite: Self.id)
        self.bits = rsaBits
    }

    public var isInsecure: Bool { true }
    public var sessionKeyBytes: Int { 16 }
    public var signature: SignatureScheme { .rsaPKCS1v15(.sha1) }
    public var primitives: Set<Primitive> { [.rsaPKCS1Encryption, .rsaPKCS1Signature, .aesCBC] }

    static let zeroIV = [UInt8](repeating: 0, count: 16)

    public func seal<P: CryptoProvider>(_ message: [UInt8], key: [UInt8], provider: P) throws -> SealedMessage {
        let padded = message.count % 16 != 0
        let ciphertext = try provider.aesCBCEncrypt(message, key: key, iv: Self.zeroIV, padding: padded)
        return SealedMessage(ciphertext: ciphertext, padded: padded, nonce: nil)
    }

    public func open<P: CryptoProvider>(_ sealed: SealedMessage, key: [UInt8], provider: P) throws -> [UInt8] {
        guard sealed.nonce == nil else {
            throw LabError(.malformedMessage, "classic has no nonce, but the response carries 'cryptoN'")
        }
        guard !sealed.ciphertext.isEmpty, sealed.ciphertext.count % 16 == 0 else {
            throw CXVerdict(
                .decryptFailed,
                "AES-CBC ciphertext of \(sealed.ciphertext.count) bytes is not a whole number of blocks"
            )
        }
        do {
            return try provider.aesCBCDecrypt(sealed.ciphertext, key: key, iv: Self.zeroIV, padding: sealed.padded)
        } catch let error as LabError where sealed.padded && error.code == .cryptoFailure {
            throw CXVerdict(
                .paddingInvalid,
                "crypto7 is 1 but the decrypted message has no valid PKCS#7 padding",
                cause: error
            )
        }
    }
}

/// `rsa-modern`: RSA-OAEP-SHA256 wrap of a 32-byte key, AES-256-GCM, RSASSA-PSS-SHA256.
public struct RSAModernSuite: RSASuite, AEADSuite {
    public static let id = "rsa-modern"
    /// The RSA sizes docs/protocol.md §2.4 allows.
    public static let allowedRSABits = [2048, 3072, 4096]
    /// The smallest allowed size.
    public static let defaultRSABits = 2048
    static let wrapPadding = RSAEncryptionPadding.oaep(.sha256)
    /// The RSA size of both sides' keys.
    public let bits: Int

    /// The suite with `rsaBits` (2048 by default).
    public init(rsaBits: Int = RSAModernSuite.defaultRSABits) throws {
        try SuiteCatalog.checkRSABits(rsaBits, allowed: Self.allowedRSABits, suite: Self.id)
        self.bits = rsaBits
    }

    public var isInsecure: Bool { false }
    public var sessionKeyBytes: Int { 32 }
    public var signature: SignatureScheme { .rsaPSS(.sha256) }
    public var primitives: Set<Primitive> { [.rsaOAEP, .rsaPSS, .aesGCM] }
}

/// `x25519`: an ephemeral X25519 agreement + HKDF-SHA256 + AES-KW wrap, AES-256-GCM, Ed25519.
public struct X25519Suite: AEADSuite {
    public static let id = "x25519"

    /// The suite (it has no options).
    public init() {}

    public init(options: SuiteOptions) throws {
        try SuiteCatalog.requireNoRSA(options, suite: Self.id)
        self.init()
    }

    public var isInsecure: Bool { false }
    public var clientKey: KeySpec { .x25519 }
    public var serverKey: KeySpec { .ed25519 }
    public var sessionKeyBytes: Int { 32 }
    public var signature: SignatureScheme { .ed25519 }
    public var primitives: Set<Primitive> { [.x25519, .hkdfSHA256, .aesKeyWrap, .ed25519, .aesGCM] }

    public func wrap<P: CryptoProvider>(
        _ sessionKey: [UInt8],
        forClientKey clientKey: [UInt8],
        provider: P
    ) throws -> [UInt8] {
        let peer = try KeyEncapsulation.decodeClientKey(clientKey, type: .x25519, provider: provider)
        let ephemeral = try provider.generatePrivateKey(.x25519)
        let ephemeralPublic = try provider.encode(try provider.publicKey(for: ephemeral))
        let shared: [UInt8]
        do {
            shared = try provider.x25519(ephemeral, peer: peer)
        } catch {
            throw LabError(
                .badPublicKey,
                "The client's X25519 key gives an all-zero shared secret (a low-order point)",
                cause: error as? LabError
            )
        }
        let kek = try KeyEncapsulation.kek(shared: shared, salt: ephemeralPublic + clientKey, provider: provider)
        return ephemeralPublic + (try provider.aesKeyWrap(sessionKey, kek: kek))
    }

    public func unwrap<P: CryptoProvider>(
        _ wrapped: [UInt8],
        privateKey: P.PrivateKey,
        publicKey: [UInt8],
        provider: P
    ) throws -> [UInt8] {
        guard wrapped.count == 32 + 40 else {
            throw CXVerdict(.unwrapFailed, "x25519's cryptoK is 72 bytes (32 + 40), not \(wrapped.count)")
        }
        let ephemeralPublic = Array(wrapped.prefix(32))
        let peer = try provider.decodePublicKey(ephemeralPublic, type: .x25519)
        let shared = try provider.x25519(privateKey, peer: peer)
        let kek = try KeyEncapsulation.kek(shared: shared, salt: ephemeralPublic + publicKey, provider: provider)
        return try provider.aesKeyUnwrap(Array(wrapped.suffix(40)), kek: kek)
    }
}

/// `pq`: ML-KEM-768 + HKDF-SHA256 + AES-KW wrap, AES-256-GCM, ML-DSA-65.
public struct PQSuite: AEADSuite {
    public static let id = "pq"
    /// ML-KEM-768's ciphertext length.
    static let ciphertextBytes = 1088

    /// The suite (it has no options).
    public init() {}

    public init(options: SuiteOptions) throws {
        try SuiteCatalog.requireNoRSA(options, suite: Self.id)
        self.init()
    }

    public var isInsecure: Bool { false }
    public var clientKey: KeySpec { .mlkem768 }
    public var serverKey: KeySpec { .mldsa65 }
    public var sessionKeyBytes: Int { 32 }
    public var signature: SignatureScheme { .mldsa65 }
    public var primitives: Set<Primitive> { [.mlkem768, .hkdfSHA256, .aesKeyWrap, .mldsa65, .aesGCM] }

    public func wrap<P: CryptoProvider>(
        _ sessionKey: [UInt8],
        forClientKey clientKey: [UInt8],
        provider: P
    ) throws -> [UInt8] {
        let peer = try KeyEncapsulation.decodeClientKey(clientKey, type: .mlkem768, provider: provider)
        let (ciphertext, shared) = try provider.mlkemEncapsulate(to: peer)
        let kek = try KeyEncapsulation.kek(shared: shared, salt: ciphertext, provider: provider)
        return ciphertext + (try provider.aesKeyWrap(sessionKey, kek: kek))
    }

    public func unwrap<P: CryptoProvider>(
        _ wrapped: [UInt8],
        privateKey: P.PrivateKey,
        publicKey: [UInt8],
        provider: P
    ) throws -> [UInt8] {
        guard wrapped.count == Self.ciphertextBytes + 40 else {
            throw CXVerdict(.unwrapFailed, "pq's cryptoK is 1128 bytes (1088 + 40), not \(wrapped.count)")
        }
        let ciphertext = Array(wrapped.prefix(Self.ciphertextBytes))
        let shared = try provider.mlkemDecapsulate(ciphertext, with: privateKey)
        let kek = try KeyEncapsulation.kek(shared: shared, salt: ciphertext, provider: provider)
        return try provider.aesKeyUnwrap(Array(wrapped.suffix(40)), kek: kek)
    }
}

/// The shape `classic` and `rsa-modern` share: both sides' keys are RSA of one size, and
/// the session key is RSA-encrypted to the client's key.
protocol RSASuite: Suite {
    static var allowedRSABits: [Int] { get }
    static var defaultRSABits: Int { get }
    static var wrapPadding: RSAEncryptionPadding { get }
    var bits: Int { get }
    init(rsaBits: Int) throws
}

extension RSASuite {
    public init(options: SuiteOptions) throws {
        try self.init(rsaBits: options.rsaBits ?? Self.defaultRSABits)
    }

    public var clientKey: KeySpec { .rsa(bits: self.bits, use: .encryption) }
    public var serverKey: KeySpec { .rsa(bits: self.bits, use: .signature) }

    /// An RSA key of the client key's size, whatever size the suite was made with.
    public func serverKey(forClientKey clientKey: [UInt8]) throws -> KeySpec {
        guard let bits = RSAKeys.modulusBits(clientKey) else {
            throw LabError(
                .badPublicKey,
                "The client's RSA public key (\(clientKey.count) bytes) does not parse as PKCS#1 DER"
            )
        }
        try RSAKeys.checkClientBits(bits, allowed: Self.allowedRSABits, suite: Self.id)
        return .rsa(bits: bits, use: .signature)
    }

    public func wrap<P: CryptoProvider>(
        _ sessionKey: [UInt8],
        forClientKey clientKey: [UInt8],
        provider: P
    ) throws -> [UInt8] {
        let key = try RSAKeys.decodeClientKey(
            clientKey,
            allowed: Self.allowedRSABits,
            suite: Self.id,
            provider: provider
        )
        return try provider.rsaEncrypt(sessionKey, for: key, padding: Self.wrapPadding)
    }

    public func unwrap<P: CryptoProvider>(
        _ wrapped: [UInt8],
        privateKey: P.PrivateKey,
        publicKey: [UInt8],
        provider: P
    ) throws -> [UInt8] {
        try provider.rsaDecrypt(wrapped, with: privateKey, padding: Self.wrapPadding)
    }
}

/// The message protection `rsa-modern`, `x25519` and `pq` share: AES-256-GCM.
protocol AEADSuite: Suite {}

extension AEADSuite {
    public func seal<P: CryptoProvider>(_ message: [UInt8], key: [UInt8], provider: P) throws -> SealedMessage {
        try AEADMessage.seal(message, key: key, suite: Self.id, provider: provider)
    }

    public func open<P: CryptoProvider>(_ sealed: SealedMessage, key: [UInt8], provider: P) throws -> [UInt8] {
        try AEADMessage.open(sealed, key: key, suite: Self.id, provider: provider)
    }
}

/// AES-256-GCM with a 12-byte random nonce and the suite id as AAD (shared by three suites).
enum AEADMessage {
    static func seal<P: CryptoProvider>(
        _ message: [UInt8],
        key: [UInt8],
        suite: String,
        provider: P
    ) throws -> SealedMessage {
        let nonce = try provider.randomBytes(count: 12)
        let sealed = try provider.aesGCMSeal(message, key: key, nonce: nonce, aad: Array(suite.utf8))
        return SealedMessage(ciphertext: sealed, padded: false, nonce: nonce)
    }

    static func open<P: CryptoProvider>(
        _ sealed: SealedMessage,
        key: [UInt8],
        suite: String,
        provider: P
    ) throws -> [UInt8] {
        guard !sealed.padded else {
            throw CXVerdict(.paddingInvalid, "crypto7 is 1, but \(suite) never pads (AES-GCM)")
        }
        guard let nonce = sealed.nonce else {
            throw LabError(.malformedMessage, "The key 'cryptoN' is missing; \(suite) needs a 12-byte nonce")
        }
        guard nonce.count == 12 else {
            throw LabError(
                .malformedMessage,
                "The key 'cryptoN' holds \(nonce.count) bytes; \(suite) uses a 12-byte nonce"
            )
        }
        return try provider.aesGCMOpen(sealed.ciphertext, key: key, nonce: nonce, aad: Array(suite.utf8))
    }
}

/// The KEK derivation shared by `x25519` and `pq`.
enum KeyEncapsulation {
    static let info = Array("crypto-lab cx/1 wrap".utf8)

    static func kek<P: CryptoProvider>(shared: [UInt8], salt: [UInt8], provider: P) throws -> [UInt8] {
        try provider.hkdfSHA256(inputKeyMaterial: shared, salt: salt, info: info, outputByteCount: 32)
    }

    static func decodeClientKey<P: CryptoProvider>(_ bytes: [UInt8], type: KeyType, provider: P) throws -> P.PublicKey {
        do {
            return try provider.decodePublicKey(bytes, type: type)
        } catch {
            throw LabError(
                .badPublicKey,
                "The client's \(type) public key (\(bytes.count) bytes) does not parse",
                cause: error as? LabError
            )
        }
    }
}

/// Client RSA keys, checked against the sizes a suite allows.
package enum RSAKeys {
    static func decodeClientKey<P: CryptoProvider>(
        _ bytes: [UInt8],
        allowed: [Int],
        suite: String,
        provider: P
    ) throws -> P.PublicKey {
        let key: P.PublicKey
        do {
            key = try provider.decodePublicKey(bytes, type: .rsa(.encryption))
        } catch {
            // A well-formed key the provider refuses may be one of a size it cannot use
            // (swift-crypto and 512 bits): that is the provider's limit, not a bad key.
            if let bits = Self.modulusBits(bytes) {
                try Self.checkClientBits(bits, allowed: allowed, suite: suite)
                if let reason = provider.capabilities.missing([], rsaBits: bits) {
                    throw LabError(
                        .unsupported,
                        "The \(provider.name) provider cannot use RSA-\(bits), the size of the client's \(suite) key: \(reason)",
                        cause: error as? LabError
                    )
                }
            }
            throw LabError(
                .badPublicKey,
                "The client's RSA public key (\(bytes.count) bytes) does not parse as PKCS#1 DER",
                cause: error as? LabError
            )
        }
        try Self.checkClientBits(provider.rsaBits(of: key) ?? 0, allowed: allowed, suite: suite)
        return key
    }

    static func checkClientBits(_ bits: Int, allowed: [Int], suite: String) throws {
        guard allowed.contains(bits) else {
            let list = allowed.map(String.init).joined(separator: ", ")
            throw LabError(.badPublicKey, "\(suite) allows RSA keys of \(list) bits; the client's has \(bits)")
        }
    }

    /// The modulus size of a PKCS#1 `RSAPublicKey` (DER `SEQUENCE { INTEGER n, INTEGER e }`),
    /// read without a provider; nil unless `der` is exactly one such structure with a positive `n`.
    ///
    /// It only sizes a key: whether the key is usable is for the provider to say.
    package static func modulusBits(_ der: [UInt8]) -> Int? {
        var reader = DERReader(der[...])
        guard var sequence = reader.element(tag: 0x30), reader.isAtEnd,
            let modulus = sequence.element(tag: 0x02), let exponent = sequence.element(tag: 0x02), sequence.isAtEnd,
            !exponent.bytes.isEmpty, let first = modulus.bytes.first, first < 0x80
        else { return nil }
        let significant = modulus.bytes.drop { $0 == 0 }
        guard let top = significant.first else { return nil }
        return significant.count * 8 - top.leadingZeroBitCount
    }
}

/// Just enough DER to walk a PKCS#1 `RSAPublicKey`: definite lengths, one-byte tags.
struct DERReader {
    private(set) var bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
    }

    var isAtEnd: Bool { self.bytes.isEmpty }

    /// The next element's content if its tag is `tag` (and it fits), advancing past it.
    mutating func element(tag: UInt8) -> DERReader? {
        var rest = self.bytes
        guard rest.popFirst() == tag, let first = rest.popFirst() else { return nil }
        var length = 0
        if first < 0x80 {
            length = Int(first)
        } else {
            let count = Int(first & 0x7F)
            guard (1...4).contains(count), rest.count >= count else { return nil }
            for _ in 0..<count { length = length << 8 | Int(rest.removeFirst()) }
        }
        guard rest.count >= length else { return nil }
        let content = rest.prefix(length)
        self.bytes = rest.dropFirst(length)
        return DERReader(content)
    }
}
