import CLabOpenSSL
public import LabCore
import Synchronization

/// The `openssl` provider: the system's OpenSSL 3 through its EVP C API.
///
/// Algorithms are fetched once, when the provider is made, rather than implicitly on
/// every call (OpenSSL 3's implicit fetch costs a lock and a lookup per operation).
/// OpenSSL 3.0 has no ML-KEM or ML-DSA, so `pq` belongs to `swift-crypto`.
public struct OpenSSLProvider: CryptoProvider {
    /// `"openssl"`.
    public static let name = "openssl"
    /// Keys are `EVP_PKEY`s.
    public typealias PrivateKey = OpenSSLKey
    /// Keys are `EVP_PKEY`s.
    public typealias PublicKey = OpenSSLKey

    let algorithms: FetchedAlgorithms

    /// Fetches the ciphers and digests the provider uses.
    public init() throws {
        self.algorithms = try FetchedAlgorithms()
    }

    /// The runtime library's own version text.
    public var version: String { String(cString: c_lab_openssl_version()) }

    /// RSA from 512 bits (the 2009 sample's size); no post-quantum algorithms in OpenSSL 3.0.
    public var capabilities: ProviderCapabilities {
        var primitives = Set(Primitive.allCases)
        primitives.remove(.mlkem768)
        primitives.remove(.mldsa65)
        return ProviderCapabilities(
            primitives: primitives,
            rsaBits: 512...16384,
            notes: [
                .mlkem768: "\(self.version) has no ML-KEM (OpenSSL added it in 3.5)",
                .mldsa65: "\(self.version) has no ML-DSA (OpenSSL added it in 3.5)",
            ]
        )
    }

    public func randomBytes(count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        try OpenSSLErrorQueue.check(RAND_bytes(&bytes, try cLength(count)), "produce random bytes")
        return bytes
    }

    public func generatePrivateKey(_ spec: KeySpec) throws -> OpenSSLKey {
        let pointer: OpaquePointer?
        switch spec {
        case .rsa(let bits, _):
            if let reason = self.capabilities.missing([], rsaBits: bits) {
                throw LabError(.unsupported, "openssl cannot make a \(bits)-bit RSA key: \(reason)")
            }
            pointer = c_lab_keygen_rsa(nil, bits)
        case .x25519:
            pointer = c_lab_keygen_named(nil, "X25519")
        case .ed25519:
            pointer = c_lab_keygen_named(nil, "ED25519")
        case .mlkem768, .mldsa65:
            throw self.unsupported(spec.type)
        }
        guard let pointer else { throw OpenSSLErrorQueue.error("generate a \(spec) key") }
        return OpenSSLKey(pointer, type: spec.type)
    }

    public func publicKey(for privateKey: OpenSSLKey) throws -> OpenSSLKey {
        // An EVP_PKEY holding a private key serves every public-key operation too.
        privateKey
    }

    public func encode(_ publicKey: OpenSSLKey) throws -> [UInt8] {
        switch publicKey.type {
        case .rsa:
            // i2d_PublicKey writes the PKCS#1 RSAPublicKey structure for RSA keys.
            let length = i2d_PublicKey(publicKey.pointer, nil)
            guard length > 0 else { throw OpenSSLErrorQueue.error("encode an RSA public key") }
            var bytes = [UInt8](repeating: 0, count: Int(length))
            let written = bytes.withUnsafeMutableBufferPointer { buffer -> Int32 in
                var cursor = buffer.baseAddress
                return i2d_PublicKey(publicKey.pointer, &cursor)
            }
            guard written == length else { throw OpenSSLErrorQueue.error("encode an RSA public key") }
            return bytes
        case .x25519, .ed25519:
            var length = 0
            try OpenSSLErrorQueue.check(
                EVP_PKEY_get_raw_public_key(publicKey.pointer, nil, &length),
                "size a raw public key"
            )
            var bytes = [UInt8](repeating: 0, count: length)
            try OpenSSLErrorQueue.check(
                EVP_PKEY_get_raw_public_key(publicKey.pointer, &bytes, &length),
                "read a raw public key"
            )
            return Array(bytes.prefix(length))
        case .mlkem768, .mldsa65:
            throw self.unsupported(publicKey.type)
        }
    }

    public func decodePublicKey(_ bytes: [UInt8], type: KeyType) throws -> OpenSSLKey {
        switch type {
        case .rsa:
            try RSAPublicKeyDER.check(bytes)
            let parsed = bytes.withUnsafeBufferPointer { buffer -> (OpaquePointer?, Int) in
                var cursor = buffer.baseAddress
                let key = d2i_PublicKey(EVP_PKEY_RSA, nil, &cursor, buffer.count)
                return (key, cursor.map { $0 - buffer.baseAddress! } ?? 0)
            }
            guard let pointer = parsed.0 else {
                throw OpenSSLErrorQueue.error("parse a \(bytes.count)-byte PKCS#1 RSA public key", code: .badPublicKey)
            }
            let key = OpenSSLKey(pointer, type: type)
            guard parsed.1 == bytes.count else {
                throw LabError(.badPublicKey, "\(bytes.count - parsed.1) bytes follow the RSA public key's DER")
            }
            let bits = Int(EVP_PKEY_get_bits(pointer))
            if let reason = self.capabilities.missing([], rsaBits: bits) {
                throw LabError(.badPublicKey, "openssl refuses this \(bits)-bit RSA public key: \(reason)")
            }
            return key
        case .x25519, .ed25519:
            let id = type == .x25519 ? EVP_PKEY_X25519 : EVP_PKEY_ED25519
            guard bytes.count == 32, let pointer = EVP_PKEY_new_raw_public_key(id, nil, bytes, bytes.count) else {
                throw OpenSSLErrorQueue.error("parse a \(bytes.count)-byte \(type) public key", code: .badPublicKey)
            }
            return OpenSSLKey(pointer, type: type)
        case .mlkem768, .mldsa65:
            throw self.unsupported(type)
        }
    }

    public func decodePrivateKey(_ bytes: [UInt8], type: KeyType) throws -> OpenSSLKey {
        switch type {
        case .rsa:
            // d2i_AutoPrivateKey reads both PKCS#8 and the traditional PKCS#1 form.
            let pointer = bytes.withUnsafeBufferPointer { buffer -> OpaquePointer? in
                var cursor = buffer.baseAddress
                return d2i_AutoPrivateKey(nil, &cursor, buffer.count)
            }
            guard let pointer else { throw OpenSSLErrorQueue.error("parse an RSA private key") }
            return OpenSSLKey(pointer, type: type)
        case .x25519, .ed25519:
            let id = type == .x25519 ? EVP_PKEY_X25519 : EVP_PKEY_ED25519
            guard let pointer = EVP_PKEY_new_raw_private_key(id, nil, bytes, bytes.count) else {
                throw OpenSSLErrorQueue.error("parse a \(type) private key")
            }
            return OpenSSLKey(pointer, type: type)
        case .mlkem768, .mldsa65:
            throw self.unsupported(type)
        }
    }

    public func rsaBits(of publicKey: OpenSSLKey) -> Int? {
        guard case .rsa = publicKey.type else { return nil }
        return Int(EVP_PKEY_get_bits(publicKey.pointer))
    }

    public func rsaEncrypt(
        _ plaintext: [UInt8],
        for publicKey: OpenSSLKey,
        padding: RSAEncryptionPadding
    ) throws -> [UInt8] {
        try self.rsaCipher(plaintext, key: publicKey, padding: padding, encrypt: true)
    }

    public func rsaDecrypt(
        _ ciphertext: [UInt8],
        with privateKey: OpenSSLKey,
        padding: RSAEncryptionPadding
    ) throws -> [UInt8] {
        try self.rsaCipher(ciphertext, key: privateKey, padding: padding, encrypt: false)
    }

    public func sign(_ message: [UInt8], with privateKey: OpenSSLKey, scheme: SignatureScheme) throws -> [UInt8] {
        if let hash = Self.rsaHash(scheme, privateKey) {
            let digest = try self.digest(message, hash)
            let size = Int(EVP_PKEY_get_size(privateKey.pointer))
            guard size > 0 else { throw OpenSSLErrorQueue.error("size a \(scheme) signature") }
            return try privateKey.withContext(
                .init(signing: true, scheme: scheme),
                make: { try self.rsaContext(privateKey, scheme: scheme, hash: hash, signing: true) },
                body: { context in
                    var length = size
                    let signature = try [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
                        try OpenSSLErrorQueue.check(
                            EVP_PKEY_sign(context, buffer.baseAddress, &length, digest, digest.count),
                            "sign with \(scheme)"
                        )
                        count = length
                    }
                    return (signature, true)
                }
            )
        }
        return try self.withDigestContext(privateKey, scheme: scheme, signing: true) { context in
            var length = 0
            try OpenSSLErrorQueue.check(
                EVP_DigestSign(context, nil, &length, message, message.count),
                "size a \(scheme) signature"
            )
            var signature = [UInt8](repeating: 0, count: length)
            try OpenSSLErrorQueue.check(
                EVP_DigestSign(context, &signature, &length, message, message.count),
                "sign with \(scheme)"
            )
            return Array(signature.prefix(length))
        }
    }

    public func isValidSignature(
        _ signature: [UInt8],
        for message: [UInt8],
        publicKey: OpenSSLKey,
        scheme: SignatureScheme
    ) throws -> Bool {
        if let hash = Self.rsaHash(scheme, publicKey) {
            let digest = try self.digest(message, hash)
            #if LAB_GATE_PROBE
            if let input = GateProbe.input(at: .opensslVerify) {
                GateProbe.keep(UInt64(try self.digest(input, .sha256)[0]))
            }
            #endif
            return try publicKey.withContext(
                .init(signing: false, scheme: scheme),
                make: { try self.rsaContext(publicKey, scheme: scheme, hash: hash, signing: false) },
                body: { context in
                    let result = EVP_PKEY_verify(context, signature, signature.count, digest, digest.count)
                    guard result == 1 else {
                        // A bad signature queues an error; it is an answer, not a failure. The
                        // context is not reused after a failed operation.
                        ERR_clear_error()
                        return (false, false)
                    }
                    return (true, true)
                }
            )
        }
        return try self.withDigestContext(publicKey, scheme: scheme, signing: false) { context in
            let result = EVP_DigestVerify(context, signature, signature.count, message, message.count)
            if result != 1 {
                // A bad signature queues an error; it is an answer, not a failure.
                ERR_clear_error()
            }
            return result == 1
        }
    }

    /// The hash of an RSA scheme used with an RSA key; nil for every other pairing.
    static func rsaHash(_ scheme: SignatureScheme, _ key: OpenSSLKey) -> HashAlgorithm? {
        guard case .rsa = key.type else { return nil }
        switch scheme {
        case .rsaPKCS1v15(let hash), .rsaPSS(let hash): return hash
        default: return nil
        }
    }

    /// The digest of `message`, in one call.
    func digest(_ message: [UInt8], _ hash: HashAlgorithm) throws -> [UInt8] {
        let md = self.algorithms.digest(hash)
        let pool = self.algorithms.digestContexts
        guard let context = pool.take()?.pointer ?? EVP_MD_CTX_new() else {
            throw OpenSSLErrorQueue.error("make a digest context")
        }
        let digest = try [UInt8](unsafeUninitializedCapacity: Int(EVP_MAX_MD_SIZE)) { buffer, count in
            var length: UInt32 = 0
            guard EVP_DigestInit_ex2(context, md, nil) == 1, EVP_DigestUpdate(context, message, message.count) == 1,
                EVP_DigestFinal_ex(context, buffer.baseAddress, &length) == 1
            else {
                EVP_MD_CTX_free(context)
                throw OpenSSLErrorQueue.error("hash with \(hash)")
            }
            count = Int(length)
        }
        pool.give(.init(pointer: context, setup: ()))
        return digest
    }

    /// A context initialised to sign (or verify) digests with `key` under an RSA `scheme`.
    func rsaContext(
        _ key: OpenSSLKey,
        scheme: SignatureScheme,
        hash: HashAlgorithm,
        signing: Bool
    ) throws -> OpaquePointer {
        let operation = { "\(signing ? "sign" : "verify") with \(scheme)" }
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else {
            throw OpenSSLErrorQueue.error(operation())
        }
        do {
            let md = self.algorithms.digest(hash)
            try OpenSSLErrorQueue.check(
                signing ? EVP_PKEY_sign_init(context) : EVP_PKEY_verify_init(context),
                operation()
            )
            if case .rsaPSS = scheme {
                try OpenSSLErrorQueue.check(EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PSS_PADDING), operation())
                try OpenSSLErrorQueue.check(
                    EVP_PKEY_CTX_set_rsa_pss_saltlen(context, Int32(hash.byteCount)),
                    operation()
                )
                try OpenSSLErrorQueue.check(EVP_PKEY_CTX_set_rsa_mgf1_md(context, md), operation())
            } else {
                try OpenSSLErrorQueue.check(EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PADDING), operation())
            }
            try OpenSSLErrorQueue.check(EVP_PKEY_CTX_set_signature_md(context, md), operation())
            return context
        } catch {
            EVP_PKEY_CTX_free(context)
            throw error
        }
    }

    public func x25519(_ privateKey: OpenSSLKey, peer: OpenSSLKey) throws -> [UInt8] {
        guard privateKey.type == .x25519, peer.type == .x25519 else {
            throw LabError(.cryptoFailure, "openssl: X25519 needs two X25519 keys")
        }
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, privateKey.pointer, nil) else {
            throw OpenSSLErrorQueue.error("make an X25519 context")
        }
        defer { EVP_PKEY_CTX_free(context) }
        try OpenSSLErrorQueue.check(EVP_PKEY_derive_init(context), "start X25519")
        try OpenSSLErrorQueue.check(EVP_PKEY_derive_set_peer(context, peer.pointer), "set the X25519 peer key")
        var length = 32
        var secret = [UInt8](repeating: 0, count: length)
        // OpenSSL refuses an all-zero result (a low-order peer key), as RFC 7748 §6.1 allows.
        try OpenSSLErrorQueue.check(EVP_PKEY_derive(context, &secret, &length), "derive an X25519 secret")
        return Array(secret.prefix(length))
    }

    public func mlkemEncapsulate(to publicKey: OpenSSLKey) throws -> (ciphertext: [UInt8], sharedSecret: [UInt8]) {
        throw self.unsupported(.mlkem768)
    }

    public func mlkemDecapsulate(_ ciphertext: [UInt8], with privateKey: OpenSSLKey) throws -> [UInt8] {
        throw self.unsupported(.mlkem768)
    }
}
