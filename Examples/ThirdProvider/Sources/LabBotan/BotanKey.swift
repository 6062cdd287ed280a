import CBotan
public import LabKit

/// A Botan private key (`botan_privkey_t`) of one `KeyType`, freed when it goes. Botan's keys
/// are not changed by the operations made from them, so one may serve many threads.
public final class BotanPrivateKey: @unchecked Sendable {
    let handle: botan_privkey_t
    /// What it is for.
    public let type: KeyType
    /// An RSA key's modulus length in bytes: the one length its ciphertexts may have.
    let modulusBytes: Int

    init(_ type: KeyType, _ make: (UnsafeMutablePointer<botan_privkey_t?>) -> Int32, _ what: String) throws {
        var handle: botan_privkey_t?
        try Botan.check(make(&handle), what)
        self.handle = handle!
        self.type = type
        guard case .rsa = type else {
            self.modulusBytes = 0
            return
        }
        let n = try BotanInteger()
        try Botan.check(botan_privkey_get_field(n.handle, handle, "n"), "read an RSA modulus")
        self.modulusBytes = (try n.bits() + 7) / 8
    }

    deinit { botan_privkey_destroy(self.handle) }
}

/// A Botan public key: a `botan_pubkey_t` for RSA and Ed25519; X25519's is its 32 bytes,
/// which Botan's key agreement takes as they are.
public final class BotanPublicKey: @unchecked Sendable {
    let handle: botan_pubkey_t?
    let raw: [UInt8]
    /// What it is for.
    public let type: KeyType

    init(_ type: KeyType, _ make: (UnsafeMutablePointer<botan_pubkey_t?>) -> Int32, _ what: String) throws {
        var handle: botan_pubkey_t?
        try Botan.check(make(&handle), what)
        self.handle = handle!
        self.raw = []
        self.type = type
    }

    init(x25519 raw: [UInt8]) {
        self.handle = nil
        self.raw = raw
        self.type = .x25519
    }

    /// The handle, for the key types that have one.
    func object() throws -> botan_pubkey_t {
        guard let handle = self.handle else {
            throw LabError(.cryptoFailure, "a \(self.type) public key has no Botan object")
        }
        return handle
    }

    /// An RSA key's modulus and exponent.
    func rsaNumbers() throws -> (modulus: BotanInteger, exponent: BotanInteger) {
        let n = try BotanInteger()
        let e = try BotanInteger()
        try Botan.check(botan_pubkey_get_field(n.handle, try self.object(), "n"), "read an RSA modulus")
        try Botan.check(botan_pubkey_get_field(e.handle, try self.object(), "e"), "read an RSA exponent")
        return (n, e)
    }

    deinit { if let handle = self.handle { botan_pubkey_destroy(handle) } }
}
