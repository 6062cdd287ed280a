public import Crypto
import Foundation
public import LabCore
public import LabWire

/// A msg/1 client over one connection: builds requests, reads answers.
///
/// Expected refusals (a wrong password, a postponement) come back as `MsgFailure` values
/// the flows inspect; a broken answer throws `LabError`.
public struct MessagingClient: Sendable {
    /// The connection.
    public let connection: any Connection

    /// A client over `connection`.
    public init(connection: any Connection) {
        self.connection = connection
    }

    /// Sends `request` and returns the answer: its dictionary, or the failure it carries.
    public func call<R: StepRecorder>(
        _ op: MsgOp,
        _ fill: (inout PropertyListDictionary) throws -> Void = { _ in },
        recorder: inout R
    ) async throws -> Result<PropertyListDictionary, MsgFailure> {
        var request = PropertyListDictionary()
        request.set(MsgKey.op, string: op.rawValue)
        try fill(&request)
        let response = try await self.connection.request(try request.encoded(), recorder: &recorder)
        let answer = try PropertyListDictionary(decoding: response)
        if try answer.optionalBool(MsgKey.ok) == true { return .success(answer) }
        let code = try answer.string(MsgKey.error)
        guard let known = MsgErrorCode(rawValue: code) else {
            throw LabError(.malformedMessage, "msg/1 answered an unknown error code '\(code.prefix(64))'")
        }
        let until = try answer.optionalInteger(MsgKey.until).map { Date(timeIntervalSince1970: TimeInterval($0)) }
        let captcha = answer.contains(MsgKey.captchaID) ? try IssuedCaptcha(reading: answer) : nil
        return .failure(
            MsgFailure(
                code: known,
                message: try answer.optionalString(MsgKey.message) ?? "",
                until: until,
                captcha: captcha
            )
        )
    }

    /// Asks for a captcha.
    public func captcha<R: StepRecorder>(recorder: inout R) async throws -> IssuedCaptcha {
        try IssuedCaptcha(reading: try await self.call(.captcha, recorder: &recorder).get())
    }
}

extension Result where Failure == MsgFailure {
    /// The value, or the failure as a `LabError` for callers that did not expect one.
    public func orThrow() throws -> Success {
        switch self {
        case .success(let value): return value
        case .failure(let failure): throw failure.labError
        }
    }
}

/// A simulated person: a user name, a password, an X25519 key pair, and a session once
/// logged in. Reads captcha challenges as a person would.
public struct MessagingUser: Sendable {
    /// The user name.
    public let username: String
    /// The current password.
    public var password: String
    /// The key chat keys are wrapped for.
    public let keyPair: Curve25519.KeyAgreement.PrivateKey
    /// The session token, once logged in.
    public var token: String?
    /// The server's password-sealing key, from the last captcha.
    public var serverKey: [UInt8]?

    /// A user with a fresh key pair.
    public init(username: String, password: String) {
        self.username = username
        self.password = password
        self.keyPair = Curve25519.KeyAgreement.PrivateKey()
    }

    /// The public key, raw.
    public var publicKey: [UInt8] { Array(self.keyPair.publicKey.rawRepresentation) }

    /// Asks for a captcha and reads it (timed as `captcha`).
    public mutating func solveCaptcha<R: StepRecorder>(
        _ client: MessagingClient,
        recorder: inout R
    ) async throws -> IssuedCaptcha {
        let start = Stopwatch.now()
        let captcha = try await client.captcha(recorder: &recorder)
        recorder.record(.captcha, nanoseconds: Stopwatch.now() &- start)
        self.serverKey = captcha.serverKey
        return captcha
    }

    /// Registers (timed as `register`).
    public mutating func register<R: StepRecorder>(
        _ client: MessagingClient,
        recorder: inout R
    ) async throws -> Result<Void, MsgFailure> {
        let captcha = try await self.solveCaptcha(client, recorder: &recorder)
        let start = Stopwatch.now()
        let sealed = try MsgCrypto.sealPassword(
            self.password,
            to: captcha.serverKey,
            context: MsgCrypto.passwordContext(
                op: .register,
                field: MsgKey.password,
                binding: [self.username, captcha.id]
            )
        )
        let username = self.username
        let publicKey = self.publicKey
        let answer = try await client.call(
            .register,
            {
                $0.set(MsgKey.username, string: username)
                $0.set(MsgKey.password, data: sealed)
                $0.set(MsgKey.publicKey, data: publicKey)
                $0.set(MsgKey.captchaID, string: captcha.id)
                $0.set(MsgKey.captcha, string: captcha.challenge)
            },
            recorder: &recorder
        )
        if case .success = answer { recorder.record(.register, nanoseconds: Stopwatch.now() &- start) }
        return answer.map { _ in () }
    }

    /// Tries to log in with `password` (default: the user's own), answering `captcha` with
    /// `captchaAnswer` (default: the challenge read correctly). Timed as `login`.
    public mutating func login<R: StepRecorder>(
        _ client: MessagingClient,
        password: String? = nil,
        captcha: IssuedCaptcha,
        captchaAnswer: String? = nil,
        recorder: inout R
    ) async throws -> Result<String, MsgFailure> {
        let start = Stopwatch.now()
        let sealed = try MsgCrypto.sealPassword(
            password ?? self.password,
            to: captcha.serverKey,
            context: MsgCrypto.passwordContext(
                op: .login,
                field: MsgKey.password,
                binding: [self.username, captcha.id]
            )
        )
        let username = self.username
        let answer = try await client.call(
            .login,
            {
                $0.set(MsgKey.username, string: username)
                $0.set(MsgKey.password, data: sealed)
                $0.set(MsgKey.captchaID, string: captcha.id)
                $0.set(MsgKey.captcha, string: captchaAnswer ?? captcha.challenge)
            },
            recorder: &recorder
        )
        recorder.record(.login, nanoseconds: Stopwatch.now() &- start)
        switch answer {
        case .success(let dictionary):
            let token = try dictionary.string(MsgKey.token)
            self.token = token
            return .success(token)
        case .failure(let failure):
            return .failure(failure)
        }
    }

    /// Logs in with the right password and a correctly read captcha; throws on refusal.
    public mutating func logIn<R: StepRecorder>(_ client: MessagingClient, recorder: inout R) async throws {
        let captcha = try await self.solveCaptcha(client, recorder: &recorder)
        _ = try await self.login(client, captcha: captcha, recorder: &recorder).orThrow()
    }

    /// Changes the password from `current` (default: the user's own) to `new` (timed as `password-change`).
    public mutating func changePassword<R: StepRecorder>(
        _ client: MessagingClient,
        current: String? = nil,
        to new: String,
        recorder: inout R
    ) async throws -> Result<Void, MsgFailure> {
        let token = try self.requireToken()
        guard let serverKey = self.serverKey else {
            throw LabError(.unsupported, "Change the password after logging in (the server's key comes with a captcha)")
        }
        let start = Stopwatch.now()
        let sealedCurrent = try MsgCrypto.sealPassword(
            current ?? self.password,
            to: serverKey,
            context: MsgCrypto.passwordContext(op: .changePassword, field: MsgKey.currentPassword, binding: [token])
        )
        let sealedNew = try MsgCrypto.sealPassword(
            new,
            to: serverKey,
            context: MsgCrypto.passwordContext(op: .changePassword, field: MsgKey.newPassword, binding: [token])
        )
        let answer = try await client.call(
            .changePassword,
            {
                $0.set(MsgKey.token, string: token)
                $0.set(MsgKey.currentPassword, data: sealedCurrent)
                $0.set(MsgKey.newPassword, data: sealedNew)
            },
            recorder: &recorder
        )
        recorder.record(.passwordChange, nanoseconds: Stopwatch.now() &- start)
        if case .success = answer { self.password = new }
        return answer.map { _ in () }
    }

    /// Logs out.
    public mutating func logout<R: StepRecorder>(_ client: MessagingClient, recorder: inout R) async throws {
        let token = try self.requireToken()
        _ = try await client.call(.logout, { $0.set(MsgKey.token, string: token) }, recorder: &recorder).orThrow()
        self.token = nil
    }

    func requireToken() throws -> String {
        guard let token = self.token else { throw LabError(.unsupported, "\(self.username) is not logged in") }
        return token
    }
}

/// One side of a chat: the user, the peer's name, and the chat key once known.
public struct ChatSide: Sendable {
    /// This side's user (logged in).
    public var user: MessagingUser
    /// The other participant.
    public let peer: String
    /// The chat key and its version, once opened or fetched.
    public var key: (version: Int, key: SymmetricKey)?
    /// The last message id seen.
    public var lastSeen: Int64 = 0

    /// A side of the chat between `user` and `peer`.
    public init(user: MessagingUser, peer: String) {
        self.user = user
        self.peer = peer
    }

    /// Opens the chat: makes a fresh AES-256 key and stores it wrapped for both users.
    public mutating func open<R: StepRecorder>(
        _ client: MessagingClient,
        peerKey: [UInt8]? = nil,
        recorder: inout R
    ) async throws -> Result<Void, MsgFailure> {
        let token = try self.user.requireToken()
        let theirKey = try await peerKey.asyncOr { try await self.peerKey(client, recorder: &recorder) }
        let key = SymmetricKey(size: .bits256)
        let context = MsgCrypto.chatKeyContext(users: (self.user.username, self.peer), version: 1)
        let mine = try MsgCrypto.wrapChatKey(key, for: self.user.publicKey, context: context)
        let theirs = try MsgCrypto.wrapChatKey(key, for: theirKey, context: context)
        let peer = self.peer
        let answer = try await client.call(
            .openChat,
            {
                $0.set(MsgKey.token, string: token)
                $0.set(MsgKey.with, string: peer)
                $0.set(MsgKey.wrappedKeySelf, data: mine)
                $0.set(MsgKey.wrappedKeyPeer, data: theirs)
            },
            recorder: &recorder
        )
        if case .success = answer { self.key = (1, key) }
        return answer.map { _ in () }
    }

    /// The peer's public key.
    public func peerKey<R: StepRecorder>(_ client: MessagingClient, recorder: inout R) async throws -> [UInt8] {
        let token = try self.user.requireToken()
        let peer = self.peer
        let answer = try await client.call(
            .peerKey,
            {
                $0.set(MsgKey.token, string: token)
                $0.set(MsgKey.username, string: peer)
            },
            recorder: &recorder
        ).orThrow()
        return try answer.data(MsgKey.publicKey)
    }

    /// Encrypts and sends `text` (timed as `send`, encryption included).
    public mutating func send<R: StepRecorder>(
        _ text: [UInt8],
        _ client: MessagingClient,
        recorder: inout R
    ) async throws -> Int64 {
        let token = try self.user.requireToken()
        guard let (version, key) = self.key else { throw LabError(.unsupported, "Open or fetch the chat first") }
        let start = Stopwatch.now()
        let ciphertext = try recorder.measure(.encrypt) {
            try MsgCrypto.encrypt(text, key: key, sender: self.user.username)
        }
        let peer = self.peer
        let answer = try await client.call(
            .send,
            {
                $0.set(MsgKey.token, string: token)
                $0.set(MsgKey.to, string: peer)
                $0.set(MsgKey.ciphertext, data: ciphertext)
                $0.set(MsgKey.keyVersion, integer: version)
            },
            recorder: &recorder
        ).orThrow()
        recorder.record(.send, nanoseconds: Stopwatch.now() &- start)
        return Int64(try answer.integer(MsgKey.id))
    }

    /// Fetches the messages after `lastSeen` (or all, with `fromStart`) and decrypts them
    /// with the chat key it unwraps (timed as `fetch`, decryption included).
    public mutating func fetch<R: StepRecorder>(
        _ client: MessagingClient,
        fromStart: Bool = false,
        recorder: inout R
    ) async throws -> [(id: Int64, sender: String, text: [UInt8])] {
        let token = try self.user.requireToken()
        let start = Stopwatch.now()
        let peer = self.peer
        let after = fromStart ? 0 : self.lastSeen
        let answer = try await client.call(
            .fetch,
            {
                $0.set(MsgKey.token, string: token)
                $0.set(MsgKey.with, string: peer)
                $0.set(MsgKey.after, integer: Int(after))
            },
            recorder: &recorder
        ).orThrow()
        let version = try answer.integer(MsgKey.keyVersion)
        if self.key?.version != version {
            let context = MsgCrypto.chatKeyContext(users: (self.user.username, self.peer), version: version)
            let key = try recorder.measure(.unwrap) {
                try MsgCrypto.unwrapChatKey(
                    try answer.data(MsgKey.wrappedKey),
                    with: self.user.keyPair,
                    context: context
                )
            }
            self.key = (version, key)
        }
        let key = self.key!.key
        let messages = try MessagePacking.unpack(try answer.data(MsgKey.messages))
        var texts: [(Int64, String, [UInt8])] = []
        texts.reserveCapacity(messages.count)
        try recorder.measure(.decrypt) {
            for message in messages {
                guard message.keyVersion == version else {
                    throw MsgVerdict(
                        .decryptFailed,
                        "Message \(message.id) is under key version \(message.keyVersion), the chat at \(version)"
                    )
                }
                texts.append(
                    (
                        message.id, message.sender,
                        try MsgCrypto.decrypt(message.ciphertext, key: key, sender: message.sender)
                    )
                )
            }
        }
        if let last = messages.last { self.lastSeen = max(self.lastSeen, last.id) }
        recorder.record(.fetch, nanoseconds: Stopwatch.now() &- start)
        return texts
    }

    /// Re-encrypts the whole history under a fresh key and stores it in one request (timed
    /// as `rekey`: fetch, decryption, encryption, wrapping and the server's transaction).
    public mutating func rekey<R: StepRecorder>(
        _ client: MessagingClient,
        peerKey: [UInt8],
        newKey: SymmetricKey = SymmetricKey(size: .bits256),
        recorder: inout R
    ) async throws -> Result<Int, MsgFailure> {
        let token = try self.user.requireToken()
        let start = Stopwatch.now()
        var inner = NoStepRecorder()
        let history = try await self.fetch(client, fromStart: true, recorder: &inner)
        guard let (version, _) = self.key else { throw LabError(.unsupported, "Open the chat first") }
        let key = newKey
        let reencrypted = try recorder.measure(.encrypt) {
            try history.map { (id: $0.id, ciphertext: try MsgCrypto.encrypt($0.text, key: key, sender: $0.sender)) }
        }
        let context = MsgCrypto.chatKeyContext(users: (self.user.username, self.peer), version: version + 1)
        let (mine, theirs) = try recorder.measure(.wrap) {
            (
                try MsgCrypto.wrapChatKey(key, for: self.user.publicKey, context: context),
                try MsgCrypto.wrapChatKey(key, for: peerKey, context: context)
            )
        }
        let peer = self.peer
        let answer = try await client.call(
            .rekey,
            {
                $0.set(MsgKey.token, string: token)
                $0.set(MsgKey.with, string: peer)
                $0.set(MsgKey.keyVersion, integer: version)
                $0.set(MsgKey.wrappedKeySelf, data: mine)
                $0.set(MsgKey.wrappedKeyPeer, data: theirs)
                $0.set(MsgKey.messages, data: MessagePacking.pack(reencrypted: reencrypted))
            },
            recorder: &recorder
        )
        switch answer {
        case .success(let dictionary):
            let next = try dictionary.integer(MsgKey.keyVersion)
            self.key = (next, key)
            recorder.record(.rekey, nanoseconds: Stopwatch.now() &- start)
            return .success(next)
        case .failure(let failure):
            return .failure(failure)
        }
    }
}

extension Optional where Wrapped: Sendable {
    func asyncOr(_ make: () async throws -> Wrapped) async rethrows -> Wrapped {
        if let value = self { return value }
        return try await make()
    }
}
