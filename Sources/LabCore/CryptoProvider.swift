/// A crypto backend: exactly the primitives cx/1 needs, over bytes.
///
/// A provider's keys are its own types; keys cross between providers only as encoded
/// bytes on the wire, exactly as they cross between a client and a server. Operations a
/// provider cannot do throw a `LabError` with code `.unsupported`; `capabilities` says
/// which those are before anything runs.
public protocol CryptoProvider: Sendable {
    /// A private key (and its public half) of any `KeyType` this provider supports.
    associatedtype PrivateKey: Sendable
    /// A public key of any `KeyType` this provider supports.
    associatedtype PublicKey: Sendable

    /// The name scenarios and the CLI use, e.g. `"openssl"`.
    static var name: String { get }

    /// Loads the backend (fetching algorithms once, where the backend has that notion).
    init() throws

    /// The backend and its version, e.g. `"OpenSSL 3.0.19 27 Jan 2026"`.
    var version: String { get }

    /// What this provider can do.
    var capabilities: ProviderCapabilities { get }

    /// `count` bytes from the backend's CSPRNG.
    func randomBytes(count: Int) throws -> [UInt8]

    /// A fresh key pair.
    func generatePrivateKey(_ spec: KeySpec) throws -> PrivateKey
    /// The public half of `privateKey`.
    func publicKey(for privateKey: PrivateKey) throws -> PublicKey
    /// The wire encoding of a public key: PKCS#1 `RSAPublicKey` DER for RSA, raw bytes otherwise.
    func encode(_ publicKey: PublicKey) throws -> [UInt8]
    /// Parses the wire encoding of a public key of the given type.
    func decodePublicKey(_ bytes: [UInt8], type: KeyType) throws -> PublicKey
    /// Parses a private key: PKCS#8 or PKCS#1 DER for RSA, the raw 32 bytes for X25519 and
    /// Ed25519, the 64-byte seed `d‖z` for ML-KEM-768, the 32-byte seed for ML-DSA-65.
    func decodePrivateKey(_ bytes: [UInt8], type: KeyType) throws -> PrivateKey
    /// The modulus size of an RSA public key, in bits; nil for other key types.
    func rsaBits(of publicKey: PublicKey) -> Int?

    /// RSA encryption of a short secret.
    func rsaEncrypt(_ plaintext: [UInt8], for publicKey: PublicKey, padding: RSAEncryptionPadding) throws -> [UInt8]
    /// RSA decryption; throws when the padding does not check.
    func rsaDecrypt(_ ciphertext: [UInt8], with privateKey: PrivateKey, padding: RSAEncryptionPadding) throws -> [UInt8]

    /// A signature over `message` (hashed as the scheme says).
    func sign(_ message: [UInt8], with privateKey: PrivateKey, scheme: SignatureScheme) throws -> [UInt8]
    /// Whether `signature` is valid over `message`. Throws only when the scheme is unsupported.
    func isValidSignature(
        _ signature: [UInt8],
        for message: [UInt8],
        publicKey: PublicKey,
        scheme: SignatureScheme
    ) throws -> Bool

    /// The X25519 shared secret; throws when it is all zeros (a low-order peer key).
    func x25519(_ privateKey: PrivateKey, peer: PublicKey) throws -> [UInt8]
    /// ML-KEM-768 encapsulation to `publicKey`: a 1088-byte ciphertext and a 32-byte secret.
    func mlkemEncapsulate(to publicKey: PublicKey) throws -> (ciphertext: [UInt8], sharedSecret: [UInt8])
    /// ML-KEM-768 decapsulation (implicit rejection: a bad ciphertext yields a pseudo-random secret).
    func mlkemDecapsulate(_ ciphertext: [UInt8], with privateKey: PrivateKey) throws -> [UInt8]

    /// AES-CBC encryption (key of 16, 24 or 32 bytes; 16-byte IV), PKCS#7 padding iff `padding`.
    func aesCBCEncrypt(_ plaintext: [UInt8], key: [UInt8], iv: [UInt8], padding: Bool) throws -> [UInt8]
    /// AES-CBC decryption; with `padding`, throws when the PKCS#7 padding does not check.
    func aesCBCDecrypt(_ ciphertext: [UInt8], key: [UInt8], iv: [UInt8], padding: Bool) throws -> [UInt8]
    /// AES-GCM: ciphertext with the 16-byte tag appended.
    func aesGCMSeal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8]) throws -> [UInt8]
    /// AES-GCM: opens ciphertext‖tag; throws when the tag does not authenticate.
    func aesGCMOpen(_ sealed: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8]) throws -> [UInt8]

    /// HKDF-SHA256 (RFC 5869), extract then expand.
    func hkdfSHA256(inputKeyMaterial: [UInt8], salt: [UInt8], info: [UInt8], outputByteCount: Int) throws -> [UInt8]
    /// AES key wrap (RFC 3394, default IV) of `key` under `kek`.
    func aesKeyWrap(_ key: [UInt8], kek: [UInt8]) throws -> [UInt8]
    /// AES key unwrap (RFC 3394); throws when the integrity check fails.
    func aesKeyUnwrap(_ wrapped: [UInt8], kek: [UInt8]) throws -> [UInt8]
}

extension CryptoProvider {
    /// The provider's name, from an instance.
    public var name: String { Self.name }
}

/// What a key is for; RSA keys also say whether they encrypt or sign (some backends type them apart).
public enum KeyType: Hashable, Sendable, CustomStringConvertible {
    /// RSA, for RSAES (key transport) or RSASSA (signatures).
    case rsa(RSAKeyUse)
    /// X25519 key agreement.
    case x25519
    /// Ed25519 signatures.
    case ed25519
    /// ML-KEM-768 key encapsulation (FIPS 203).
    case mlkem768
    /// ML-DSA-65 signatures (FIPS 204).
    case mldsa65

    /// The algorithm's usual name.
    public var description: String {
        switch self {
        case .rsa: "RSA"
        case .x25519: "X25519"
        case .ed25519: "Ed25519"
        case .mlkem768: "ML-KEM-768"
        case .mldsa65: "ML-DSA-65"
        }
    }
}

/// Whether an RSA key encrypts or signs.
public enum RSAKeyUse: Hashable, Sendable {
    /// RSAES: the key wraps session keys.
    case encryption
    /// RSASSA: the key signs.
    case signature
}

/// What to generate.
public enum KeySpec: Hashable, Sendable, CustomStringConvertible {
    /// An RSA key of `bits` bits, public exponent 65537.
    case rsa(bits: Int, use: RSAKeyUse)
    /// An X25519 key.
    case x25519
    /// An Ed25519 key.
    case ed25519
    /// An ML-KEM-768 key.
    case mlkem768
    /// An ML-DSA-65 key.
    case mldsa65

    /// The key type, without the size.
    public var type: KeyType {
        switch self {
        case .rsa(_, let use): .rsa(use)
        case .x25519: .x25519
        case .ed25519: .ed25519
        case .mlkem768: .mlkem768
        case .mldsa65: .mldsa65
        }
    }

    /// E.g. `RSA-2048`, `X25519`.
    public var description: String {
        switch self {
        case .rsa(let bits, _): "RSA-\(bits)"
        default: self.type.description
        }
    }
}

/// A hash function used inside RSA schemes.
public enum HashAlgorithm: String, Hashable, Sendable, CaseIterable {
    /// SHA-1: only for the faithful `classic` suite.
    case sha1 = "SHA-1"
    /// SHA-256.
    case sha256 = "SHA-256"
    /// SHA-384.
    case sha384 = "SHA-384"
    /// SHA-512.
    case sha512 = "SHA-512"

    /// The digest length in bytes.
    public var byteCount: Int {
        switch self {
        case .sha1: 20
        case .sha256: 32
        case .sha384: 48
        case .sha512: 64
        }
    }
}

/// RSA encryption padding.
public enum RSAEncryptionPadding: Hashable, Sendable, CustomStringConvertible {
    /// RSAES-PKCS1-v1_5.
    case pkcs1v15
    /// RSAES-OAEP with MGF1 over the same hash and an empty label.
    case oaep(HashAlgorithm)

    /// E.g. `RSAES-OAEP-SHA-256`.
    public var description: String {
        switch self {
        case .pkcs1v15: "RSAES-PKCS1-v1_5"
        case .oaep(let hash): "RSAES-OAEP-\(hash.rawValue)"
        }
    }
}

/// A signature scheme.
public enum SignatureScheme: Hashable, Sendable, CustomStringConvertible {
    /// RSASSA-PKCS1-v1_5 over the given hash of the message.
    case rsaPKCS1v15(HashAlgorithm)
    /// RSASSA-PSS with MGF1 over the same hash and a salt as long as the digest.
    case rsaPSS(HashAlgorithm)
    /// Ed25519 (pure).
    case ed25519
    /// ML-DSA-65 with an empty context.
    case mldsa65

    /// E.g. `RSASSA-PSS-SHA-256`.
    public var description: String {
        switch self {
        case .rsaPKCS1v15(let hash): "RSASSA-PKCS1-v1_5-\(hash.rawValue)"
        case .rsaPSS(let hash): "RSASSA-PSS-\(hash.rawValue)"
        case .ed25519: "Ed25519"
        case .mldsa65: "ML-DSA-65"
        }
    }
}

/// A primitive a provider may offer.
public enum Primitive: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    case rsaPKCS1Encryption = "RSAES-PKCS1-v1_5"
    case rsaOAEP = "RSAES-OAEP"
    case rsaPKCS1Signature = "RSASSA-PKCS1-v1_5"
    case rsaPSS = "RSASSA-PSS"
    case x25519 = "X25519"
    case ed25519 = "Ed25519"
    case mlkem768 = "ML-KEM-768"
    case mldsa65 = "ML-DSA-65"
    case aesCBC = "AES-CBC"
    case aesGCM = "AES-GCM"
    case aesKeyWrap = "AES-KW"
    case hkdfSHA256 = "HKDF-SHA256"

    /// The primitive's standard name.
    public var description: String { self.rawValue }
}

/// What a provider can do: its primitives and the RSA sizes it accepts.
public struct ProviderCapabilities: Sendable {
    /// The primitives offered.
    public var primitives: Set<Primitive>
    /// The RSA modulus sizes accepted for generation and import, or nil without RSA.
    public var rsaBits: ClosedRange<Int>?
    /// Why a primitive is missing, in the provider's words, e.g. "OpenSSL 3.0 has no ML-KEM".
    public var notes: [Primitive: String]

    /// Declares capabilities.
    public init(primitives: Set<Primitive>, rsaBits: ClosedRange<Int>?, notes: [Primitive: String] = [:]) {
        self.primitives = primitives
        self.rsaBits = rsaBits
        self.notes = notes
    }

    /// Nil if every primitive and RSA size is offered, else the first reason it is not.
    public func missing(_ needed: some Sequence<Primitive>, rsaBits: Int?) -> String? {
        for primitive in needed where !self.primitives.contains(primitive) {
            return self.notes[primitive] ?? "no \(primitive)"
        }
        if let bits = rsaBits {
            guard let range = self.rsaBits else { return "no RSA" }
            if !range.contains(bits) {
                return "RSA keys of \(range.lowerBound) to \(range.upperBound) bits only, not \(bits)"
            }
        }
        return nil
    }
}

/// RFC 5869's bound on HKDF output, checked before calling a backend (swift-crypto traps past it).
public enum HKDFLimits {
    /// 255 blocks of SHA-256: 8160 bytes.
    public static let maxSHA256Output = 255 * 32

    /// Throws unless `outputByteCount` is 1...8160.
    public static func check(sha256OutputByteCount outputByteCount: Int) throws {
        guard (1...maxSHA256Output).contains(outputByteCount) else {
            throw LabError(.cryptoFailure, "HKDF-SHA256 can give 1 to \(maxSHA256Output) bytes, not \(outputByteCount)")
        }
    }
}
