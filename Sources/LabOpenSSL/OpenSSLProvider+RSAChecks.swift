import CLabOpenSSL
import LabCore

/// The RSA public keys a peer may hand the server, held to BoringSSL's rules (what
/// swift-crypto's `_RSA` applies when it parses a key), so that both providers refuse the
/// same keys: DER's one encoding (no leading zero bytes, no negative integers), a modulus
/// that is odd and at most 16,384 bits, and an exponent that is odd, at least 3, at most
/// 33 bits, and below the modulus. OpenSSL's parser takes keys with e = 1 (then `cryptoK`
/// is the padded session key in clear), e = 2, e = n − 2, and integers with extra bytes.
extension OpenSSLProvider {
    /// BoringSSL's `kMaxExponentBits`: larger exponents cost a verifier time for nothing.
    static let maxExponentBits: Int32 = 33
    /// BoringSSL's `OPENSSL_RSA_MAX_MODULUS_BITS`.
    static let maxModulusBits: Int32 = 16_384

    func requireUsableRSA(_ key: OpenSSLKey, der: [UInt8]) throws {
        // A key re-encodes to its DER only if every integer was minimal and non-negative.
        guard try self.encode(key) == der else {
            throw LabError(
                .badPublicKey,
                "the RSA public key is not in DER's one encoding (an integer with a leading zero byte, or negative)"
            )
        }
        let n = try Self.parameter(key, "n")
        defer { BN_free(n) }
        let e = try Self.parameter(key, "e")
        defer { BN_free(e) }
        let nBits = BN_num_bits(n)
        let eBits = BN_num_bits(e)
        guard BN_is_negative(n) == 0, BN_is_odd(n) == 1, nBits <= Self.maxModulusBits else {
            throw LabError(.badPublicKey, "the RSA modulus must be odd and at most \(Self.maxModulusBits) bits")
        }
        guard BN_is_negative(e) == 0, BN_is_odd(e) == 1, eBits >= 2 else {
            throw LabError(.badPublicKey, "the RSA public exponent must be odd and at least 3")
        }
        guard eBits <= Self.maxExponentBits, BN_ucmp(e, n) < 0 else {
            throw LabError(
                .badPublicKey,
                "the RSA public exponent has \(eBits) bits; at most \(Self.maxExponentBits), and below the modulus"
            )
        }
    }

    private static func parameter(_ key: OpenSSLKey, _ name: String) throws -> OpaquePointer {
        var number: OpaquePointer?
        guard EVP_PKEY_get_bn_param(key.pointer, name, &number) == 1, let number else {
            throw OpenSSLErrorQueue.error("read the RSA key's \(name)", code: .badPublicKey)
        }
        return number
    }
}
