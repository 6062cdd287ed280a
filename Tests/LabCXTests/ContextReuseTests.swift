import LabCore
import LabOpenSSL
import LabSwiftCrypto
import LabTestSupport
import Testing

/// The openssl provider reuses its OpenSSL contexts (cipher contexts keep their key
/// schedule when the next call has the same key; RSA contexts are kept per key): every
/// reuse must give what a fresh computation gives, here swift-crypto's.
@Suite(.tier(.unit)) struct ContextReuseTests {
    @Test("AES-CBC on reused contexts: same key with new IVs, a new key, the old key again, both directions")
    func cbcReuse() throws {
        let openssl = try OpenSSLProvider()
        let reference = SwiftCryptoProvider()
        let keys = [
            try reference.randomBytes(count: 16), try reference.randomBytes(count: 16),
            try reference.randomBytes(count: 32),
        ]
        let ivs = [try reference.randomBytes(count: 16), try reference.randomBytes(count: 16)]
        let message = try reference.randomBytes(count: 1000)
        for (key, iv) in [(0, 0), (0, 1), (1, 1), (0, 0), (2, 1), (2, 0), (0, 1)] {
            for padding in [true, false] {
                let input = padding ? message : Array(message.prefix(992))
                let sealed = try openssl.aesCBCEncrypt(input, key: keys[key], iv: ivs[iv], padding: padding)
                #expect(sealed == (try reference.aesCBCEncrypt(input, key: keys[key], iv: ivs[iv], padding: padding)))
                #expect(try openssl.aesCBCDecrypt(sealed, key: keys[key], iv: ivs[iv], padding: padding) == input)
            }
        }
        // A failed decryption (bad padding) must not leave a context that spoils the next call.
        // The last byte of the block before the last is flipped: in CBC that flips the last
        // plaintext byte, the padding's 0x08 (1,000 bytes), to 0xF7, never valid padding.
        // (Flipping a byte of the last block made its plaintext random, and 1 run in about
        // 250 decrypted to valid padding: a CI run of 2026-11-24 failed so.)
        var tampered = try openssl.aesCBCEncrypt(message, key: keys[0], iv: ivs[0], padding: true)
        #expect(message.count % 16 == 8)
        tampered[tampered.count - 17] ^= 0xFF
        #expect(throws: LabError.self) { try openssl.aesCBCDecrypt(tampered, key: keys[0], iv: ivs[0], padding: true) }
        let again = try openssl.aesCBCEncrypt(message, key: keys[0], iv: ivs[0], padding: true)
        #expect(try openssl.aesCBCDecrypt(again, key: keys[0], iv: ivs[0], padding: true) == message)
    }

    @Test("RSA sign and verify on a key's kept contexts, PKCS#1 v1.5 and PSS interleaved, a bad signature between")
    func rsaReuse() throws {
        let openssl = try OpenSSLProvider()
        let reference = SwiftCryptoProvider()
        let key = try openssl.generatePrivateKey(.rsa(bits: 2048, use: .signature))
        let publicKey = try reference.decodePublicKey(
            try openssl.encode(try openssl.publicKey(for: key)),
            type: .rsa(.signature)
        )
        for round in 0..<4 {
            let message = Array("message \(round)".utf8)
            for scheme in [SignatureScheme.rsaPKCS1v15(.sha256), .rsaPSS(.sha256), .rsaPKCS1v15(.sha256)] {
                let signature = try openssl.sign(message, with: key, scheme: scheme)
                #expect(try reference.isValidSignature(signature, for: message, publicKey: publicKey, scheme: scheme))
                #expect(try openssl.isValidSignature(signature, for: message, publicKey: key, scheme: scheme))
                var bad = signature
                bad[0] ^= 1
                #expect(!(try openssl.isValidSignature(bad, for: message, publicKey: key, scheme: scheme)))
                #expect(!(try openssl.isValidSignature(signature, for: message + [0], publicKey: key, scheme: scheme)))
            }
        }
    }
}
