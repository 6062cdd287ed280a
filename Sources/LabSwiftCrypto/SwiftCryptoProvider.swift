public import Crypto
public import CryptoExtras
import Foundation
public import LabCore

/// The `swift-crypto` provider: apple/swift-crypto 4 (`Crypto`, `CryptoExtras`), BoringSSL inside.
///
/// It refuses RSA keys below 1024 bits (swift-crypto's own floor), so `classic` at its
/// original 512 bits belongs to the `openssl` provider.
public struct SwiftCryptoProvider: CryptoProvider {
    /// `"swift-crypto"`.
    public static let name = "swift-crypto"

    /// A private key of any type this provider handles.
    public enum PrivateKey: @unchecked Sendable {
        // `_RSA.Encryption.PrivateKey` is not declared Sendable; like every key here it is an
        // immutable handle on a BoringSSL object that is safe to use from several threads.
        case rsaEncryption(_RSA.Encryption.PrivateKey)
        case rsaSignature(_RSA.Signing.PrivateKey)
        case x25519(Curve25519.KeyAgreement.PrivateKey)
        case ed25519(Curve25519.Signing.PrivateKey)
        case mlkem768(MLKEM768.PrivateKey)
        case mldsa65(MLDSA65.PrivateKey)
    }

    /// A public key of any type this provider handles.
    public enum PublicKey: @unchecked Sendable {
        case rsaEncryption(_RSA.Encryption.PublicKey)
        case rsaSignature(_RSA.Signing.PublicKey)
        case x25519(Curve25519.KeyAgreement.PublicKey)
        case ed25519(Curve25519.Signing.PublicKey)
        case mlkem768(MLKEM768.PublicKey)
        case mldsa65(MLDSA65.PublicKey)
    }

    /// Nothing to load: swift-crypto links BoringSSL statically.
    public init() {}

    /// The library, at the version the package graph resolved when the lab was built
    /// (`BuildPackages`, written by Plugins/LabBuildInfo), and its backend.
    public var version: String { "swift-crypto \(BuildPackages.versions["swift-crypto"] ?? "4") (BoringSSL)" }

    /// Everything cx/1 needs; RSA from 1024 bits.
    public var capabilities: ProviderCapabilities {
        ProviderCapabilities(
            primitives: Set(Primitive.allCases),
            rsaBits: 1024...16384,
            notes: [:]
        )
    }

    public func randomBytes(count: Int) throws -> [UInt8] {
        SecureRandom.bytes(count)
    }

    public func generatePrivateKey(_ spec: KeySpec) throws -> PrivateKey {
        try Self.wrap("generate a \(spec) key") {
            switch spec {
            case .rsa(let bits, let use):
                try self.checkRSA(bits: bits)
                let size = _RSA.Signing.KeySize(bitCount: bits)
                switch use {
                case .encryption: return .rsaEncryption(try _RSA.Encryption.PrivateKey(unsafeKeySize: size))
                case .signature: return .rsaSignature(try _RSA.Signing.PrivateKey(unsafeKeySize: size))
                }
            case .x25519: return .x25519(Curve25519.KeyAgreement.PrivateKey())
            case .ed25519: return .ed25519(Curve25519.Signing.PrivateKey())
            case .mlkem768: return .mlkem768(try MLKEM768.PrivateKey())
            case .mldsa65: return .mldsa65(try MLDSA65.PrivateKey())
            }
        }
    }

    public func publicKey(for privateKey: PrivateKey) throws -> PublicKey {
        switch privateKey {
        case .rsaEncryption(let key): .rsaEncryption(key.publicKey)
        case .rsaSignature(let key): .rsaSignature(key.publicKey)
        case .x25519(let key): .x25519(key.publicKey)
        case .ed25519(let key): .ed25519(key.publicKey)
        case .mlkem768(let key): .mlkem768(key.publicKey)
        case .mldsa65(let key): .mldsa65(key.publicKey)
        }
    }

    public func encode(_ publicKey: PublicKey) throws -> [UInt8] {
        switch publicKey {
        case .rsaEncryption(let key): Array(key.pkcs1DERRepresentation)
        case .rsaSignature(let key): Array(key.pkcs1DERRepresentation)
        case .x25519(let key): Array(key.rawRepresentation)
        case .ed25519(let key): Array(key.rawRepresentation)
        case .mlkem768(let key): Array(key.rawRepresentation)
        case .mldsa65(let key): Array(key.rawRepresentation)
        }
    }

    public func decodePublicKey(_ bytes: [UInt8], type: KeyType) throws -> PublicKey {
        do {
            switch type {
            case .rsa(.encryption):
                let key = try _RSA.Encryption.PublicKey(unsafeDERRepresentation: bytes)
                try Self.requirePKCS1(bytes, encoded: key.pkcs1DERRepresentation)
                return .rsaEncryption(key)
            case .rsa(.signature):
                let key = try _RSA.Signing.PublicKey(unsafeDERRepresentation: bytes)
                try Self.requirePKCS1(bytes, encoded: key.pkcs1DERRepresentation)
                return .rsaSignature(key)
            case .x25519: return .x25519(try Curve25519.KeyAgreement.PublicKey(rawRepresentation: bytes))
            case .ed25519: return .ed25519(try Curve25519.Signing.PublicKey(rawRepresentation: bytes))
            case .mlkem768: return .mlkem768(try MLKEM768.PublicKey(rawRepresentation: bytes))
            case .mldsa65: return .mldsa65(try MLDSA65.PublicKey(rawRepresentation: bytes))
            }
        } catch {
            let hint = if case .rsa = type { " (swift-crypto accepts RSA keys of 1024 bits or more)" } else { "" }
            throw LabError(
                .badPublicKey,
                "swift-crypto could not parse a \(bytes.count)-byte \(type) public key\(hint)",
                cause: UnderlyingError(describing: error)
            )
        }
    }

    public func decodePrivateKey(_ bytes: [UInt8], type: KeyType) throws -> PrivateKey {
        try Self.wrap("parse a \(type) private key") {
            switch type {
            case .rsa(.encryption): .rsaEncryption(try _RSA.Encryption.PrivateKey(unsafeDERRepresentation: bytes))
            case .rsa(.signature): .rsaSignature(try _RSA.Signing.PrivateKey(unsafeDERRepresentation: bytes))
            case .x25519: .x25519(try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: bytes))
            case .ed25519: .ed25519(try Curve25519.Signing.PrivateKey(rawRepresentation: bytes))
            case .mlkem768: .mlkem768(try MLKEM768.PrivateKey(seedRepresentation: bytes, publicKey: nil))
            case .mldsa65: .mldsa65(try MLDSA65.PrivateKey(seedRepresentation: bytes, publicKey: nil))
            }
        }
    }

    public func rsaBits(of publicKey: PublicKey) -> Int? {
        switch publicKey {
        case .rsaEncryption(let key): key.keySizeInBits
        case .rsaSignature(let key): key.keySizeInBits
        default: nil
        }
    }

    public func rsaEncrypt(
        _ plaintext: [UInt8],
        for publicKey: PublicKey,
        padding: RSAEncryptionPadding
    ) throws -> [UInt8] {
        guard case .rsaEncryption(let key) = publicKey else { throw Self.wrongKey("RSA encryption") }
        let padding = try Self.rsaPadding(padding)
        return try Self.wrap("RSA-encrypt") { Array(try key.encrypt(plaintext, padding: padding)) }
    }

    public func rsaDecrypt(
        _ ciphertext: [UInt8],
        with privateKey: PrivateKey,
        padding: RSAEncryptionPadding
    ) throws -> [UInt8] {
        guard case .rsaEncryption(let key) = privateKey else { throw Self.wrongKey("RSA decryption") }
        let padding = try Self.rsaPadding(padding)
        return try Self.wrap("RSA-decrypt") { Array(try key.decrypt(ciphertext, padding: padding)) }
    }

    public func sign(_ message: [UInt8], with privateKey: PrivateKey, scheme: SignatureScheme) throws -> [UInt8] {
        try Self.wrap("sign with \(scheme)") {
            switch (scheme, privateKey) {
            case (.rsaPKCS1v15(let hash), .rsaSignature(let key)):
                return try Self.rsaSign(key, message, hash: hash, padding: .insecurePKCS1v1_5)
            case (.rsaPSS(let hash), .rsaSignature(let key)):
                return try Self.rsaSign(key, message, hash: hash, padding: .PSS)
            case (.ed25519, .ed25519(let key)):
                #if LAB_GATE_PROBE
                if let input = GateProbe.input(at: .swiftCryptoSign) {
                    GateProbe.keep(SHA256.hash(data: input).withUnsafeBytes { UInt64($0[0]) })
                }
                #endif
                return Array(try key.signature(for: message))
            case (.mldsa65, .mldsa65(let key)):
                return Array(try key.signature(for: message))
            default:
                throw Self.wrongKey("\(scheme) signing")
            }
        }
    }

    public func isValidSignature(
        _ signature: [UInt8],
        for message: [UInt8],
        publicKey: PublicKey,
        scheme: SignatureScheme
    ) throws -> Bool {
        switch (scheme, publicKey) {
        case (.rsaPKCS1v15(let hash), .rsaSignature(let key)):
            return Self.rsaVerify(key, signature, message, hash: hash, padding: .insecurePKCS1v1_5)
        case (.rsaPSS(let hash), .rsaSignature(let key)):
            return Self.rsaVerify(key, signature, message, hash: hash, padding: .PSS)
        case (.ed25519, .ed25519(let key)):
            return key.isValidSignature(signature, for: message)
        case (.mldsa65, .mldsa65(let key)):
            return key.isValidSignature(signature, for: message)
        default:
            throw Self.wrongKey("\(scheme) verification")
        }
    }

    public func x25519(_ privateKey: PrivateKey, peer: PublicKey) throws -> [UInt8] {
        guard case .x25519(let key) = privateKey, case .x25519(let peerKey) = peer else {
            throw Self.wrongKey("X25519")
        }
        let secret = try Self.wrap("X25519") {
            try key.sharedSecretFromKeyAgreement(with: peerKey).withUnsafeBytes { Array($0) }
        }
        // swift-crypto deliberately returns the all-zero secret of a low-order peer key;
        // the contract (and OpenSSL) refuse it (RFC 7748 §6.1), so check without branching on bytes.
        guard secret.reduce(0, |) != 0 else {
            throw LabError(.cryptoFailure, "X25519 gave the all-zero secret: the peer key is a low-order point")
        }
        return secret
    }

    public func mlkemEncapsulate(to publicKey: PublicKey) throws -> (ciphertext: [UInt8], sharedSecret: [UInt8]) {
        guard case .mlkem768(let key) = publicKey else { throw Self.wrongKey("ML-KEM-768") }
        return try Self.wrap("ML-KEM-768 encapsulate") {
            let result = try key.encapsulate()
            return (Array(result.encapsulated), result.sharedSecret.withUnsafeBytes { Array($0) })
        }
    }

    public func mlkemDecapsulate(_ ciphertext: [UInt8], with privateKey: PrivateKey) throws -> [UInt8] {
        guard case .mlkem768(let key) = privateKey else { throw Self.wrongKey("ML-KEM-768") }
        return try Self.wrap("ML-KEM-768 decapsulate") {
            try key.decapsulate(ciphertext).withUnsafeBytes { Array($0) }
        }
    }

    public func aesCBCEncrypt(_ plaintext: [UInt8], key: [UInt8], iv: [UInt8], padding: Bool) throws -> [UInt8] {
        try Self.wrap("AES-CBC-encrypt") {
            Array(
                try AES._CBC.encrypt(
                    plaintext,
                    using: SymmetricKey(data: key),
                    iv: try AES._CBC.IV(ivBytes: iv),
                    noPadding: !padding
                )
            )
        }
    }

    public func aesCBCDecrypt(_ ciphertext: [UInt8], key: [UInt8], iv: [UInt8], padding: Bool) throws -> [UInt8] {
        try Self.wrap("AES-CBC-decrypt") {
            Array(
                try AES._CBC.decrypt(
                    ciphertext,
                    using: SymmetricKey(data: key),
                    iv: try AES._CBC.IV(ivBytes: iv),
                    noPadding: !padding
                )
            )
        }
    }

    public func aesGCMSeal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8]) throws -> [UInt8] {
        try Self.wrap("AES-GCM-seal") {
            let box = try AES.GCM.seal(
                plaintext,
                using: SymmetricKey(data: key),
                nonce: try AES.GCM.Nonce(data: nonce),
                authenticating: aad
            )
            return Array(box.ciphertext) + Array(box.tag)
        }
    }

    public func aesGCMOpen(_ sealed: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8]) throws -> [UInt8] {
        try Self.wrap("AES-GCM-open") {
            guard sealed.count >= 16 else { throw CryptoKitError.incorrectParameterSize }
            let box = try Self.sealedBox(nonce: nonce, sealed: sealed)
            return Array(try AES.GCM.open(box, using: SymmetricKey(data: key), authenticating: aad))
        }
    }

    public func hkdfSHA256(
        inputKeyMaterial: [UInt8],
        salt: [UInt8],
        info: [UInt8],
        outputByteCount: Int
    ) throws -> [UInt8] {
        try HKDFLimits.check(sha256OutputByteCount: outputByteCount)
        let key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: inputKeyMaterial),
            salt: salt,
            info: info,
            outputByteCount: outputByteCount
        )
        return key.withUnsafeBytes { Array($0) }
    }

    public func aesKeyWrap(_ key: [UInt8], kek: [UInt8]) throws -> [UInt8] {
        try Self.wrap("AES-KW wrap") {
            Array(try AES.KeyWrap.wrap(SymmetricKey(data: key), using: SymmetricKey(data: kek)))
        }
    }

    public func aesKeyUnwrap(_ wrapped: [UInt8], kek: [UInt8]) throws -> [UInt8] {
        try Self.wrap("AES-KW unwrap") {
            try AES.KeyWrap.unwrap(wrapped, using: SymmetricKey(data: kek)).withUnsafeBytes { Array($0) }
        }
    }

    // MARK: - Helpers

    private func checkRSA(bits: Int) throws {
        if let reason = self.capabilities.missing([], rsaBits: bits) {
            throw LabError(.unsupported, "swift-crypto cannot make a \(bits)-bit RSA key: \(reason)")
        }
    }

    /// swift-crypto also reads SubjectPublicKeyInfo and may ignore trailing bytes; cx/1 keys
    /// are exactly PKCS#1 `RSAPublicKey` DER, as the openssl provider reads them.
    private static func requirePKCS1(_ bytes: [UInt8], encoded: Data) throws {
        guard encoded.elementsEqual(bytes) else {
            throw LabError(.badPublicKey, "An RSA public key must be exactly PKCS#1 RSAPublicKey DER")
        }
    }

    private static func rsaPadding(_ padding: RSAEncryptionPadding) throws -> _RSA.Encryption.Padding {
        switch padding {
        case .pkcs1v15: return ._WEAK_AND_INSECURE_PKCS_V1_5
        case .oaep(.sha1): return .PKCS1_OAEP
        case .oaep(.sha256): return .PKCS1_OAEP_SHA256
        case .oaep(let hash):
            throw LabError(.unsupported, "swift-crypto has no RSA-OAEP with \(hash.rawValue)")
        }
    }

    private static func rsaSign(
        _ key: _RSA.Signing.PrivateKey,
        _ message: [UInt8],
        hash: HashAlgorithm,
        padding: _RSA.Signing.Padding
    ) throws -> [UInt8] {
        let signature: _RSA.Signing.RSASignature =
            switch hash {
            case .sha1: try key.signature(for: Insecure.SHA1.hash(data: message), padding: padding)
            case .sha256: try key.signature(for: SHA256.hash(data: message), padding: padding)
            case .sha384: try key.signature(for: SHA384.hash(data: message), padding: padding)
            case .sha512: try key.signature(for: SHA512.hash(data: message), padding: padding)
            }
        return Array(signature.rawRepresentation)
    }

    private static func rsaVerify(
        _ key: _RSA.Signing.PublicKey,
        _ signature: [UInt8],
        _ message: [UInt8],
        hash: HashAlgorithm,
        padding: _RSA.Signing.Padding
    ) -> Bool {
        let signature = _RSA.Signing.RSASignature(rawRepresentation: signature)
        return switch hash {
        case .sha1: key.isValidSignature(signature, for: Insecure.SHA1.hash(data: message), padding: padding)
        case .sha256: key.isValidSignature(signature, for: SHA256.hash(data: message), padding: padding)
        case .sha384: key.isValidSignature(signature, for: SHA384.hash(data: message), padding: padding)
        case .sha512: key.isValidSignature(signature, for: SHA512.hash(data: message), padding: padding)
        }
    }

    private static func wrongKey(_ operation: String) -> LabError {
        LabError(.cryptoFailure, "swift-crypto: the key given is not of the type \(operation) needs")
    }

    /// Runs `body`, turning swift-crypto's errors into a `LabError` that says what failed.
    private static func wrap<T>(_ operation: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as LabError {
            throw error
        } catch {
            throw LabError(
                .cryptoFailure,
                "swift-crypto could not \(operation)",
                cause: UnderlyingError(describing: error)
            )
        }
    }
}
