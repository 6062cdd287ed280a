import Crypto
import Foundation
import GRDB
import LabCore
import LabWire
import Logging
import Synchronization

extension MessagingService {
    // MARK: Accounts

    func issueCaptcha() -> IssuedCaptcha {
        let (id, text) = self.captchas.issue()
        return IssuedCaptcha(id: id, challenge: text, serverKey: self.publicKey, hpke: self.options.hpke)
    }

    /// The request's captcha id and answer (`badRequest` if either is missing or not a
    /// string); nothing is redeemed yet.
    static func captchaFields(_ request: PropertyListDictionary) throws -> (id: String, answer: String) {
        (try Self.field { try request.string(MsgKey.captchaID) }, try Self.field { try request.string(MsgKey.captcha) })
    }

    /// Redeems the captcha or throws `badCaptcha` carrying a new one. Called only once the
    /// request has passed every check that answers `badRequest` or `weakPassword`, so that
    /// those leave the captcha usable; `work` runs next, and if it is refused `busy` (which
    /// changes nothing, §4.3) the captcha is given back, still usable.
    func withCaptcha<T>(_ fields: (id: String, answer: String), _ work: () async throws -> T) async throws -> T {
        let (id, answer) = fields
        guard id.utf8.count <= 64, answer.utf8.count <= 16, let taken = self.captchas.take(id: id, answer: answer)
        else {
            throw MsgFailure(
                code: .badCaptcha,
                message: "The captcha answer does not match; here is a new captcha",
                captcha: self.issueCaptcha()
            )
        }
        do {
            return try await work()
        } catch let failure as MsgFailure where failure.code == .busy {
            self.captchas.restore(taken)
            throw failure
        }
    }

    func openPassword(
        _ request: PropertyListDictionary,
        _ key: String,
        op: MsgOp,
        binding: [String]
    ) throws -> [UInt8] {
        let sealed = try Self.field { try request.data(key) }
        guard sealed.count <= self.options.hpke.encapsulatedBytes + MsgLimits.passwordBytes + 16,
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
    func requireStrength(_ password: [UInt8]) throws {
        guard password.count >= self.options.minPasswordLength else {
            throw MsgFailure(
                code: .weakPassword,
                message:
                    "A password needs at least \(self.options.minPasswordLength) bytes of UTF-8; it has \(password.count)"
            )
        }
    }

    func register<R: StepRecorder>(
        _ request: PropertyListDictionary,
        from peer: FramePeer,
        recorder: inout R
    ) async throws {
        let username = try Self.username(request, MsgKey.username)
        let key = try self.publicKey(request)
        let captcha = try Self.captchaFields(request)
        let password = try self.openPassword(request, MsgKey.password, op: .register, binding: [username, captcha.id])
        try self.requireStrength(password)
        let kdf = self.options.kdf
        let salt = kdf.makeSalt()
        let (hash, hashing) = try await self.withCaptcha(captcha) {
            try await self.checks.run(source: peer.source) { try kdf.derive(password: password, salt: salt) }
        }
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

    enum Verdict: Sendable {
        case success(LoginState)
        case failure(LoginState)
        case refused(LoginGate)
    }

    /// Checks `password` for the user name under the policy, in its subject's turn (one
    /// check per subject at a time, in arrival order; `LockoutPolicy.subject`): the state
    /// read when the turn comes, the gate, the KDF outside any transaction (for a name that
    /// does not exist, the decoy run, which never matches), then the state's update, which
    /// re-applies the gate. A real account's state under `seed` lives in the store and is
    /// updated in one write transaction that re-reads the account; every other state lives
    /// in the `LoginBook`, so an unknown name goes through the same answers as a real one.
    func attempt<R: StepRecorder>(
        username: String,
        account stale: MessagingStore.Account?,
        from peer: FramePeer,
        password: [UInt8],
        recorder: inout R
    ) async throws -> Verdict {
        let policy = self.options.policy
        let subject = policy.subject(username: username, source: peer.source)
        try await self.turns.acquire(subject)
        defer { self.turns.release(subject) }
        // The checks before this one have landed: a postponement or lock they set refuses
        // this one here, without a KDF run. The account is read afresh (a password change
        // may have landed too).
        var account: MessagingStore.Account? = nil
        if let stale {
            account = try await self.store.read { db in try MessagingStore.account(db, id: stale.id) }
        }
        let stored = policy.storesAccountState && account != nil
        let state = stored ? account!.state : self.book.state(subject, now: self.clock.now())
        let gate = policy.gate(state, now: self.clock.now())
        guard gate == .open else { return .refused(gate) }
        let matches: Bool
        let hashing: UInt64
        if let account {
            guard let kdf = self.kinds.kdf(stored: account.kdf) else {
                throw LabError(.storage, "User \(account.id) has an unknown KDF '\(account.kdf)'")
            }
            let (salt, hash) = (account.salt, account.hash)
            (matches, hashing) = try await self.checks.run(source: peer.source) {
                try kdf.verify(password: password, salt: salt, hash: hash)
            }
        } else {
            // An unknown name costs what a known one does.
            let (kdf, salt) = (self.options.kdf, self.decoySalt)
            (_, hashing) = try await self.checks.run(source: peer.source) {
                try kdf.derive(password: password, salt: salt)
            }
            matches = false
        }
        recorder.record(.kdf, nanoseconds: hashing)
        let clock = self.clock
        guard stored, let account else {
            return self.book.update(subject, now: clock.now()) { state -> Verdict in
                let now = clock.now()
                let gate = policy.gate(state, now: now)
                guard gate == .open else { return .refused(gate) }
                state = matches ? policy.succeeded(state) : policy.failed(state, now: now)
                return matches ? .success(state) : .failure(state)
            }
        }
        let verdict = try await self.store.write { db -> Verdict in
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
        // A lock ends the account's sessions too: a token from before must not outlive it.
        if case .failure(let state) = verdict, state.locked { self.sessions.removeAll(of: account.id) }
        return verdict
    }

    /// Returns if the password was right; otherwise throws the refusal or `badCredentials`
    /// (with `until` when this failure started a postponement).
    static func requireSuccess(_ verdict: Verdict, wrong message: String) throws {
        switch verdict {
        case .success: return
        case .refused(let gate): throw Self.refusal(gate)
        case .failure(let state):
            throw MsgFailure(code: .badCredentials, message: message, until: state.postponedUntil)
        }
    }

    static func refusal(_ gate: LoginGate) -> MsgFailure {
        switch gate {
        case .locked:
            MsgFailure(code: .locked, message: "The account is locked")
        case .postponed(let until):
            MsgFailure(code: .postponed, message: "Too many wrong passwords; try again later", until: until)
        case .open:
            MsgFailure(code: .serverError, message: "The server failed; nothing changed")
        }
    }

    func login<R: StepRecorder>(
        _ request: PropertyListDictionary,
        from peer: FramePeer,
        recorder: inout R
    ) async throws -> String {
        let username = try Self.username(request, MsgKey.username)
        let captcha = try Self.captchaFields(request)
        let password = try self.openPassword(request, MsgKey.password, op: .login, binding: [username, captcha.id])
        let account = try await self.withCaptcha(captcha) { () async throws -> MessagingStore.Account in
            let account = try await self.store.account(named: username)
            let verdict = try await self.attempt(
                username: username,
                account: account,
                from: peer,
                password: password,
                recorder: &recorder
            )
            try Self.requireSuccess(verdict, wrong: "Unknown user or wrong password")
            // A success needs a real account: the decoy check never matches.
            guard let account else { throw MsgFailure(code: .serverError, message: "The server failed; nothing changed") }
            return account
        }
        let token = Token.random(bytes: 32)
        self.sessions.add(token, Session(userID: account.id, username: account.username))
        return token
    }

    func changePassword<R: StepRecorder>(
        _ request: PropertyListDictionary,
        from peer: FramePeer,
        recorder: inout R
    ) async throws {
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
            try await self.attempt(
                username: account.username,
                account: account,
                from: peer,
                password: current,
                recorder: &recorder
            ),
            wrong: "The current password is wrong"
        )
        let kdf = self.options.kdf
        let salt = kdf.makeSalt()
        let (hash, hashing) = try await self.checks.run(source: peer.source) {
            try kdf.derive(password: new, salt: salt)
        }
        recorder.record(.kdf, nanoseconds: hashing)
        try await self.store.write { db in
            try db.execute(
                sql: "UPDATE users SET kdf = ?, salt = ?, hash = ? WHERE id = ?",
                arguments: [kdf.description, Data(salt), Data(hash), session.userID]
            )
        }
    }
}
