/// The RSA public keys a peer may hand the server, held to BoringSSL's rules (what
/// swift-crypto's `_RSA` applies when it parses a key), so that both providers refuse the
/// same keys: DER's one encoding (definite minimal lengths, integers without a leading zero
/// byte, none negative), a modulus that is odd and at most 16,384 bits, and an exponent that
/// is odd, at least 3 and at most 33 bits (so below any modulus of 512 bits or more).
/// OpenSSL's parser takes keys with e = 1 (then `cryptoK` is the padded session key in clear),
/// e = 2, e = n − 2, and integers with extra bytes.
///
/// Read from the DER itself, before a backend sees it: asking OpenSSL for n and e
/// (`EVP_PKEY_get_bn_param`) and re-encoding the key cost 138,000 instructions a key, 28%
/// of an rsa-modern `wrap` (the counted gate's figure). Every provider's `decodePublicKey`
/// applies them (a provider outside the lab too), and one whose backend takes n and e
/// apart (Botan's) reads them from `parse`.
public enum RSAPublicKeyDER {
    /// BoringSSL's `kMaxExponentBits`: larger exponents cost a verifier time for nothing.
    public static let maxExponentBits = 33
    /// BoringSSL's `OPENSSL_RSA_MAX_MODULUS_BITS`.
    public static let maxModulusBits = 16_384

    /// Throws `badPublicKey` unless `der` is a PKCS#1 `RSAPublicKey` these rules allow.
    public static func check(_ der: [UInt8]) throws {
        _ = try self.parse(der)
    }

    /// The modulus and the public exponent of `der` (big-endian magnitudes, a leading zero
    /// byte where the top bit is set), or `badPublicKey` unless these rules allow the key.
    public static func parse(_ der: [UInt8]) throws -> (modulus: ArraySlice<UInt8>, exponent: ArraySlice<UInt8>) {
        var reader = DERReader(der)
        var sequence = try reader.element(tag: 0x30, "the key")
        guard reader.isAtEnd else { throw Self.refusal("bytes follow the key's SEQUENCE") }
        let n = try sequence.integer("the modulus")
        let e = try sequence.integer("the public exponent")
        guard sequence.isAtEnd else { throw Self.refusal("the SEQUENCE holds more than n and e") }
        guard n.last.map({ $0 & 1 == 1 }) == true, Self.bits(n) <= Self.maxModulusBits else {
            throw LabError(.badPublicKey, "the RSA modulus must be odd and at most \(Self.maxModulusBits) bits")
        }
        guard e.last.map({ $0 & 1 == 1 }) == true, Self.bits(e) >= 2 else {
            throw LabError(.badPublicKey, "the RSA public exponent must be odd and at least 3")
        }
        guard Self.bits(e) <= Self.maxExponentBits, Self.bits(e) < Self.bits(n) else {
            throw LabError(
                .badPublicKey,
                "the RSA public exponent has \(Self.bits(e)) bits; at most \(Self.maxExponentBits), and below the modulus"
            )
        }
        return (n, e)
    }

    /// The PKCS#1 `RSAPublicKey` DER of a modulus and an exponent (big-endian, any leading zeros).
    public static func encode(modulus: some Collection<UInt8>, exponent: some Collection<UInt8>) -> [UInt8] {
        let body = Self.integer(modulus) + Self.integer(exponent)
        return [0x30] + Self.length(body.count) + body
    }

    private static func integer(_ magnitude: some Collection<UInt8>) -> [UInt8] {
        var bytes = Array(magnitude.drop { $0 == 0 })
        if bytes.first.map({ $0 & 0x80 != 0 }) ?? true { bytes.insert(0, at: 0) }
        return [0x02] + Self.length(bytes.count) + bytes
    }

    private static func length(_ count: Int) -> [UInt8] {
        guard count >= 0x80 else { return [UInt8(count)] }
        var bytes: [UInt8] = []
        var rest = count
        while rest > 0 {
            bytes.insert(UInt8(rest & 0xFF), at: 0)
            rest >>= 8
        }
        return [0x80 | UInt8(bytes.count)] + bytes
    }

    /// The bits of a minimal big-endian magnitude.
    static func bits(_ magnitude: ArraySlice<UInt8>) -> Int {
        guard let first = magnitude.first(where: { $0 != 0 }) else { return 0 }
        let leadingZeros = magnitude.prefix { $0 == 0 }.count
        return (magnitude.count - leadingZeros - 1) * 8 + (8 - first.leadingZeroBitCount)
    }

    static func refusal(_ reason: String) -> LabError {
        LabError(.badPublicKey, "the RSA public key is not in DER's one encoding: \(reason)")
    }
}

/// A strict reader of DER's tag-length-value elements.
private struct DERReader {
    private let bytes: ArraySlice<UInt8>
    private var index: Int

    init(_ bytes: [UInt8]) {
        self.init(bytes[...])
    }

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        self.index = bytes.startIndex
    }

    var isAtEnd: Bool { self.index == self.bytes.endIndex }

    /// The next element's contents, which must carry `tag`.
    mutating func element(tag: UInt8, _ what: String) throws -> DERReader {
        guard self.index < self.bytes.endIndex, self.bytes[self.index] == tag else {
            throw RSAPublicKeyDER.refusal("\(what) is not where it should be")
        }
        self.index += 1
        let length = try self.length(what)
        guard length <= self.bytes.endIndex - self.index else { throw RSAPublicKeyDER.refusal("\(what) is cut short") }
        let contents = self.bytes[self.index..<(self.index + length)]
        self.index += length
        return DERReader(contents)
    }

    /// A non-negative INTEGER's magnitude, in its minimal encoding.
    mutating func integer(_ what: String) throws -> ArraySlice<UInt8> {
        let contents = try self.element(tag: 0x02, what).bytes
        guard let first = contents.first else { throw RSAPublicKeyDER.refusal("\(what) is empty") }
        guard first & 0x80 == 0 else { throw RSAPublicKeyDER.refusal("\(what) is negative") }
        if first == 0, contents.count > 1, contents[contents.startIndex + 1] & 0x80 == 0 {
            throw RSAPublicKeyDER.refusal("\(what) has a leading zero byte")
        }
        return contents
    }

    /// A definite length in its shortest form.
    private mutating func length(_ what: String) throws -> Int {
        guard self.index < self.bytes.endIndex else { throw RSAPublicKeyDER.refusal("\(what) has no length") }
        let first = self.bytes[self.index]
        self.index += 1
        guard first & 0x80 != 0 else { return Int(first) }
        let count = Int(first & 0x7F)
        guard (1...4).contains(count), count <= self.bytes.endIndex - self.index else {
            throw RSAPublicKeyDER.refusal("\(what) has a length DER does not allow")
        }
        var length = 0
        for byte in self.bytes[self.index..<(self.index + count)] { length = length << 8 | Int(byte) }
        guard self.bytes[self.index] != 0, length >= 0x80 else {
            throw RSAPublicKeyDER.refusal("\(what)'s length is not in its shortest form")
        }
        self.index += count
        return length
    }
}
