import CLabOpenSSL
import LabCore

/// What the provider's operations share: errors, the RSA cipher, digest contexts.
extension OpenSSLProvider {
    func unsupported(_ type: KeyType) -> LabError {
        LabError(.unsupported, "openssl (\(self.version)) has no \(type); the swift-crypto provider has it")
    }

    func rsaCipher(
        _ input: [UInt8],
        key: OpenSSLKey,
        padding: RSAEncryptionPadding,
        encrypt: Bool
    ) throws -> [UInt8] {
        let operation = "\(encrypt ? "encrypt" : "decrypt") with \(padding)"
        guard case .rsa = key.type else { throw LabError(.cryptoFailure, "openssl: RSA \(operation) needs an RSA key") }
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else {
            throw OpenSSLErrorQueue.error(operation)
        }
        defer { EVP_PKEY_CTX_free(context) }
        try OpenSSLErrorQueue.check(
            encrypt ? EVP_PKEY_encrypt_init(context) : EVP_PKEY_decrypt_init(context),
            operation
        )
        switch padding {
        case .pkcs1v15:
            try OpenSSLErrorQueue.check(EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PADDING), operation)
        case .oaep(let hash):
            let digest = self.algorithms.digest(hash)
            try OpenSSLErrorQueue.check(EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_OAEP_PADDING), operation)
            try OpenSSLErrorQueue.check(EVP_PKEY_CTX_set_rsa_oaep_md(context, digest), operation)
            try OpenSSLErrorQueue.check(EVP_PKEY_CTX_set_rsa_mgf1_md(context, digest), operation)
        }
        var length = 0
        let sized =
            encrypt
            ? EVP_PKEY_encrypt(context, nil, &length, input, input.count)
            : EVP_PKEY_decrypt(context, nil, &length, input, input.count)
        try OpenSSLErrorQueue.check(sized, operation)
        var output = [UInt8](repeating: 0, count: length)
        let done =
            encrypt
            ? EVP_PKEY_encrypt(context, &output, &length, input, input.count)
            : EVP_PKEY_decrypt(context, &output, &length, input, input.count)
        try OpenSSLErrorQueue.check(done, operation)
        return Array(output.prefix(length))
    }

    func withDigestContext<T>(
        _ key: OpenSSLKey,
        scheme: SignatureScheme,
        signing: Bool,
        _ body: (OpaquePointer) throws -> T
    ) throws -> T {
        let operation = { "\(signing ? "sign" : "verify") with \(scheme)" }
        let digest: OpaquePointer?
        switch (scheme, key.type) {
        case (.rsaPKCS1v15(let hash), .rsa), (.rsaPSS(let hash), .rsa):
            digest = self.algorithms.digest(hash)
        case (.ed25519, .ed25519):
            digest = nil
        case (.mldsa65, _):
            throw self.unsupported(.mldsa65)
        default:
            throw LabError(.cryptoFailure, "openssl: \(operation()) needs a matching key, not \(key.type)")
        }
        guard let context = EVP_MD_CTX_new() else { throw OpenSSLErrorQueue.error(operation()) }
        defer { EVP_MD_CTX_free(context) }
        var keyContext: OpaquePointer?
        let started =
            signing
            ? EVP_DigestSignInit(context, &keyContext, digest, nil, key.pointer)
            : EVP_DigestVerifyInit(context, &keyContext, digest, nil, key.pointer)
        try OpenSSLErrorQueue.check(started, operation())
        if case .rsaPSS(let hash) = scheme {
            try OpenSSLErrorQueue.check(EVP_PKEY_CTX_set_rsa_padding(keyContext, RSA_PKCS1_PSS_PADDING), operation())
            try OpenSSLErrorQueue.check(
                EVP_PKEY_CTX_set_rsa_pss_saltlen(keyContext, Int32(hash.byteCount)),
                operation()
            )
            try OpenSSLErrorQueue.check(EVP_PKEY_CTX_set_rsa_mgf1_md(keyContext, digest), operation())
        }
        return try body(context)
    }
}
