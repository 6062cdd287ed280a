import Crypto
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
        let response = try await self.connection.request(try request.encoded(), step: op.step, recorder: &recorder)
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

/// A simulated person: a user name, a password, a key pair of the server's HPKE suite (chat
/// keys are wrapped for it), and a session once logged in. Reads captcha challenges as a
/// person would.
public struct MessagingUser: Sendable {
    /// The user name.
    public let username: String
    /// The current password.
    public var password: String
    /// The key chat keys are wrapped for.
    public let keyPair: MsgKeyPair
    /// The session token, once logged in.
    public var token: String?
    /// The server's password-sealing key, from the last captcha.
    public var serverKey: [UInt8]?

    /// A user with a fresh key pair of `suite` (the server's).
    public init(username: String, password: String, suite: MsgHPKE = .x25519) {
        self.username = username
        self.password = password
        self.keyPair = MsgKeyPair(suite: suite)
    }

    /// The HPKE suite of the user's key, which must be the server's.
    public var suite: MsgHPKE { self.keyPair.suite }

    /// The public key, raw.
    public var publicKey: [UInt8] { self.keyPair.publicKey }

    /// Asks for a captcha and reads it (timed as `captcha`).
    public mutating func solveCaptcha<R: StepRecorder>(
        _ client: MessagingClient,
        recorder: inout R
    ) async throws -> IssuedCaptcha {
        let start = Stopwatch.now()
        let captcha = try await client.captcha(recorder: &recorder)
        recorder.record(.captcha, nanoseconds: Stopwatch.now() &- start)
        guard captcha.hpke == self.suite else {
            throw LabError(
                .unsupported,
                "The server seals with HPKE over \(captcha.hpke.kemName) (\"hpke\": \"\(captcha.hpke.rawValue)\"), "
                    + "this client's keys are \(self.suite.kemName); set the flow's \"hpke\" option to \"\(captcha.hpke.rawValue)\""
            )
        }
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
            suite: captcha.hpke,
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
            suite: captcha.hpke,
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
            suite: self.suite,
            context: MsgCrypto.passwordContext(op: .changePassword, field: MsgKey.currentPassword, binding: [token])
        )
        let sealedNew = try MsgCrypto.sealPassword(
            new,
            to: serverKey,
            suite: self.suite,
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

extension Optional where Wrapped: Sendable {
    func asyncOr(_ make: () async throws -> Wrapped) async rethrows -> Wrapped {
        if let value = self { return value }
        return try await make()
    }
}
