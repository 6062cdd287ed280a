import CBotan
public import LabKit

/// The `botan` provider: Botan 2 (Debian's `libbotan-2-dev`) through its C API, `botan/ffi.h`.
///
/// It does `classic` (from 1024-bit RSA: Botan makes no smaller key), `rsa-modern` and
/// `x25519`; Botan 2 has no ML-KEM or ML-DSA, so not `pq`. Written outside the lab's tree,
/// against the lab as a library: the one protocol every provider implements, the key rules
/// every provider applies (`RSAPublicKeyDER`), and nothing else of the lab's.
public struct BotanProvider: CryptoProvider {
    /// `"botan"`.
    public static let name = "botan"
    /// A `botan_privkey_t`.
    public typealias PrivateKey = BotanPrivateKey
    /// A `botan_pubkey_t`, or X25519's 32 bytes.
    public typealias PublicKey = BotanPublicKey

    let random: BotanRandom

    /// Starts Botan's thread-safe random generator.
    public init() throws {
        self.random = try BotanRandom()
    }

    /// E.g. `Botan 2.19.3 (released 20221116, distribution Debian)`.
    public var version: String { String(cString: botan_version_string()) }

    public var capabilities: ProviderCapabilities {
        var primitives = Set(Primitive.allCases)
        primitives.remove(.mlkem768)
        primitives.remove(.mldsa65)
        return ProviderCapabilities(
            primitives: primitives,
            rsaBits: 1024...16384,
            notes: [
                .mlkem768: "Botan 2 has no ML-KEM (Botan 3.6 added it)",
                .mldsa65: "Botan 2 has no ML-DSA (Botan 3.6 added it)",
            ]
        )
    }

    public func randomBytes(count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        try Botan.check(botan_rng_get(self.random.handle, &bytes, count), "produce random bytes")
        return bytes
    }

    public func generatePrivateKey(_ spec: KeySpec) throws -> BotanPrivateKey {
        switch spec {
        case .rsa(let bits, _):
            if let reason = self.capabilities.missing([], rsaBits: bits) {
                throw LabError(.unsupported, "botan cannot make a \(bits)-bit RSA key: \(reason)")
            }
            return try BotanPrivateKey(spec.type, { botan_privkey_create($0, "RSA", "\(bits)", self.random.handle) }, "make an RSA key")
        case .x25519:
            return try BotanPrivateKey(.x25519, { botan_privkey_create($0, "Curve25519", "", self.random.handle) }, "make an X25519 key")
        case .ed25519:
            return try BotanPrivateKey(.ed25519, { botan_privkey_create($0, "Ed25519", "", self.random.handle) }, "make an Ed25519 key")
        case .mlkem768, .mldsa65:
            throw self.unsupported(spec.type)
        }
    }

    public func publicKey(for privateKey: BotanPrivateKey) throws -> BotanPublicKey {
        let exported = try BotanPublicKey(privateKey.type, { botan_privkey_export_pubkey($0, privateKey.handle) }, "export a public key")
        guard privateKey.type == .x25519 else { return exported }
        var raw = [UInt8](repeating: 0, count: 32)
        try Botan.check(botan_pubkey_x25519_get_pubkey(try exported.object(), &raw), "read an X25519 public key")
        return BotanPublicKey(x25519: raw)
    }

    public func encode(_ publicKey: BotanPublicKey) throws -> [UInt8] {
        switch publicKey.type {
        case .rsa:
            let (n, e) = try publicKey.rsaNumbers()
            return RSAPublicKeyDER.encode(modulus: try n.bigEndian(), exponent: try e.bigEndian())
        case .x25519:
            return publicKey.raw
        case .ed25519:
            var raw = [UInt8](repeating: 0, count: 32)
            try Botan.check(botan_pubkey_ed25519_get_pubkey(try publicKey.object(), &raw), "read an Ed25519 public key")
            return raw
        case .mlkem768, .mldsa65:
            throw self.unsupported(publicKey.type)
        }
    }

    public func decodePublicKey(_ bytes: [UInt8], type: KeyType) throws -> BotanPublicKey {
        switch type {
        case .rsa:
            let (modulus, exponent) = try RSAPublicKeyDER.parse(bytes)
            let n = try BotanInteger(bigEndian: modulus)
            let e = try BotanInteger(bigEndian: exponent)
            let bits = try n.bits()
            if let reason = self.capabilities.missing([], rsaBits: bits) {
                throw LabError(.badPublicKey, "botan takes no \(bits)-bit RSA key: \(reason)")
            }
            return try BotanPublicKey(type, { botan_pubkey_load_rsa($0, n.handle, e.handle) }, "read an RSA public key")
        case .x25519:
            try self.requireLength(bytes, 32, type)
            return BotanPublicKey(x25519: bytes)
        case .ed25519:
            try self.requireLength(bytes, 32, type)
            return try BotanPublicKey(type, { botan_pubkey_load_ed25519($0, bytes) }, "read an Ed25519 public key")
        case .mlkem768, .mldsa65:
            throw self.unsupported(type)
        }
    }

    public func decodePrivateKey(_ bytes: [UInt8], type: KeyType) throws -> BotanPrivateKey {
        switch type {
        case .rsa:
            // PKCS#8 first, then PKCS#1's bare RSAPrivateKey.
            if let key = try? BotanPrivateKey(type, { botan_privkey_load($0, self.random.handle, bytes, bytes.count, nil) }, "") {
                return key
            }
            return try BotanPrivateKey(type, { botan_privkey_load_rsa_pkcs1($0, bytes, bytes.count) }, "read an RSA private key")
        case .x25519:
            try self.requireLength(bytes, 32, type)
            return try BotanPrivateKey(type, { botan_privkey_load_x25519($0, bytes) }, "read an X25519 private key")
        case .ed25519:
            try self.requireLength(bytes, 32, type)
            return try BotanPrivateKey(type, { botan_privkey_load_ed25519($0, bytes) }, "read an Ed25519 private key")
        case .mlkem768, .mldsa65:
            throw self.unsupported(type)
        }
    }

    public func rsaBits(of publicKey: BotanPublicKey) -> Int? {
        guard case .rsa = publicKey.type else { return nil }
        return try? publicKey.rsaNumbers().modulus.bits()
    }

    func unsupported(_ type: KeyType) -> LabError {
        let primitive: Primitive = type == .mlkem768 ? .mlkem768 : .mldsa65
        return LabError(.unsupported, "botan: \(self.capabilities.notes[primitive] ?? "no \(type)")")
    }

    func requireLength(_ bytes: [UInt8], _ count: Int, _ type: KeyType) throws {
        guard bytes.count == count else {
            throw LabError(.badPublicKey, "a \(type) key is \(count) bytes, not \(bytes.count)")
        }
    }
}
