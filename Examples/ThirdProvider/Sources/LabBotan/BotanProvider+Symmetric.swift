import CBotan
import LabKit

extension BotanProvider {
    public func aesCBCEncrypt(_ plaintext: [UInt8], key: [UInt8], iv: [UInt8], padding: Bool) throws -> [UInt8] {
        try self.cipher("AES-\(key.count * 8)/CBC/\(padding ? "PKCS7" : "NoPadding")", encrypt: true, key: key, nonce: iv, input: plaintext)
    }

    public func aesCBCDecrypt(_ ciphertext: [UInt8], key: [UInt8], iv: [UInt8], padding: Bool) throws -> [UInt8] {
        try self.cipher("AES-\(key.count * 8)/CBC/\(padding ? "PKCS7" : "NoPadding")", encrypt: false, key: key, nonce: iv, input: ciphertext)
    }

    public func aesGCMSeal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8]) throws -> [UInt8] {
        try self.cipher("AES-\(key.count * 8)/GCM", encrypt: true, key: key, nonce: nonce, aad: aad, input: plaintext)
    }

    public func aesGCMOpen(_ sealed: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8]) throws -> [UInt8] {
        try self.cipher("AES-\(key.count * 8)/GCM", encrypt: false, key: key, nonce: nonce, aad: aad, input: sealed)
    }

    /// One whole message through the Botan cipher `name`.
    private func cipher(
        _ name: String,
        encrypt: Bool,
        key: [UInt8],
        nonce: [UInt8],
        aad: [UInt8]? = nil,
        input: [UInt8]
    ) throws -> [UInt8] {
        guard [16, 24, 32].contains(key.count) else {
            throw LabError(.cryptoFailure, "AES keys are 16, 24 or 32 bytes, not \(key.count)")
        }
        var cipher: botan_cipher_t?
        let direction = UInt32(encrypt ? BOTAN_CIPHER_INIT_FLAG_ENCRYPT : BOTAN_CIPHER_INIT_FLAG_DECRYPT)
        try Botan.check(botan_cipher_init(&cipher, name, direction), "set up \(name)")
        defer { botan_cipher_destroy(cipher) }
        try Botan.check(botan_cipher_set_key(cipher, key, key.count), "take a \(name) key")
        if let aad { try Botan.check(botan_cipher_set_associated_data(cipher, aad, aad.count), "take associated data") }
        try Botan.check(botan_cipher_start(cipher, nonce, nonce.count), "take a \(nonce.count)-byte \(name) nonce")
        var output = [UInt8](repeating: 0, count: input.count + 32)
        var written = 0
        var consumed = 0
        let code = botan_cipher_update(
            cipher, UInt32(BOTAN_CIPHER_UPDATE_FLAG_FINAL), &output, output.count, &written, input, input.count, &consumed
        )
        if code == Botan.badMAC {
            throw LabError(.cryptoFailure, "the AES-GCM tag does not authenticate the message")
        }
        try Botan.check(code, "\(encrypt ? "encrypt" : "decrypt") with \(name)")
        return Array(output.prefix(written))
    }
}
