public import Crypto
import Foundation
public import LabCore

/// The HPKE suite msg/1 seals passwords and wraps chat keys with (docs/protocol.md §4.7):
/// the server's choice (`MessagingOptions.hpke`, `lab serve --hpke`), announced with every
/// captcha; its users' keys are of its kind.
public enum MsgHPKE: String, Sendable, Hashable, CaseIterable {
    /// DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, ChaCha20-Poly1305 (RFC 9180): the default.
    case x25519
    /// X-Wing (ML-KEM-768 and X25519, KEM 0x647a), HKDF-SHA256, AES-256-GCM: a hybrid
    /// post-quantum KEM; keys of 1,216 bytes, encapsulations of 1,120.
    case xwing

    /// swift-crypto's ciphersuite.
    public var ciphersuite: HPKE.Ciphersuite {
        switch self {
        case .x25519: .Curve25519_SHA256_ChachaPoly
        case .xwing: .XWingMLKEM768X25519_SHA256_AES_GCM_256
        }
    }

    /// Why `key` (of `publicKeyBytes`) cannot be a recipient's key of this suite, or nil.
    /// X25519 (X-Wing's last 32 bytes, after the ML-KEM-768 key) must not be a low-order
    /// point: every shared secret with one is all zeros (RFC 7748 §6.1), so whatever is
    /// wrapped to it is wrapped with a key anyone can compute. X-Wing's ML-KEM part must be a
    /// key swift-crypto accepts.
    public func unusableKey(_ key: [UInt8]) -> String? {
        let x25519: [UInt8]
        switch self {
        case .x25519:
            x25519 = key
        case .xwing:
            guard (try? XWingMLKEM768X25519.PublicKey(rawRepresentation: key)) != nil else {
                return "not an X-Wing public key swift-crypto accepts"
            }
            x25519 = Array(key.suffix(32))
        }
        guard let peer = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: x25519),
            let secret = try? Curve25519.KeyAgreement.PrivateKey().sharedSecretFromKeyAgreement(with: peer)
        else { return "not an X25519 public key" }
        // swift-crypto returns the all-zero secret of a low-order point; checked without
        // branching on its bytes.
        let zero = secret.withUnsafeBytes { $0.reduce(0, |) } == 0
        return zero ? "a low-order X25519 point (every shared secret with it is zero)" : nil
    }

    /// A public key's size.
    public var publicKeyBytes: Int {
        switch self {
        case .x25519: 32
        case .xwing: 1_216
        }
    }

    /// An encapsulated key's size (the start of every sealed value).
    public var encapsulatedBytes: Int {
        switch self {
        case .x25519: 32
        case .xwing: 1_120
        }
    }

    /// The KEM's name in messages: `X25519`, `X-Wing`.
    public var kemName: String {
        switch self {
        case .x25519: "X25519"
        case .xwing: "X-Wing"
        }
    }
}

/// A msg/1 private key of either suite: the server's password-sealing key, a user's chat key.
public struct MsgKeyPair: Sendable {
    enum Key: Sendable {
        case x25519(Curve25519.KeyAgreement.PrivateKey)
        case xwing(XWingMLKEM768X25519.PrivateKey)
    }

    let key: Key

    /// A fresh key of `suite`.
    public init(suite: MsgHPKE = .x25519) {
        switch suite {
        case .x25519: self.key = .x25519(Curve25519.KeyAgreement.PrivateKey())
        // Generation fails only when the system's random source does.
        case .xwing: self.key = .xwing(try! XWingMLKEM768X25519.PrivateKey())
        }
    }

    /// An X25519 key given.
    public init(x25519 key: Curve25519.KeyAgreement.PrivateKey) {
        self.key = .x25519(key)
    }

    /// An X-Wing key from its 32-byte seed (draft-connolly-cfrg-xwing-kem's private key).
    public init(xwingSeed seed: [UInt8]) throws {
        self.key = .xwing(try XWingMLKEM768X25519.PrivateKey(seedRepresentation: seed, publicKey: nil))
    }

    /// The suite the key belongs to.
    public var suite: MsgHPKE {
        switch self.key {
        case .x25519: .x25519
        case .xwing: .xwing
        }
    }

    /// The public key as msg/1 sends it: raw X25519 (32 bytes) or X-Wing's encoding (1,216).
    public var publicKey: [UInt8] {
        switch self.key {
        case .x25519(let key): Array(key.publicKey.rawRepresentation)
        case .xwing(let key): Array(key.publicKey.rawRepresentation)
        }
    }
}

/// The end-to-end cryptography of msg/1, on swift-crypto (docs/protocol.md §4.7):
///
/// - Passwords never cross the wire in the clear: the client seals each to the server's
///   key with HPKE (RFC 9180, base mode, the server's `MsgHPKE` suite), binding the
///   operation, the user name and the single-use captcha (or the session token) through
///   HPKE's `info`, so a sealed password cannot be replayed.
/// - A chat key (AES-256) is made by a client and reaches the server only wrapped with HPKE
///   for each participant's key; the `info` names the two users and the key version.
/// - The associated data of every HPKE seal is empty: the binding is all in `info`, which
///   every HPKE API takes (Python's `cryptography` takes no associated data at all).
/// - Messages are AES-256-GCM under the chat key: 12-byte random nonce ‖ ciphertext ‖ tag,
///   with the sender's name as associated data. Messages and chat keys are made on the
///   flow's provider (the scenario entry's `provider`), so any backend with AES-GCM runs
///   them; HPKE stays on swift-crypto, the one provider with HPKE and ChaCha20-Poly1305.
public enum MsgCrypto {
    /// The first line of a sealed password's `info`.
    static let passwordLabel = "crypto-lab msg/1 password"
    /// The first line of a wrapped chat key's `info`.
    static let chatKeyLabel = "crypto-lab msg/1 chat key"

    /// The HPKE `info` of a sealed password: `crypto-lab msg/1 password`, `op`, `field`,
    /// `binding` (user name and captcha id, or the token), joined by newlines.
    public static func passwordContext(op: MsgOp, field: String, binding: [String]) -> [UInt8] {
        Array(([Self.passwordLabel, op.rawValue, field] + binding).joined(separator: "\n").utf8)
    }

    /// Seals `password` to `serverKey` (a public key of `suite`): encapsulated key ‖ ciphertext.
    public static func sealPassword(
        _ password: String,
        to serverKey: [UInt8],
        suite: MsgHPKE = .x25519,
        context: [UInt8]
    ) throws -> [UInt8] {
        try Self.sealPassword(bytes: Array(password.utf8), to: serverKey, suite: suite, context: context)
    }

    /// Seals any plaintext as a password (tests: a plaintext that is not UTF-8 is refused).
    public static func sealPassword(
        bytes: [UInt8],
        to serverKey: [UInt8],
        suite: MsgHPKE = .x25519,
        context: [UInt8]
    ) throws -> [UInt8] {
        try Self.seal(bytes, to: serverKey, suite: suite, info: context)
    }

    /// Opens a sealed password with the server's private key; nil if it does not open.
    static func openPassword(_ sealed: [UInt8], with key: MsgKeyPair, context: [UInt8]) -> [UInt8]? {
        Self.open(sealed, with: key, info: context)
    }

    /// The HPKE `info` of a wrapped chat key: `crypto-lab msg/1 chat key`, the lower name,
    /// the higher name (ordered by their bytes), `v` and the version, joined by newlines.
    public static func chatKeyContext(users: (String, String), version: Int) -> [UInt8] {
        let (a, b) = Array(users.0.utf8).lexicographicallyPrecedes(Array(users.1.utf8)) ? users : (users.1, users.0)
        return Array("\(Self.chatKeyLabel)\n\(a)\n\(b)\nv\(version)".utf8)
    }

    /// Wraps a 32-byte chat key for `publicKey` (a public key of `suite`).
    public static func wrapChatKey(
        _ key: SymmetricKey,
        for publicKey: [UInt8],
        suite: MsgHPKE = .x25519,
        context: [UInt8]
    ) throws -> [UInt8] {
        try key.withUnsafeBytes { raw in
            try Self.seal(Array(raw), to: publicKey, suite: suite, info: context)
        }
    }

    /// Unwraps a chat key with the participant's private key.
    public static func unwrapChatKey(_ wrapped: [UInt8], with key: MsgKeyPair, context: [UInt8]) throws -> SymmetricKey
    {
        guard let raw = Self.open(wrapped, with: key, info: context), raw.count == 32 else {
            throw MsgVerdict(.unwrapFailed, "The chat key did not unwrap with this user's key")
        }
        return SymmetricKey(data: raw)
    }

    /// The bytes of a message's nonce: AES-GCM's 96 bits.
    static let nonceBytes = 12
    /// The bytes of a message's tag.
    static let tagBytes = 16

    /// Encrypts a message on `provider`: a fresh random nonce ‖ ciphertext ‖ tag, the
    /// sender's name as associated data.
    public static func encrypt(
        _ plaintext: [UInt8],
        key: SymmetricKey,
        sender: String,
        provider: any CryptoProvider
    ) throws -> [UInt8] {
        let nonce = try provider.randomBytes(count: Self.nonceBytes)
        let sealed = try key.withUnsafeBytes { key in
            try provider.aesGCMSeal(plaintext, key: Array(key), nonce: nonce, aad: Array(sender.utf8))
        }
        return nonce + sealed
    }

    /// Decrypts a message on `provider`; throws `decryptFailed` if it is too short to hold a
    /// nonce and a tag, or does not authenticate.
    public static func decrypt(
        _ ciphertext: [UInt8],
        key: SymmetricKey,
        sender: String,
        provider: any CryptoProvider
    ) throws -> [UInt8] {
        guard ciphertext.count >= Self.nonceBytes + Self.tagBytes else {
            throw MsgVerdict(.decryptFailed, "A message of \(ciphertext.count) bytes is shorter than a nonce and a tag")
        }
        do {
            return try key.withUnsafeBytes { key in
                try provider.aesGCMOpen(
                    Array(ciphertext.dropFirst(Self.nonceBytes)),
                    key: Array(key),
                    nonce: Array(ciphertext.prefix(Self.nonceBytes)),
                    aad: Array(sender.utf8)
                )
            }
        } catch {
            throw MsgVerdict(.decryptFailed, "A message did not decrypt under the chat key")
        }
    }

    /// A fresh AES-256 chat key from `provider`'s random source.
    public static func chatKey(provider: any CryptoProvider) throws -> SymmetricKey {
        SymmetricKey(data: try provider.randomBytes(count: 32))
    }

    /// Single-shot HPKE to `publicKey` with `info` and empty associated data: enc ‖ ciphertext.
    private static func seal(
        _ plaintext: [UInt8],
        to publicKey: [UInt8],
        suite: MsgHPKE,
        info: [UInt8]
    ) throws -> [UInt8] {
        do {
            var sender: HPKE.Sender
            switch suite {
            case .x25519:
                let recipient = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: publicKey)
                sender = try HPKE.Sender(recipientKey: recipient, ciphersuite: suite.ciphersuite, info: Data(info))
            case .xwing:
                let recipient = try XWingMLKEM768X25519.PublicKey(rawRepresentation: publicKey)
                sender = try HPKE.Sender(recipientKey: recipient, ciphersuite: suite.ciphersuite, info: Data(info))
            }
            let ciphertext = try sender.seal(plaintext, authenticating: Data())
            return Array(sender.encapsulatedKey) + Array(ciphertext)
        } catch {
            throw LabError(
                .badPublicKey,
                "Could not seal to that \(suite.kemName) key (\(publicKey.count) bytes; \(suite.publicKeyBytes) expected)",
                cause: UnderlyingError(describing: error)
            )
        }
    }

    private static func open(_ sealed: [UInt8], with key: MsgKeyPair, info: [UInt8]) -> [UInt8]? {
        let suite = key.suite
        guard sealed.count > suite.encapsulatedBytes else { return nil }
        let encapsulated = Data(sealed.prefix(suite.encapsulatedBytes))
        do {
            var recipient: HPKE.Recipient
            switch key.key {
            case .x25519(let privateKey):
                recipient = try HPKE.Recipient(
                    privateKey: privateKey,
                    ciphersuite: suite.ciphersuite,
                    info: Data(info),
                    encapsulatedKey: encapsulated
                )
            case .xwing(let privateKey):
                recipient = try HPKE.Recipient(
                    privateKey: privateKey,
                    ciphersuite: suite.ciphersuite,
                    info: Data(info),
                    encapsulatedKey: encapsulated
                )
            }
            return Array(try recipient.open(sealed.dropFirst(suite.encapsulatedBytes), authenticating: Data()))
        } catch {
            return nil
        }
    }
}
