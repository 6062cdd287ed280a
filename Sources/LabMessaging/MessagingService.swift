import Crypto
import Foundation
import GRDB
import LabCore
import LabWire
import Logging
import Synchronization

/// How a messaging service behaves: its plugins and limits.
public struct MessagingOptions: Sendable, Hashable {
    /// How passwords are stored.
    public var kdf: PasswordKDF
    /// What wrong passwords cost.
    public var policy: LockoutPolicy
    /// How captchas are made.
    public var captcha: CaptchaGenerator
    /// The shortest password `register` and `changePassword` accept.
    public var minPasswordLength: Int
    /// Test only: a rekey holds its transaction open this long halfway through its writes.
    public var rekeyStall: TimeInterval?
    /// Captchas issued and not yet answered that the service keeps; beyond it the oldest go.
    public var captchaCapacity: Int
    /// Password checks (KDF runs) at once, each on a thread of its own, off the event loops.
    public var kdfWorkers: Int
    /// Password checks that may wait for a worker; one more is answered `busy`.
    public var kdfQueueLimit: Int
    /// Password checks of one account that may wait for the one before them to end (they
    /// hold no worker and no place in the queue while they wait); one more is answered `busy`.
    public var accountWaitLimit: Int

    /// The default of `kdfWorkers`: half the cores (at least one), so that a flood of
    /// passwords leaves the rest to everyone else.
    public static var defaultKDFWorkers: Int { max(1, ProcessInfo.processInfo.activeProcessorCount / 2) }

    /// Options; the safer choices by default.
    public init(
        kdf: PasswordKDF = .default,
        policy: LockoutPolicy = .default,
        captcha: CaptchaGenerator = .csprng,
        minPasswordLength: Int = 8,
        rekeyStall: TimeInterval? = nil,
        captchaCapacity: Int = 100_000,
        kdfWorkers: Int = MessagingOptions.defaultKDFWorkers,
        kdfQueueLimit: Int = 64,
        accountWaitLimit: Int = 256
    ) {
        self.kdf = kdf
        self.policy = policy
        self.captcha = captcha
        self.minPasswordLength = minPasswordLength
        self.rekeyStall = rekeyStall
        self.captchaCapacity = max(1, captchaCapacity)
        self.kdfWorkers = max(1, kdfWorkers)
        self.kdfQueueLimit = max(0, kdfQueueLimit)
        self.accountWaitLimit = max(0, accountWaitLimit)
    }

    /// What a report says about them, e.g. `kdf scrypt:17:8:1, policy throttle (…), captcha csprng`.
    public var description: String {
        "kdf \(self.kdf), policy \(self.policy), captcha \(self.captcha.rawValue)"
    }
}

/// The msg/1 server: answers one request body at a time (docs/protocol.md §4).
///
/// Error answers keep the connection open (a wrong password is not a protocol error); a
/// body that does not decode, unless its top-level keys include `op`, is answered
/// `badRequest` and closes it (docs/protocol.md §4.1, "msg/1 alone").
public final class MessagingService: FrameHandler, Sendable {
    /// The store.
    public let store: MessagingStore
    /// The options.
    public let options: MessagingOptions
    /// The clock policies read.
    public let clock: any LabClock
    /// Called (test only) when a stalled rekey is halfway through its transaction.
    public let onRekeyStall: (@Sendable () -> Void)?
    private let serverKey: Curve25519.KeyAgreement.PrivateKey
    private let captchas: CaptchaBook
    private let sessions = Synchronization.Mutex<[String: Session]>([:])
    private let logger: Logger
    /// A salt for the KDF run on unknown user names, so that they cost what a known one does.
    private let decoySalt: [UInt8]
    private let checks: PasswordChecks

    /// The password-check pool (KDF runs off the event loops, bounded): to watch it, or, in
    /// a test, to hold its workers.
    public var passwordChecks: PasswordChecks { self.checks }
    /// One password check at a time per account.
    private let turns: AccountTurns

    struct Session: Sendable {
        var userID: Int64
        var username: String
    }

    /// A service over `store`.
    public init(
        store: MessagingStore,
        options: MessagingOptions = MessagingOptions(),
        clock: any LabClock = SystemClock(),
        logger: Logger = Logger(label: "lab.msg"),
        onRekeyStall: (@Sendable () -> Void)? = nil
    ) {
        self.store = store
        self.options = options
        self.clock = clock
        self.logger = logger
        self.onRekeyStall = onRekeyStall
        self.serverKey = Curve25519.KeyAgreement.PrivateKey()
        self.captchas = CaptchaBook(generator: options.captcha, clock: clock, capacity: options.captchaCapacity)
        self.decoySalt = options.kdf.makeSalt()
        self.checks = PasswordChecks(workers: options.kdfWorkers, queueLimit: options.kdfQueueLimit)
        self.turns = AccountTurns(waitLimit: options.accountWaitLimit)
    }

    /// The server's X25519 public key, which clients seal passwords to.
    public var publicKey: [UInt8] { Array(self.serverKey.publicKey.rawRepresentation) }

    /// Answers one msg/1 request.
    public func respond<R: StepRecorder>(to body: [UInt8], recorder: inout R) async -> FrameAnswer {
        let request: PropertyListDictionary
        do {
            request = try PropertyListDictionary(decoding: body)
        } catch {
            let failure = MsgFailure(code: .badRequest, message: "\(error)")
            // A property list with an `op` key is a msg/1 request, even with a value no body
            // may hold (a container, say): a bad request, answered with the connection kept
            // open like any other. Anything else is not msg/1 at all, and ends the connection.
            let isRequest = PropertyListDictionary.topLevelKeys(of: body)?.contains(MsgKey.op) ?? false
            return FrameAnswer(
                body: Self.encode(failure),
                closeReason: isRequest ? nil : "badRequest: \(failure.message)",
                group: "msg/1",
                errorCode: failure.code.rawValue
            )
        }
        var op = "?"
        do {
            let name = try Self.field { try request.string(MsgKey.op) }
            guard let known = MsgOp(rawValue: name) else {
                throw MsgFailure(
                    code: .badRequest,
                    message:
                        "No op '\(name.prefix(64))'; ops: \(MsgOp.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
            op = known.rawValue
            let answer = try await self.perform(known, request, recorder: &recorder)
            return FrameAnswer(body: Self.encode(answer), group: op)
        } catch let failure as MsgFailure {
            return FrameAnswer(body: Self.encode(failure), group: op, errorCode: failure.code.rawValue)
        } catch {
            self.logger.error("msg/1 \(op) failed: \(error)")
            let failure = MsgFailure(code: .serverError, message: "The server failed; nothing changed")
            return FrameAnswer(body: Self.encode(failure), group: op, errorCode: failure.code.rawValue)
        }
    }

    private func perform<R: StepRecorder>(
        _ op: MsgOp,
        _ request: PropertyListDictionary,
        recorder: inout R
    ) async throws -> PropertyListDictionary {
        var answer = PropertyListDictionary()
        answer.set(MsgKey.ok, bool: true)
        switch op {
        case .captcha:
            self.issueCaptcha().write(to: &answer)
        case .register:
            try await self.register(request, recorder: &recorder)
        case .login:
            answer.set(MsgKey.token, string: try await self.login(request, recorder: &recorder))
        case .changePassword:
            try await self.changePassword(request, recorder: &recorder)
        case .publishKey:
            let session = try self.session(request)
            let key = try Self.publicKey(request)
            try await self.store.write { db in
                try db.execute(
                    sql: "UPDATE users SET publicKey = ? WHERE id = ?",
                    arguments: [Data(key), session.userID]
                )
            }
        case .peerKey:
            _ = try self.session(request)
            let name = try Self.username(request, MsgKey.username)
            guard let account = try await self.store.account(named: name) else {
                throw MsgFailure(code: .unknownUser, message: "No user '\(name)'")
            }
            answer.set(MsgKey.publicKey, data: account.publicKey)
        case .openChat:
            try await self.openChat(request)
            answer.set(MsgKey.keyVersion, integer: 1)
        case .send:
            answer.set(MsgKey.id, integer: Int(try await self.send(request)))
        case .fetch:
            try await self.fetch(request, into: &answer)
        case .rekey:
            answer.set(MsgKey.keyVersion, integer: try await self.rekey(request))
        case .logout:
            let token = try Self.field { try request.string(MsgKey.token) }
            guard self.sessions.withLock({ $0.removeValue(forKey: token) }) != nil else {
                throw MsgFailure(code: .notLoggedIn, message: "The token is unknown or already logged out")
            }
        }
        return answer
    }

    // MARK: Accounts

    private func issueCaptcha() -> IssuedCaptcha {
        let (id, text) = self.captchas.issue()
        return IssuedCaptcha(id: id, challenge: text, serverKey: self.publicKey)
    }

    /// The request's captcha id and answer (`badRequest` if either is missing or not a
    /// string); nothing is redeemed yet.
    private static func captchaFields(_ request: PropertyListDictionary) throws -> (id: String, answer: String) {
        (try Self.field { try request.string(MsgKey.captchaID) }, try Self.field { try request.string(MsgKey.captcha) })
    }

    /// Redeems the captcha or throws `badCaptcha` carrying a new one. Called only once the
    /// request has passed every check that answers `badRequest` or `weakPassword`, so that
    /// those leave the captcha usable.
    private func requireCaptcha(_ fields: (id: String, answer: String)) throws {
        let (id, answer) = fields
        guard id.utf8.count <= 64, answer.utf8.count <= 16, self.captchas.redeem(id: id, answer: answer) else {
            throw MsgFailure(
                code: .badCaptcha,
                message: "The captcha answer does not match; here is a new captcha",
                captcha: self.issueCaptcha()
            )
        }
    }

    private func openPassword(
        _ request: PropertyListDictionary,
        _ key: String,
        op: MsgOp,
        binding: [String]
    ) throws -> [UInt8] {
        let sealed = try Self.field { try request.data(key) }
        guard sealed.count <= 32 + MsgLimits.passwordBytes + 16,
            let password = MsgCrypto.openPassword(
                sealed,
                with: self.serverKey,
                context: MsgCrypto.passwordContext(op: op, field: key, binding: binding)
            )
        else {
            throw MsgFailure(
                code: .badRequest,
                message:
                    "'\(key)' does not open with the server's key for this request (sealed to another key, replayed, or over \(MsgLimits.passwordBytes) bytes)"
            )
        }
        // A password is its UTF-8 bytes: a plaintext that is not UTF-8 is not a password.
        guard String(validating: password, as: UTF8.self) != nil else {
            throw MsgFailure(code: .badRequest, message: "'\(key)' opens to bytes that are not UTF-8")
        }
        return password
    }

    /// A new password's length, in bytes of UTF-8 (the upper bound, 1024, is `openPassword`'s).
    private func requireStrength(_ password: [UInt8]) throws {
        guard password.count >= self.options.minPasswordLength else {
            throw MsgFailure(
                code: .weakPassword,
                message:
                    "A password needs at least \(self.options.minPasswordLength) bytes of UTF-8; it has \(password.count)"
            )
        }
    }

    private func register<R: StepRecorder>(_ request: PropertyListDictionary, recorder: inout R) async throws {
        let username = try Self.username(request, MsgKey.username)
        let key = try Self.publicKey(request)
        let captcha = try Self.captchaFields(request)
        let password = try self.openPassword(request, MsgKey.password, op: .register, binding: [username, captcha.id])
        try self.requireStrength(password)
        try self.requireCaptcha(captcha)
        let kdf = self.options.kdf
        let salt = kdf.makeSalt()
        let (hash, hashing) = try await self.checks.run { try kdf.derive(password: password, salt: salt) }
        recorder.record(.kdf, nanoseconds: hashing)
        let inserted = try await self.store.write { db -> Bool in
            guard try MessagingStore.account(db, username: username) == nil else { return false }
            try db.execute(
                sql: "INSERT INTO users (username, kdf, salt, hash, publicKey) VALUES (?, ?, ?, ?, ?)",
                arguments: [username, kdf.description, Data(salt), Data(hash), Data(key)]
            )
            return true
        }
        guard inserted else { throw MsgFailure(code: .exists, message: "The user name '\(username)' is taken") }
    }

    private enum Verdict: Sendable {
        case success(LoginState)
        case failure(LoginState)
        case refused(LoginGate)
    }

    /// Checks `password` for `account` under the policy, in the account's turn (one check
    /// per account at a time, in arrival order): the account read afresh, the gate, the KDF
    /// outside any transaction, then the counter update inside one write transaction that
    /// re-reads the account.
    private func attempt<R: StepRecorder>(
        _ stale: MessagingStore.Account,
        password: [UInt8],
        recorder: inout R
    ) async throws -> Verdict {
        try await self.turns.acquire(stale.id)
        defer { self.turns.release(stale.id) }
        // The checks before this one have landed: a postponement or lock they set refuses
        // this one here, without a KDF run.
        guard let account = try await self.store.read({ db in try MessagingStore.account(db, id: stale.id) }) else {
            throw MsgFailure(code: .badCredentials, message: "Unknown user or wrong password")
        }
        let policy = self.options.policy
        let gate = policy.gate(account.state, now: self.clock.now())
        guard gate == .open else { return .refused(gate) }
        guard let kdf = PasswordKDF(stored: account.kdf) else {
            throw LabError(.storage, "User \(account.id) has an unknown KDF '\(account.kdf)'")
        }
        let (salt, hash) = (account.salt, account.hash)
        let (matches, hashing) = try await self.checks.run {
            try kdf.verify(password: password, salt: salt, hash: hash)
        }
        recorder.record(.kdf, nanoseconds: hashing)
        let clock = self.clock
        return try await self.store.write { db -> Verdict in
            guard let fresh = try MessagingStore.account(db, id: account.id) else {
                throw MsgFailure(code: .badCredentials, message: "Unknown user or wrong password")
            }
            let now = clock.now()
            // Another attempt may have moved the account on while the KDF ran.
            let gate = policy.gate(fresh.state, now: now)
            guard gate == .open else { return .refused(gate) }
            let next = matches ? policy.succeeded(fresh.state) : policy.failed(fresh.state, now: now)
            try MessagingStore.save(db, state: next, of: account.id)
            return matches ? .success(next) : .failure(next)
        }
    }

    /// Returns if the password was right; otherwise throws the refusal or `badCredentials`
    /// (with `until` when this failure started a postponement).
    private static func requireSuccess(_ verdict: Verdict, wrong message: String) throws {
        switch verdict {
        case .success: return
        case .refused(let gate): throw Self.refusal(gate)
        case .failure(let state):
            throw MsgFailure(code: .badCredentials, message: message, until: state.postponedUntil)
        }
    }

    private static func refusal(_ gate: LoginGate) -> MsgFailure {
        switch gate {
        case .locked:
            MsgFailure(code: .locked, message: "The account is locked")
        case .postponed(let until):
            MsgFailure(code: .postponed, message: "Too many wrong passwords; try again later", until: until)
        case .open:
            MsgFailure(code: .serverError, message: "The server failed; nothing changed")
        }
    }

    private func login<R: StepRecorder>(
        _ request: PropertyListDictionary,
        recorder: inout R
    ) async throws -> String {
        let username = try Self.username(request, MsgKey.username)
        let captcha = try Self.captchaFields(request)
        let password = try self.openPassword(request, MsgKey.password, op: .login, binding: [username, captcha.id])
        try self.requireCaptcha(captcha)
        guard let account = try await self.store.account(named: username) else {
            // An unknown name costs what a known one does, and answers the same.
            let kdf = self.options.kdf
            let salt = self.decoySalt
            let (_, hashing) = try await self.checks.run { try kdf.derive(password: password, salt: salt) }
            recorder.record(.kdf, nanoseconds: hashing)
            throw MsgFailure(code: .badCredentials, message: "Unknown user or wrong password")
        }
        try Self.requireSuccess(
            try await self.attempt(account, password: password, recorder: &recorder),
            wrong: "Unknown user or wrong password"
        )
        let token = Token.random(bytes: 32)
        self.sessions.withLock { $0[token] = Session(userID: account.id, username: account.username) }
        return token
    }

    private func changePassword<R: StepRecorder>(_ request: PropertyListDictionary, recorder: inout R) async throws {
        let (token, session) = try self.tokenAndSession(request)
        let current = try self.openPassword(
            request,
            MsgKey.currentPassword,
            op: .changePassword,
            binding: [token]
        )
        let new = try self.openPassword(request, MsgKey.newPassword, op: .changePassword, binding: [token])
        try self.requireStrength(new)
        guard let account = try await self.store.read({ db in try MessagingStore.account(db, id: session.userID) })
        else {
            throw MsgFailure(code: .notLoggedIn, message: "The session's user no longer exists")
        }
        try Self.requireSuccess(
            try await self.attempt(account, password: current, recorder: &recorder),
            wrong: "The current password is wrong"
        )
        let kdf = self.options.kdf
        let salt = kdf.makeSalt()
        let (hash, hashing) = try await self.checks.run { try kdf.derive(password: new, salt: salt) }
        recorder.record(.kdf, nanoseconds: hashing)
        try await self.store.write { db in
            try db.execute(
                sql: "UPDATE users SET kdf = ?, salt = ?, hash = ? WHERE id = ?",
                arguments: [kdf.description, Data(salt), Data(hash), session.userID]
            )
        }
    }

    // MARK: Chats

    private func peer(
        _ request: PropertyListDictionary,
        _ key: String,
        of session: Session
    ) async throws
        -> MessagingStore.Account
    {
        let name = try Self.username(request, key)
        guard name != session.username else {
            throw MsgFailure(code: .badRequest, message: "A chat needs two different users")
        }
        guard let account = try await self.store.account(named: name) else {
            throw MsgFailure(code: .unknownUser, message: "No user '\(name)'")
        }
        return account
    }

    private func openChat(_ request: PropertyListDictionary) async throws {
        let session = try self.session(request)
        let peer = try await self.peer(request, MsgKey.with, of: session)
        let mine = try Self.wrappedKey(request, MsgKey.wrappedKeySelf)
        let theirs = try Self.wrappedKey(request, MsgKey.wrappedKeyPeer)
        let created = try await self.store.write { db -> Bool in
            guard try MessagingStore.chat(db, session.userID, peer.id) == nil else { return false }
            let (low, high) = MessagingStore.pair(session.userID, peer.id)
            try db.execute(
                sql: "INSERT INTO chats (userA, userB, keyVersion) VALUES (?, ?, 1)",
                arguments: [low, high]
            )
            let chat = db.lastInsertedRowID
            for (user, wrapped) in [(session.userID, mine), (peer.id, theirs)] {
                try db.execute(
                    sql: "INSERT INTO chatKeys (chatId, userId, wrappedKey) VALUES (?, ?, ?)",
                    arguments: [chat, user, Data(wrapped)]
                )
            }
            return true
        }
        guard created else { throw MsgFailure(code: .exists, message: "A chat with '\(peer.username)' exists") }
    }

    private func send(_ request: PropertyListDictionary) async throws -> Int64 {
        let session = try self.session(request)
        let peer = try await self.peer(request, MsgKey.to, of: session)
        let ciphertext = try Self.ciphertext(try Self.field { try request.data(MsgKey.ciphertext) })
        let version = try Self.field { try request.integer(MsgKey.keyVersion) }
        return try await self.store.write { db -> Int64 in
            guard let chat = try MessagingStore.chat(db, session.userID, peer.id) else {
                throw MsgFailure(code: .noChat, message: "No chat with '\(peer.username)' yet; open one")
            }
            guard chat.version == version else {
                throw MsgFailure(
                    code: .conflict,
                    message: "The chat key is at version \(chat.version), not \(version); fetch it again"
                )
            }
            try db.execute(
                sql: "INSERT INTO messages (chatId, senderId, keyVersion, ciphertext) VALUES (?, ?, ?, ?)",
                arguments: [chat.id, session.userID, version, Data(ciphertext)]
            )
            return db.lastInsertedRowID
        }
    }

    private func fetch(_ request: PropertyListDictionary, into answer: inout PropertyListDictionary) async throws {
        let session = try self.session(request)
        let peer = try await self.peer(request, MsgKey.with, of: session)
        let after = Int64(try Self.field { try request.optionalInteger(MsgKey.after) } ?? 0)
        let limit = try Self.field { try request.optionalInteger(MsgKey.limit) } ?? MsgLimits.fetchLimit
        guard after >= 0, (1...MsgLimits.fetchLimit).contains(limit) else {
            throw MsgFailure(
                code: .badRequest,
                message: "'after' must be 0 or more and 'limit' 1 to \(MsgLimits.fetchLimit)"
            )
        }
        let me = session
        let (version, wrapped, messages) = try await self.store.read {
            db -> (Int, [UInt8], [StoredMessage]) in
            guard let chat = try MessagingStore.chat(db, me.userID, peer.id) else {
                throw MsgFailure(code: .noChat, message: "No chat with '\(peer.username)' yet; open one")
            }
            let wrapped =
                try Data.fetchOne(
                    db,
                    sql: "SELECT wrappedKey FROM chatKeys WHERE chatId = ? AND userId = ?",
                    arguments: [chat.id, me.userID]
                ) ?? Data()
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT messages.id, messages.keyVersion, messages.ciphertext, users.username
                    FROM messages JOIN users ON users.id = messages.senderId
                    WHERE chatId = ? AND messages.id > ? ORDER BY messages.id LIMIT ?
                    """,
                arguments: [chat.id, after, limit]
            )
            let messages = rows.map { row in
                StoredMessage(
                    id: row["id"],
                    sender: row["username"],
                    keyVersion: row["keyVersion"],
                    ciphertext: Array(row["ciphertext"] as Data)
                )
            }
            return (chat.version, Array(wrapped), messages)
        }
        answer.set(MsgKey.keyVersion, integer: version)
        answer.set(MsgKey.wrappedKey, data: wrapped)
        answer.set(MsgKey.messages, data: MessagePacking.pack(messages))
        answer.set(MsgKey.count, integer: messages.count)
    }

    private func rekey(_ request: PropertyListDictionary) async throws -> Int {
        let session = try self.session(request)
        let peer = try await self.peer(request, MsgKey.with, of: session)
        let version = try Self.field { try request.integer(MsgKey.keyVersion) }
        let mine = try Self.wrappedKey(request, MsgKey.wrappedKeySelf)
        let theirs = try Self.wrappedKey(request, MsgKey.wrappedKeyPeer)
        let records: [(id: Int64, ciphertext: [UInt8])]
        do {
            records = try MessagePacking.unpackReencrypted(try Self.field { try request.data(MsgKey.messages) })
        } catch let error as LabError {
            throw MsgFailure(code: .badRequest, message: error.message)
        }
        for record in records { _ = try Self.ciphertext(record.ciphertext) }
        let stall = self.options.rekeyStall
        let onStall = self.onRekeyStall
        let logger = self.logger
        return try await self.store.write { db -> Int in
            guard let chat = try MessagingStore.chat(db, session.userID, peer.id) else {
                throw MsgFailure(code: .noChat, message: "No chat with '\(peer.username)' yet; open one")
            }
            guard chat.version == version else {
                throw MsgFailure(
                    code: .conflict,
                    message: "The chat key is at version \(chat.version), not \(version); fetch it again"
                )
            }
            // The new ciphertexts must cover exactly the chat's messages: none missed, none foreign.
            let ids = Set(try Int64.fetchAll(db, sql: "SELECT id FROM messages WHERE chatId = ?", arguments: [chat.id]))
            guard ids.count == records.count, Set(records.map(\.id)) == ids else {
                throw MsgFailure(
                    code: .conflict,
                    message:
                        "The chat has \(ids.count) messages and the rekey carries \(records.count) that do not match them; fetch again"
                )
            }
            let next = version + 1
            let update = try db.makeStatement(sql: "UPDATE messages SET ciphertext = ?, keyVersion = ? WHERE id = ?")
            for (index, record) in records.enumerated() {
                try update.execute(arguments: [Data(record.ciphertext), next, record.id])
                if let stall, index == records.count / 2 {
                    logger.notice("rekey: test stall with \(index) of \(records.count) messages rewritten")
                    onStall?()
                    Thread.sleep(forTimeInterval: stall)
                }
            }
            for (user, wrapped) in [(session.userID, mine), (peer.id, theirs)] {
                try db.execute(
                    sql: "UPDATE chatKeys SET wrappedKey = ? WHERE chatId = ? AND userId = ?",
                    arguments: [Data(wrapped), chat.id, user]
                )
            }
            try db.execute(sql: "UPDATE chats SET keyVersion = ? WHERE id = ?", arguments: [next, chat.id])
            return next
        }
    }

    // MARK: Fields

    private func tokenAndSession(_ request: PropertyListDictionary) throws -> (String, Session) {
        let token = try Self.field { try request.string(MsgKey.token) }
        guard token.utf8.count <= 128, let session = self.sessions.withLock({ $0[token] }) else {
            throw MsgFailure(code: .notLoggedIn, message: "Log in first: the token is unknown or logged out")
        }
        return (token, session)
    }

    private func session(_ request: PropertyListDictionary) throws -> Session {
        try self.tokenAndSession(request).1
    }

    /// Runs a field accessor, turning its `malformedMessage` into a `badRequest` answer.
    static func field<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as LabError {
            throw MsgFailure(code: .badRequest, message: error.message)
        }
    }

    static func username(_ request: PropertyListDictionary, _ key: String) throws -> String {
        let name = try Self.field { try request.string(key) }
        guard MsgLimits.isValidUsername(name) else {
            throw MsgFailure(
                code: .badRequest,
                message:
                    "'\(key)' must be 1 to \(MsgLimits.usernameBytes) characters of A-Z a-z 0-9 . _ - (it has \(name.utf8.count) bytes)"
            )
        }
        return name
    }

    static func publicKey(_ request: PropertyListDictionary) throws -> [UInt8] {
        let key = try Self.field { try request.data(MsgKey.publicKey) }
        guard key.count == 32 else {
            throw MsgFailure(code: .badRequest, message: "'publicKey' must be a raw X25519 key of 32 bytes")
        }
        return key
    }

    static func wrappedKey(_ request: PropertyListDictionary, _ key: String) throws -> [UInt8] {
        let wrapped = try Self.field { try request.data(key) }
        guard (33...256).contains(wrapped.count) else {
            throw MsgFailure(code: .badRequest, message: "'\(key)' must be an HPKE-wrapped key of 33 to 256 bytes")
        }
        return wrapped
    }

    static func ciphertext(_ bytes: [UInt8]) throws -> [UInt8] {
        guard (28...MsgLimits.ciphertextBytes).contains(bytes.count) else {
            throw MsgFailure(
                code: .badRequest,
                message:
                    "A message must be 28 to \(MsgLimits.ciphertextBytes) bytes of AES-GCM nonce, ciphertext and tag"
            )
        }
        return bytes
    }

    static func encode(_ answer: PropertyListDictionary) -> [UInt8] {
        (try? answer.encoded()) ?? []
    }

    static func encode(_ failure: MsgFailure) -> [UInt8] {
        var answer = PropertyListDictionary()
        answer.set(MsgKey.ok, bool: false)
        answer.set(MsgKey.error, string: failure.code.rawValue)
        answer.set(MsgKey.message, string: failure.message)
        if let until = failure.until {
            answer.set(MsgKey.until, integer: Int(until.timeIntervalSince1970.rounded(.up)))
        }
        failure.captcha?.write(to: &answer)
        return Self.encode(answer)
    }
}

/// Serves cx/1 and msg/1 on one port, as `lab serve` does: a property-list body with an
/// `op` key is msg/1, or one of the lab's own ops (`serverStats`) if it names one; anything
/// else (a cx/1 request, the legacy bare key) goes to cx/1.
public struct ProtocolRouter: FrameHandler {
    /// The cx/1 server.
    public let cx: any FrameHandler
    /// The msg/1 server, if msg/1 is served.
    public let msg: MessagingService?
    /// The lab's own ops, by name, answered before msg/1 sees them.
    public let ops: [String: any FrameHandler]

    /// A router.
    public init(cx: any FrameHandler, msg: MessagingService?, ops: [String: any FrameHandler] = [:]) {
        self.cx = cx
        self.msg = msg
        self.ops = ops
    }

    /// Sends `body` to the service it belongs to.
    public func respond<R: StepRecorder>(to body: [UInt8], recorder: inout R) async -> FrameAnswer {
        // Decoded only if the key `op` may be in it: a cx/1 request (which has none) is not
        // decoded twice.
        // Only the keys decide: a body with the key `op` whose values msg/1 refuses (a
        // container, say) is still msg/1's to answer, with its own error answer.
        if body.starts(with: PropertyListDictionary.magic), Self.mayContainOpKey(body),
            let keys = PropertyListDictionary.topLevelKeys(of: body), keys.contains(MsgKey.op)
        {
            let request = try? PropertyListDictionary(decoding: body)
            if let name = try? request?.optionalString(MsgKey.op), let handler = self.ops[name] {
                return await handler.respond(to: body, recorder: &recorder)
            }
            if let msg = self.msg { return await msg.respond(to: body, recorder: &recorder) }
        }
        return await self.cx.respond(to: body, recorder: &recorder)
    }

    /// Whether the string `op` occurs as a binary plist object: ASCII (`0x52 'o' 'p'`) or
    /// UTF-16 (`0x62 0 'o' 0 'p'`); every dictionary with the key `op` has one of them.
    static func mayContainOpKey(_ body: [UInt8]) -> Bool {
        let ascii: [UInt8] = [0x52, 0x6F, 0x70]
        let utf16: [UInt8] = [0x62, 0x00, 0x6F, 0x00, 0x70]
        return body.withUnsafeBufferPointer { bytes in
            guard bytes.count >= ascii.count else { return false }
            for index in 0...(bytes.count - ascii.count) {
                if bytes[index] == 0x52, bytes[index + 1] == 0x6F, bytes[index + 2] == 0x70 { return true }
                if bytes[index] == 0x62, index + utf16.count <= bytes.count,
                    bytes[index + 1] == 0, bytes[index + 2] == 0x6F, bytes[index + 3] == 0, bytes[index + 4] == 0x70
                {
                    return true
                }
            }
            return false
        }
    }
}
