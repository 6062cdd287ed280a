import CLabOpenSSL
import LabCore

/// AES (CBC, GCM, key wrap) and HKDF, through EVP.
extension OpenSSLProvider {
    public func aesCBCEncrypt(_ plaintext: [UInt8], key: [UInt8], iv: [UInt8], padding: Bool) throws -> [UInt8] {
        try self.aesCBC(plaintext, key: key, iv: iv, padding: padding, encrypt: true)
    }

    public func aesCBCDecrypt(_ ciphertext: [UInt8], key: [UInt8], iv: [UInt8], padding: Bool) throws -> [UInt8] {
        try self.aesCBC(ciphertext, key: key, iv: iv, padding: padding, encrypt: false)
    }

    public func aesGCMSeal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8]) throws -> [UInt8] {
        let cipher = try self.algorithms.cipher(.gcm, keyBytes: key.count)
        guard !nonce.isEmpty else { throw LabError(.cryptoFailure, "AES-GCM needs a nonce of at least 1 byte") }
        return try CipherContext.with { context in
            try OpenSSLErrorQueue.check(EVP_EncryptInit_ex2(context, cipher, nil, nil, nil), "start AES-GCM")
            try OpenSSLErrorQueue.check(
                c_lab_gcm_set_ivlen(context, try cLength(nonce.count)),
                "set a \(nonce.count)-byte GCM nonce"
            )
            try OpenSSLErrorQueue.check(EVP_EncryptInit_ex2(context, nil, key, nonce, nil), "key AES-GCM")
            var length: Int32 = 0
            try OpenSSLErrorQueue.check(
                EVP_EncryptUpdate(context, nil, &length, aad, try cLength(aad.count)),
                "add GCM AAD"
            )
            var output = [UInt8](repeating: 0, count: plaintext.count + 16)
            try OpenSSLErrorQueue.check(
                EVP_EncryptUpdate(context, &output, &length, plaintext, try cLength(plaintext.count)),
                "AES-GCM-encrypt"
            )
            var total = Int(length)
            try output.withUnsafeMutableBufferPointer { buffer in
                var final: Int32 = 0
                try OpenSSLErrorQueue.check(
                    EVP_EncryptFinal_ex(context, buffer.baseAddress! + total, &final),
                    "finish AES-GCM"
                )
                total += Int(final)
                try OpenSSLErrorQueue.check(
                    c_lab_gcm_get_tag(context, buffer.baseAddress! + total, 16),
                    "read the GCM tag"
                )
            }
            return Array(output.prefix(total + 16))
        }
    }

    public func aesGCMOpen(_ sealed: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8]) throws -> [UInt8] {
        let cipher = try self.algorithms.cipher(.gcm, keyBytes: key.count)
        guard !nonce.isEmpty else { throw LabError(.cryptoFailure, "AES-GCM needs a nonce of at least 1 byte") }
        guard sealed.count >= 16 else {
            throw LabError(.cryptoFailure, "AES-GCM input of \(sealed.count) bytes has no 16-byte tag")
        }
        let ciphertext = Array(sealed.prefix(sealed.count - 16))
        let tag = Array(sealed.suffix(16))
        return try CipherContext.with { context in
            try OpenSSLErrorQueue.check(EVP_DecryptInit_ex2(context, cipher, nil, nil, nil), "start AES-GCM")
            try OpenSSLErrorQueue.check(
                c_lab_gcm_set_ivlen(context, try cLength(nonce.count)),
                "set a \(nonce.count)-byte GCM nonce"
            )
            try OpenSSLErrorQueue.check(EVP_DecryptInit_ex2(context, nil, key, nonce, nil), "key AES-GCM")
            var length: Int32 = 0
            try OpenSSLErrorQueue.check(
                EVP_DecryptUpdate(context, nil, &length, aad, try cLength(aad.count)),
                "add GCM AAD"
            )
            var output = [UInt8](repeating: 0, count: ciphertext.count + 16)
            try OpenSSLErrorQueue.check(
                EVP_DecryptUpdate(context, &output, &length, ciphertext, try cLength(ciphertext.count)),
                "AES-GCM-decrypt"
            )
            let total = Int(length)
            try OpenSSLErrorQueue.check(c_lab_gcm_set_tag(context, tag, 16), "set the GCM tag")
            let verified = output.withUnsafeMutableBufferPointer { buffer -> Int32 in
                var final: Int32 = 0
                return EVP_DecryptFinal_ex(context, buffer.baseAddress! + total, &final)
            }
            guard verified == 1 else {
                throw OpenSSLErrorQueue.error("authenticate AES-GCM (the tag does not match)")
            }
            return Array(output.prefix(total))
        }
    }

    public func hkdfSHA256(
        inputKeyMaterial: [UInt8],
        salt: [UInt8],
        info: [UInt8],
        outputByteCount: Int
    ) throws -> [UInt8] {
        try HKDFLimits.check(sha256OutputByteCount: outputByteCount)
        guard let context = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nil) else {
            throw OpenSSLErrorQueue.error("make an HKDF context")
        }
        defer { EVP_PKEY_CTX_free(context) }
        try OpenSSLErrorQueue.check(EVP_PKEY_derive_init(context), "start HKDF")
        try OpenSSLErrorQueue.check(
            EVP_PKEY_CTX_set_hkdf_md(context, self.algorithms.digest(.sha256)),
            "set HKDF's hash"
        )
        try OpenSSLErrorQueue.check(
            EVP_PKEY_CTX_set1_hkdf_salt(context, salt, try cLength(salt.count)),
            "set HKDF's salt"
        )
        try OpenSSLErrorQueue.check(
            EVP_PKEY_CTX_set1_hkdf_key(context, inputKeyMaterial, try cLength(inputKeyMaterial.count)),
            "set HKDF's key"
        )
        try OpenSSLErrorQueue.check(
            EVP_PKEY_CTX_add1_hkdf_info(context, info, try cLength(info.count)),
            "set HKDF's info"
        )
        var length = outputByteCount
        var output = [UInt8](repeating: 0, count: length)
        try OpenSSLErrorQueue.check(EVP_PKEY_derive(context, &output, &length), "derive with HKDF")
        return Array(output.prefix(length))
    }

    public func aesKeyWrap(_ key: [UInt8], kek: [UInt8]) throws -> [UInt8] {
        try self.keyWrap(key, kek: kek, wrap: true)
    }

    public func aesKeyUnwrap(_ wrapped: [UInt8], kek: [UInt8]) throws -> [UInt8] {
        try self.keyWrap(wrapped, kek: kek, wrap: false)
    }

    private func aesCBC(_ input: [UInt8], key: [UInt8], iv: [UInt8], padding: Bool, encrypt: Bool) throws -> [UInt8] {
        let operation = { "AES-CBC-\(encrypt ? "encrypt" : "decrypt")" }
        let cipher = try self.algorithms.cipher(.cbc, keyBytes: key.count)
        guard iv.count == 16 else {
            throw LabError(.cryptoFailure, "AES-CBC needs a 16-byte IV, not \(iv.count) bytes")
        }
        let inputLength = try cLength(input.count)
        return try self.algorithms.cbcContexts.with(cipher: cipher, key: key, iv: iv, encrypt: encrypt) { context in
            try OpenSSLErrorQueue.check(EVP_CIPHER_CTX_set_padding(context, padding ? 1 : 0), operation())
            // Written in place: no zero fill and no copy of what can be 5 MiB.
            return try [UInt8](unsafeUninitializedCapacity: input.count + 16) { buffer, count in
                var length: Int32 = 0
                try OpenSSLErrorQueue.check(
                    EVP_CipherUpdate(context, buffer.baseAddress, &length, input, inputLength),
                    operation()
                )
                var final: Int32 = 0
                guard EVP_CipherFinal_ex(context, buffer.baseAddress! + Int(length), &final) == 1 else {
                    throw OpenSSLErrorQueue.error(padding && !encrypt ? "\(operation()) (bad padding)" : operation())
                }
                count = Int(length) + Int(final)
            }
        }
    }

    private func keyWrap(_ input: [UInt8], kek: [UInt8], wrap: Bool) throws -> [UInt8] {
        let operation = wrap ? "AES-KW wrap" : "AES-KW unwrap"
        let cipher = try self.algorithms.cipher(.wrap, keyBytes: kek.count)
        // RFC 3394: keys of two or more 64-bit blocks; OpenSSL returns nothing, not an error, for empty input.
        let minimum = wrap ? 16 : 24
        guard input.count >= minimum, input.count % 8 == 0, input.count <= 1 << 20 else {
            throw LabError(
                .cryptoFailure,
                "\(operation) takes a multiple of 8 bytes, at least \(minimum); got \(input.count)"
            )
        }
        return try CipherContext.with { context in
            EVP_CIPHER_CTX_set_flags(context, EVP_CIPHER_CTX_FLAG_WRAP_ALLOW)
            try OpenSSLErrorQueue.check(EVP_CipherInit_ex2(context, cipher, kek, nil, wrap ? 1 : 0, nil), operation)
            var output = [UInt8](repeating: 0, count: input.count + 16)
            var length: Int32 = 0
            let updated = EVP_CipherUpdate(context, &output, &length, input, try cLength(input.count))
            // The wrap cipher returns the length processed, or -1/0 on failure.
            guard updated > 0, Int(length) == input.count + (wrap ? 8 : -8) else {
                throw OpenSSLErrorQueue.error(operation)
            }
            return Array(output.prefix(Int(length)))
        }
    }
}
