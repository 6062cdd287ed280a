public import Crypto
import Foundation
import LabCore

/// The end-to-end cryptography of msg/1, on swift-crypto (docs/protocol.md §4.7):
///
/// - Passwords never cross the wire in the clear: the client seals each to the server's
///   X25519 key with HPKE (RFC 9180, base mode, DHKEM(X25519, HKDF-SHA256), HKDF-SHA256,
///   ChaCha20-Poly1305), binding the operation, the user name and the single-use captcha
///   (or the session token) through HPKE's `info`, so a sealed password cannot be replayed.
/// - A chat key (AES-256) is made by a client and reaches the server only wrapped with HPKE
///   for each participant's X25519 key; the `info` names the two users and the key version.
/// - The associated data of every HPKE seal is empty: the binding is all in `info`, which
///   every HPKE API takes (Python's `cryptography` takes no associated data at all).
/// - Messages are AES-256-GCM under the chat key: 12-byte random nonce ‖ ciphertext ‖ tag,
///   with the sender's name as associated data.
public enum MsgCrypto {
    /// The HPKE suite.
    public static let ciphersuite = HPKE.Ciphersuite.Curve25519_SHA256_ChachaPoly
    /// The first line of a sealed password's `info`.
    static let passwordLabel = "crypto-lab msg/1 password"
    /// The first line of a wrapped chat key's `info`.
    static let chatKeyLabel = "crypto-lab msg/1 chat key"
    /// The encapsulated key's size for X25519.
    static let encapsulatedBytes = 32

    /// The HPKE `info` of a sealed password: `crypto-lab msg/1 password`, `op`, `field`,
    /// `binding` (user name and captcha id, or the token), joined by newlines.
    public static func passwordContext(op: MsgOp, field: String, binding: [String]) -> [UInt8] {
        Array(([Self.passwordLabel, op.rawValue, field] + binding).joined(separator: "\n").utf8)
    }

    /// Seals `password` to `serverKey` (raw X25519): encapsulated key ‖ ciphertext.
    public static func sealPassword(_ password: String, to serverKey: [UInt8], context: [UInt8]) throws -> [UInt8] {
        try Self.sealPassword(bytes: Array(password.utf8), to: serverKey, context: context)
    }

    /// Seals any plaintext as a password (tests: a plaintext that is not UTF-8 is refused).
    public static func sealPassword(bytes: [UInt8], to serverKey: [UInt8], context: [UInt8]) throws -> [UInt8] {
        try Self.seal(bytes, to: serverKey, info: context)
    }

    /// Opens a sealed password with the server's private key; nil if it does not open.
    static func openPassword(
        _ sealed: [UInt8],
        with key: Curve25519.KeyAgreement.PrivateKey,
        context: [UInt8]
    ) -> [UInt8]? {
        Self.open(sealed, with: key, info: context)
    }

    /// The HPKE `info` of a wrapped chat key: `crypto-lab msg/1 chat key`, the lower name,
    /// the higher name (ordered by their bytes), `v` and the version, joined by newlines.
    public static func chatKeyContext(users: (String, String), version: Int) -> [UInt8] {
        let (a, b) = Array(users.0.utf8).lexicographicallyPrecedes(Array(users.1.utf8)) ? users : (users.1, users.0)
        return Array("\(Self.chatKeyLabel)\n\(a)\n\(b)\nv\(version)".utf8)
    }

    /// Wraps a 32-byte chat key for `publicKey` (raw X25519).
    public static func wrapChatKey(_ key: SymmetricKey, for publicKey: [UInt8], context: [UInt8]) throws -> [UInt8] {
        try key.withUnsafeBytes { raw in
            try Self.seal(Array(raw), to: publicKey, info: context)
        }
    }

    /// Unwraps a chat key with the participant's private key.
    public static func unwrapChatKey(
        _ wrapped: [UInt8],
        with key: Curve25519.KeyAgreement.PrivateKey,
        context: [UInt8]
    ) throws -> SymmetricKey {
        guard let raw = Self.open(wrapped, with: key, info: context), raw.count == 32 else {
            throw MsgVerdict(.unwrapFailed, "The chat key did not unwrap with this user's key")
        }
        return SymmetricKey(data: raw)
    }

    /// Encrypts a message: nonce ‖ ciphertext ‖ tag.
    public static func encrypt(_ plaintext: [UInt8], key: SymmetricKey, sender: String) throws -> [UInt8] {
        do {
            let box = try AES.GCM.seal(plaintext, using: key, authenticating: Array(sender.utf8))
            return Array(box.combined!)
        } catch {
            throw LabError(.cryptoFailure, "AES-256-GCM sealing failed", cause: UnderlyingError(describing: error))
        }
    }

    /// Decrypts a message; throws `decryptFailed` if it does not authenticate.
    public static func decrypt(_ ciphertext: [UInt8], key: SymmetricKey, sender: String) throws -> [UInt8] {
        do {
            let box = try AES.GCM.SealedBox(combined: ciphertext)
            return Array(try AES.GCM.open(box, using: key, authenticating: Array(sender.utf8)))
        } catch {
            throw MsgVerdict(.decryptFailed, "A message did not decrypt under the chat key")
        }
    }

    /// Single-shot HPKE to `publicKey` with `info` and empty associated data: enc ‖ ciphertext.
    private static func seal(_ plaintext: [UInt8], to publicKey: [UInt8], info: [UInt8]) throws -> [UInt8] {
        do {
            let recipient = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: publicKey)
            var sender = try HPKE.Sender(recipientKey: recipient, ciphersuite: Self.ciphersuite, info: Data(info))
            let ciphertext = try sender.seal(plaintext, authenticating: Data())
            return Array(sender.encapsulatedKey) + Array(ciphertext)
        } catch {
            throw LabError(
                .badPublicKey,
                "Could not seal to that X25519 key",
                cause: UnderlyingError(describing: error)
            )
        }
    }

    private static func open(_ sealed: [UInt8], with key: Curve25519.KeyAgreement.PrivateKey, info: [UInt8]) -> [UInt8]?
    {
        guard sealed.count > Self.encapsulatedBytes else { return nil }
        do {
            var recipient = try HPKE.Recipient(
                privateKey: key,
                ciphersuite: Self.ciphersuite,
                info: Data(info),
                encapsulatedKey: Data(sealed.prefix(Self.encapsulatedBytes))
            )
            return Array(try recipient.open(sealed.dropFirst(Self.encapsulatedBytes), authenticating: Data()))
        } catch {
            return nil
        }
    }
}
