import CBotan
public import LabKit

extension BotanProvider {
    public func rsaEncrypt(_ plaintext: [UInt8], for publicKey: BotanPublicKey, padding: RSAEncryptionPadding) throws -> [UInt8] {
        var op: botan_pk_op_encrypt_t?
        try Botan.check(botan_pk_op_encrypt_create(&op, try publicKey.object(), Self.name(padding), 0), "set up RSA encryption")
        defer { botan_pk_op_encrypt_destroy(op) }
        return try Botan.output(capacity: 1024, "encrypt with RSA") {
            botan_pk_op_encrypt(op, self.random.handle, $0, $1, plaintext, plaintext.count)
        }
    }

    public func rsaDecrypt(_ ciphertext: [UInt8], with privateKey: BotanPrivateKey, padding: RSAEncryptionPadding) throws -> [UInt8] {
        // Botan 2 drops zero bytes put before a ciphertext (Wycheproof: "prepended bytes to
        // ciphertext"); RSAES takes exactly the modulus's length (RFC 8017 §7.1.2, §7.2.2).
        guard ciphertext.count == privateKey.modulusBytes else {
            throw LabError(.cryptoFailure, "an RSA ciphertext is \(privateKey.modulusBytes) bytes, not \(ciphertext.count)")
        }
        var op: botan_pk_op_decrypt_t?
        try Botan.check(botan_pk_op_decrypt_create(&op, privateKey.handle, Self.name(padding), 0), "set up RSA decryption")
        defer { botan_pk_op_decrypt_destroy(op) }
        return try Botan.output(capacity: 1024, "decrypt with RSA") {
            botan_pk_op_decrypt(op, $0, $1, ciphertext, ciphertext.count)
        }
    }

    public func sign(_ message: [UInt8], with privateKey: BotanPrivateKey, scheme: SignatureScheme) throws -> [UInt8] {
        let name = try self.name(scheme)
        var op: botan_pk_op_sign_t?
        try Botan.check(botan_pk_op_sign_create(&op, privateKey.handle, name, 0), "set up \(scheme) signing")
        defer { botan_pk_op_sign_destroy(op) }
        try Botan.check(botan_pk_op_sign_update(op, message, message.count), "sign")
        return try Botan.output(capacity: 1024, "sign") { botan_pk_op_sign_finish(op, self.random.handle, $0, $1) }
    }

    public func isValidSignature(
        _ signature: [UInt8],
        for message: [UInt8],
        publicKey: BotanPublicKey,
        scheme: SignatureScheme
    ) throws -> Bool {
        let name = try self.name(scheme)
        guard try Self.isCanonical(signature, scheme: scheme, publicKey: publicKey) else { return false }
        var op: botan_pk_op_verify_t?
        try Botan.check(botan_pk_op_verify_create(&op, try publicKey.object(), name, 0), "set up \(scheme) verification")
        defer { botan_pk_op_verify_destroy(op) }
        guard botan_pk_op_verify_update(op, message, message.count) == 0 else { return false }
        // 0: valid; BOTAN_FFI_INVALID_VERIFIER, or an error for a signature that cannot be
        // parsed (a wrong length), is not.
        return botan_pk_op_verify_finish(op, signature, signature.count) == 0
    }

    public func x25519(_ privateKey: BotanPrivateKey, peer: BotanPublicKey) throws -> [UInt8] {
        guard privateKey.type == .x25519, peer.type == .x25519 else {
            throw LabError(.cryptoFailure, "X25519 needs X25519 keys, not \(privateKey.type) and \(peer.type)")
        }
        var op: botan_pk_op_ka_t?
        try Botan.check(botan_pk_op_key_agreement_create(&op, privateKey.handle, "Raw", 0), "set up X25519")
        defer { botan_pk_op_key_agreement_destroy(op) }
        let secret = try Botan.output(capacity: 32, "agree on an X25519 secret") {
            botan_pk_op_key_agreement(op, $0, $1, peer.raw, peer.raw.count, nil, 0)
        }
        // Botan 2 returns the all-zero secret of a low-order peer key; the protocol refuses it.
        guard secret.contains(where: { $0 != 0 }) else {
            throw LabError(.badPublicKey, "the X25519 shared secret is all zeros (a low-order peer key)")
        }
        return secret
    }

    public func mlkemEncapsulate(to publicKey: BotanPublicKey) throws -> (ciphertext: [UInt8], sharedSecret: [UInt8]) {
        throw self.unsupported(.mlkem768)
    }

    public func mlkemDecapsulate(_ ciphertext: [UInt8], with privateKey: BotanPrivateKey) throws -> [UInt8] {
        throw self.unsupported(.mlkem768)
    }

    public func hkdfSHA256(inputKeyMaterial: [UInt8], salt: [UInt8], info: [UInt8], outputByteCount: Int) throws -> [UInt8] {
        try HKDFLimits.check(sha256OutputByteCount: outputByteCount)
        var output = [UInt8](repeating: 0, count: outputByteCount)
        try Botan.check(
            botan_kdf(
                "HKDF(SHA-256)", &output, outputByteCount, inputKeyMaterial, inputKeyMaterial.count,
                salt, salt.count, info, info.count
            ),
            "derive with HKDF-SHA256"
        )
        return output
    }

    public func aesKeyWrap(_ key: [UInt8], kek: [UInt8]) throws -> [UInt8] {
        guard key.count >= 16, key.count % 8 == 0 else {
            throw LabError(.cryptoFailure, "RFC 3394 wraps keys of 16 bytes or more in 8-byte blocks, not \(key.count) bytes")
        }
        return try Botan.output(capacity: key.count + 8, "wrap a key (RFC 3394)") {
            botan_key_wrap3394(key, key.count, kek, kek.count, $0, $1)
        }
    }

    public func aesKeyUnwrap(_ wrapped: [UInt8], kek: [UInt8]) throws -> [UInt8] {
        // Botan 2 unwraps a single block (Wycheproof: "incorrect wrapping of 8 bytes"); RFC 3394
        // wraps two blocks or more, so a wrapped key is 24 bytes or more.
        guard wrapped.count >= 24, wrapped.count % 8 == 0 else {
            throw LabError(.cryptoFailure, "an RFC 3394 wrapped key is 24 bytes or more in 8-byte blocks, not \(wrapped.count)")
        }
        return try Botan.output(capacity: wrapped.count, "unwrap a key (RFC 3394)") {
            botan_key_unwrap3394(wrapped, wrapped.count, kek, kek.count, $0, $1)
        }
    }

    /// Ed25519's group order L, little-endian (RFC 8032 §5.1).
    static let ed25519Order: [UInt8] = [
        0xED, 0xD3, 0xF5, 0x5C, 0x1A, 0x63, 0x12, 0x58, 0xD6, 0x9C, 0xF7, 0xA2, 0xDE, 0xF9, 0xDE, 0x14,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10,
    ]

    /// What Botan 2 does not check before it verifies (Wycheproof found both): an RSA
    /// signature is exactly the modulus's length (RFC 8017 §8.1.2, §8.2.2: Botan drops zero
    /// bytes put before it), and an Ed25519 signature's S is below L (RFC 8032 §5.1.7: Botan
    /// takes S + L, a second signature for the same message).
    static func isCanonical(_ signature: [UInt8], scheme: SignatureScheme, publicKey: BotanPublicKey) throws -> Bool {
        switch scheme {
        case .rsaPKCS1v15, .rsaPSS:
            return signature.count == (try publicKey.rsaNumbers().modulus.bits() + 7) / 8
        case .ed25519:
            guard signature.count == 64 else { return false }
            // S < L, compared from the most significant byte down.
            for index in (0..<32).reversed() where signature[32 + index] != Self.ed25519Order[index] {
                return signature[32 + index] < Self.ed25519Order[index]
            }
            return false
        case .mldsa65:
            return true
        }
    }

    static func name(_ padding: RSAEncryptionPadding) -> String {
        switch padding {
        case .pkcs1v15: "EME-PKCS1-v1_5"
        case .oaep(let hash): "OAEP(\(hash.rawValue))"
        }
    }

    func name(_ scheme: SignatureScheme) throws -> String {
        switch scheme {
        case .rsaPKCS1v15(let hash): "EMSA_PKCS1(\(hash.rawValue))"
        case .rsaPSS(let hash): "PSSR(\(hash.rawValue),MGF1,\(hash.byteCount))"
        case .ed25519: "Pure"
        case .mldsa65: throw self.unsupported(.mldsa65)
        }
    }
}
