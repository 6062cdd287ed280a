import Crypto
import Foundation
import GRDB
public import LabCore
import LabWire
public import Logging
import Synchronization

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
    /// The kinds stored hashes are read with (a hash stored under another KDF of them
    /// still verifies).
    public let kinds: MessagingKinds
    /// The clock policies read.
    public let clock: any LabClock
    let serverKey: MsgKeyPair
    let captchas: CaptchaBook
    let sessions: SessionBook
    let logger: Logger
    /// A salt for the KDF run on unknown user names, so that they cost what a known one does.
    let decoySalt: [UInt8]
    let checks: PasswordChecks

    /// The password-check pool (KDF runs off the event loops, bounded): to watch it, or, in
    /// a test, to hold its workers.
    public var passwordChecks: PasswordChecks { self.checks }
    /// The largest answer body the transport may send (its frame limit): a `fetch` page
    /// stops before it.
    public let maxAnswerBytes: Int
    /// The bytes `fetch` pages being read from the store may hold at once, over every request:
    /// past it pages shrink (to one message at least), so that many connections asking at
    /// once for a large chat cannot hold a page each (`--max-buffered-bytes`).
    let pagesInMaking: ByteAllowance

    /// One password check at a time per subject (`LockoutPolicy.subject`).
    let turns: AccountTurns<String>
    /// Failed-login states not stored with an account.
    let book: LoginBook

    /// Login sessions open now.
    public var sessionCount: Int { self.sessions.count }

    /// The login state `username` has when tried from `source`: what the policy judges the
    /// next attempt by (a fresh state for a name that never failed there).
    public func loginState(username: String, source: FramePeer) async throws -> LoginState {
        let policy = self.options.policy
        if policy.storesAccountState, let account = try await self.store.account(named: username) {
            return account.state
        }
        return self.book.state(policy.subject(username: username, source: source.source), now: self.clock.now())
    }

    typealias Session = SessionBook.Session

    /// A service over `store`.
    public init(
        store: MessagingStore,
        options: MessagingOptions = MessagingOptions(),
        kinds: MessagingKinds,
        clock: any LabClock = SystemClock(),
        logger: Logger = Logger(label: "lab.msg"),
        maxAnswerBytes: Int = TransportOptions().maxFrameBytes,
        maxPagesBytes: Int = TransportOptions.defaultMaxBufferedBytes
    ) {
        self.store = store
        self.maxAnswerBytes = maxAnswerBytes
        self.pagesInMaking = ByteAllowance(limit: maxPagesBytes)
        self.options = options
        self.kinds = kinds
        self.clock = clock
        self.logger = logger
        self.serverKey = MsgKeyPair(suite: options.hpke)
        self.captchas = CaptchaBook(generator: options.captcha, clock: clock, capacity: options.captchaCapacity)
        self.decoySalt = options.kdf.makeSalt()
        self.checks = PasswordChecks(workers: options.kdfWorkers, queueLimit: options.kdfQueueLimit)
        self.turns = AccountTurns(waitLimit: options.accountWaitLimit)
        self.book = LoginBook(capacity: options.loginBookCapacity)
        self.sessions = SessionBook(capacity: options.maxSessions, perAccount: options.maxSessionsPerAccount)
    }

    /// The server's public key (of `options.hpke`'s kind), which clients seal passwords to.
    public var publicKey: [UInt8] { self.serverKey.publicKey }

    /// The `busy` answer shared with cx/1 (docs/protocol.md §1.4): `ok` = false for msg/1's
    /// clients.
    public func busyAnswer(connectionLimit: Int) -> [UInt8]? {
        BusyAnswer.body(connectionLimit: connectionLimit)
    }

    /// Answers one msg/1 request from a peer the transport cannot name.
    public func respond<R: StepRecorder>(to body: [UInt8], recorder: inout R) async -> FrameAnswer {
        await self.respond(to: body, from: .inProcess, recorder: &recorder)
    }

    /// Answers one msg/1 request from `peer`.
    public func respond<R: StepRecorder>(to body: [UInt8], from peer: FramePeer, recorder: inout R) async -> FrameAnswer
    {
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
            let answer = try await self.perform(known, request, from: peer, recorder: &recorder)
            return FrameAnswer(body: Self.encode(answer), group: op)
        } catch let failure as MsgFailure {
            return FrameAnswer(body: Self.encode(failure), group: op, errorCode: failure.code.rawValue)
        } catch {
            self.logger.error("msg/1 \(op) failed: \(error)")
            let failure = MsgFailure(code: .serverError, message: "The server failed; nothing changed")
            return FrameAnswer(body: Self.encode(failure), group: op, errorCode: failure.code.rawValue)
        }
    }

    func perform<R: StepRecorder>(
        _ op: MsgOp,
        _ request: PropertyListDictionary,
        from peer: FramePeer,
        recorder: inout R
    ) async throws -> PropertyListDictionary {
        var answer = PropertyListDictionary()
        answer.set(MsgKey.ok, bool: true)
        switch op {
        case .captcha:
            self.issueCaptcha().write(to: &answer)
        case .register:
            try await self.register(request, from: peer, recorder: &recorder)
        case .login:
            answer.set(MsgKey.token, string: try await self.login(request, from: peer, recorder: &recorder))
        case .changePassword:
            try await self.changePassword(request, from: peer, recorder: &recorder)
        case .publishKey:
            let session = try self.session(request)
            let key = try self.publicKey(request)
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
            let (version, staged) = try await self.rekey(request)
            answer.set(MsgKey.keyVersion, integer: version)
            if let staged { answer.set(MsgKey.count, integer: staged) }
        case .logout:
            let token = try Self.field { try request.string(MsgKey.token) }
            guard self.sessions.remove(token) else {
                throw MsgFailure(code: .notLoggedIn, message: "The token is unknown or already logged out")
            }
        }
        return answer
    }

    // MARK: Fields

    func tokenAndSession(_ request: PropertyListDictionary) throws -> (String, Session) {
        let token = try Self.field { try request.string(MsgKey.token) }
        guard token.utf8.count <= 128, let session = self.sessions.session(token) else {
            throw MsgFailure(code: .notLoggedIn, message: "Log in first: the token is unknown or logged out")
        }
        return (token, session)
    }

    func session(_ request: PropertyListDictionary) throws -> Session {
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

    /// A user's public key, of the server's HPKE suite.
    func publicKey(_ request: PropertyListDictionary) throws -> [UInt8] {
        let key = try Self.field { try request.data(MsgKey.publicKey) }
        let suite = self.options.hpke
        guard key.count == suite.publicKeyBytes else {
            throw MsgFailure(
                code: .badRequest,
                message:
                    "'publicKey' must be \(suite == .x25519 ? "a raw X25519" : "an X-Wing") key of \(suite.publicKeyBytes) bytes, this server's HPKE suite (\(suite.rawValue)); it has \(key.count)"
            )
        }
        if let reason = suite.unusableKey(key) {
            throw MsgFailure(code: .badRequest, message: "'publicKey' is unusable: \(reason)")
        }
        return key
    }

    /// A chat key wrapped with HPKE for one participant: the server's suite's encapsulated
    /// key, then 1 to 224 bytes (a 32-byte key and its 16-byte tag).
    func wrappedKey(_ request: PropertyListDictionary, _ key: String) throws -> [UInt8] {
        let wrapped = try Self.field { try request.data(key) }
        let encapsulated = self.options.hpke.encapsulatedBytes
        let sizes = (encapsulated + 1)...(encapsulated + 224)
        guard sizes.contains(wrapped.count) else {
            throw MsgFailure(
                code: .badRequest,
                message: "'\(key)' must be an HPKE-wrapped key of \(sizes.lowerBound) to \(sizes.upperBound) bytes"
            )
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
