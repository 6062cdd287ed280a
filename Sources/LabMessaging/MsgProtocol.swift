public import Foundation
public import LabCore
import LabWire

/// msg/1's operations (docs/protocol.md §4.2).
public enum MsgOp: String, Sendable, CaseIterable {
    case captcha, register, login, changePassword, publishKey, peerKey, openChat, send, fetch, rekey, logout
}

/// msg/1's error codes: the `error` of a failed answer.
public enum MsgErrorCode: String, Sendable, CaseIterable, Equatable {
    /// A field is missing, has the wrong type or is out of range; nothing changed.
    case badRequest
    /// The captcha answer did not match (or was used or expired); a new captcha comes with it.
    case badCaptcha
    /// Unknown user or wrong password: one generic answer for both.
    case badCredentials
    /// The account is postponed: `until` says when it may try again.
    case postponed
    /// The account is locked for good.
    case locked
    /// The new password is shorter than the service's minimum (in bytes of UTF-8).
    case weakPassword
    /// The token is unknown or logged out.
    case notLoggedIn
    /// No such user (for `peerKey`, `openChat`, `send`).
    case unknownUser
    /// The user name or the chat exists already.
    case exists
    /// No chat between these users yet.
    case noChat
    /// The chat changed meanwhile (a stale key version or message set); fetch and retry.
    case conflict
    /// The server failed; nothing changed.
    case serverError
    /// The server is at its limit (connections, or password checks waiting); nothing
    /// changed: try again later.
    case busy
}

/// The keys of msg/1 bodies.
public enum MsgKey {
    public static let op = "op"
    public static let ok = "ok"
    public static let error = "error"
    public static let message = "message"
    public static let captchaID = "captchaId"
    public static let captcha = "captcha"
    public static let serverKey = "serverKey"
    /// The server's HPKE suite, with `serverKey`: `x25519` or `xwing`.
    public static let hpke = "hpke"
    public static let username = "username"
    public static let password = "password"
    public static let currentPassword = "currentPassword"
    public static let newPassword = "newPassword"
    public static let publicKey = "publicKey"
    public static let token = "token"
    public static let until = "until"
    public static let with = "with"
    public static let to = "to"
    public static let wrappedKeySelf = "wrappedKeySelf"
    public static let wrappedKeyPeer = "wrappedKeyPeer"
    public static let wrappedKey = "wrappedKey"
    public static let keyVersion = "keyVersion"
    public static let ciphertext = "ciphertext"
    public static let id = "id"
    public static let after = "after"
    public static let limit = "limit"
    public static let messages = "messages"
    public static let count = "count"
    public static let more = "more"
    public static let page = "page"
    public static let failures = "failures"
}

/// Field limits every msg/1 server enforces (docs/protocol.md §4.4).
public enum MsgLimits {
    /// User names: 1 to 64 characters of A–Z, a–z, 0–9, `.`, `_`, `-`.
    public static let usernameBytes = 64
    /// Passwords: at most 1024 bytes of UTF-8 (the minimum is the service's, 8 by default).
    public static let passwordBytes = 1024
    /// One message's ciphertext: at most 64 KiB.
    public static let ciphertextBytes = 65_536
    /// Messages one `fetch` returns at most.
    public static let fetchLimit = 20_000

    /// Whether `name` is a valid user name.
    public static func isValidUsername(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...Self.usernameBytes).contains(bytes.count) else { return false }
        return bytes.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }
    }
}

/// A msg/1 error answer, as the client sees it.
public struct MsgFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The code.
    public var code: MsgErrorCode
    /// The server's text.
    public var message: String
    /// For `postponed`: when the account may try again.
    public var until: Date?
    /// For `badCaptcha`: the new captcha that came with it.
    public var captcha: IssuedCaptcha?

    /// A failure.
    public init(code: MsgErrorCode, message: String, until: Date? = nil, captcha: IssuedCaptcha? = nil) {
        self.code = code
        self.message = message
        self.until = until
        self.captcha = captcha
    }

    /// `code: message`.
    public var description: String { "\(self.code.rawValue): \(self.message)" }

    /// The same failure as a `LabError` (`serverError`), for flows that do not expect it.
    public var labError: LabError { LabError(.serverError, "msg/1 answered \(self)") }
}

extension MsgFailure: CodedError {
    /// The service's code, e.g. `badRequest`: an error answer a flow let through (a captcha
    /// refused by a server without msg/1) fails its iteration under the server's own code,
    /// with the server's text as its message.
    public var codeName: String { self.code.rawValue }
}

/// A captcha as the server issued it: the id to answer with, the challenge a person reads,
/// and the server's key for sealing passwords.
public struct IssuedCaptcha: Sendable, Equatable {
    /// Answer with this id.
    public var id: String
    /// The challenge (5 characters of A–Z0–9): the image a person would read.
    public var challenge: String
    /// The server's public key that passwords are sealed to (HPKE), of `hpke`'s kind.
    public var serverKey: [UInt8]
    /// The server's HPKE suite: `hpke` in the answer; absent (a server before suites) is
    /// `x25519`.
    public var hpke: MsgHPKE

    /// A captcha.
    public init(id: String, challenge: String, serverKey: [UInt8], hpke: MsgHPKE = .x25519) {
        self.id = id
        self.challenge = challenge
        self.serverKey = serverKey
        self.hpke = hpke
    }

    func write(to plist: inout PropertyListDictionary) {
        plist.set(MsgKey.captchaID, string: self.id)
        plist.set(MsgKey.captcha, string: self.challenge)
        plist.set(MsgKey.serverKey, data: self.serverKey)
        plist.set(MsgKey.hpke, string: self.hpke.rawValue)
    }

    init(reading plist: PropertyListDictionary) throws {
        let name = try plist.optionalString(MsgKey.hpke) ?? MsgHPKE.x25519.rawValue
        guard let hpke = MsgHPKE(rawValue: name) else {
            throw LabError(.malformedMessage, "msg/1 announced an unknown HPKE suite '\(name.prefix(32))'")
        }
        self.init(
            id: try plist.string(MsgKey.captchaID),
            challenge: try plist.string(MsgKey.captcha),
            serverKey: try plist.data(MsgKey.serverKey),
            hpke: hpke
        )
    }
}

/// A message in a `fetch` answer.
public struct StoredMessage: Sendable, Equatable {
    /// The server's id, increasing within a chat.
    public var id: Int64
    /// Who sent it.
    public var sender: String
    /// The chat key version it is encrypted under.
    public var keyVersion: Int
    /// AES-256-GCM: 12-byte nonce, ciphertext, 16-byte tag.
    public var ciphertext: [UInt8]

    /// A message.
    public init(id: Int64, sender: String, keyVersion: Int, ciphertext: [UInt8]) {
        self.id = id
        self.sender = sender
        self.keyVersion = keyVersion
        self.ciphertext = ciphertext
    }
}

/// msg/1 bodies are flat dictionaries (docs/protocol.md §1), so lists of messages travel packed
/// in one data value. Every integer is big-endian.
///
/// - `fetch`'s `messages`: per message `id` u64, `keyVersion` u32, sender length u8,
///   sender (UTF-8), ciphertext length u32, ciphertext.
/// - `rekey`'s `messages`: per message `id` u64, ciphertext length u32, ciphertext.
public enum MessagePacking {
    /// The bytes `message` takes in a packed `fetch` list.
    public static func packedSize(_ message: StoredMessage) -> Int {
        17 + min(message.sender.utf8.count, 255) + message.ciphertext.count
    }

    /// Packs `fetch` records.
    public static func pack(_ messages: [StoredMessage]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(messages.reduce(0) { $0 + 17 + $1.sender.utf8.count + $1.ciphertext.count })
        for message in messages {
            Self.append(UInt64(bitPattern: message.id), size: 8, to: &bytes)
            Self.append(UInt64(message.keyVersion), size: 4, to: &bytes)
            let sender = Array(message.sender.utf8.prefix(255))
            bytes.append(UInt8(sender.count))
            bytes += sender
            Self.append(UInt64(message.ciphertext.count), size: 4, to: &bytes)
            bytes += message.ciphertext
        }
        return bytes
    }

    /// Unpacks `fetch` records; throws `malformedMessage` on any inconsistency.
    public static func unpack(_ bytes: [UInt8]) throws -> [StoredMessage] {
        var reader = Reader(bytes: bytes)
        var messages: [StoredMessage] = []
        while !reader.atEnd {
            let id = Int64(bitPattern: try reader.integer(8))
            let version = Int(try reader.integer(4))
            let sender = String(decoding: try reader.bytes(Int(try reader.integer(1))), as: UTF8.self)
            let ciphertext = try reader.bytes(Int(try reader.integer(4)))
            messages.append(StoredMessage(id: id, sender: sender, keyVersion: version, ciphertext: ciphertext))
        }
        return messages
    }

    /// Packs `rekey` records.
    public static func pack(reencrypted: [(id: Int64, ciphertext: [UInt8])]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(reencrypted.reduce(0) { $0 + 12 + $1.ciphertext.count })
        for (id, ciphertext) in reencrypted {
            Self.append(UInt64(bitPattern: id), size: 8, to: &bytes)
            Self.append(UInt64(ciphertext.count), size: 4, to: &bytes)
            bytes += ciphertext
        }
        return bytes
    }

    /// Unpacks `rekey` records, refusing ciphertexts over `MsgLimits.ciphertextBytes`.
    public static func unpackReencrypted(_ bytes: [UInt8]) throws -> [(id: Int64, ciphertext: [UInt8])] {
        var reader = Reader(bytes: bytes)
        var records: [(Int64, [UInt8])] = []
        while !reader.atEnd {
            let id = Int64(bitPattern: try reader.integer(8))
            let length = Int(try reader.integer(4))
            guard length <= MsgLimits.ciphertextBytes else {
                throw LabError(.malformedMessage, "A message of \(length) bytes; at most \(MsgLimits.ciphertextBytes)")
            }
            records.append((id, try reader.bytes(length)))
        }
        return records
    }

    private static func append(_ value: UInt64, size: Int, to bytes: inout [UInt8]) {
        for shift in stride(from: (size - 1) * 8, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        var atEnd: Bool { self.offset == self.bytes.count }

        mutating func integer(_ size: Int) throws -> UInt64 {
            let slice = try self.bytes(size)
            return slice.reduce(0) { $0 << 8 | UInt64($1) }
        }

        mutating func bytes(_ count: Int) throws -> [UInt8] {
            guard count >= 0, self.bytes.count - self.offset >= count else {
                throw LabError(.malformedMessage, "The packed messages are cut off at byte \(self.offset)")
            }
            defer { self.offset += count }
            return Array(self.bytes[self.offset..<(self.offset + count)])
        }
    }
}
