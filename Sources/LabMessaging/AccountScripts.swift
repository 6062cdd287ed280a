import Crypto
public import Foundation
public import LabCore

/// `login`: each iteration asks for a captcha, reads it, logs in and logs out.
public struct LoginScript: MessagingScript {
    public static let name = "login"
    public static let summary = "msg/1: captcha, login with the right password, logout"
    public static let steps: [Step] = [.captcha, .login, .kdf]
    public static let outcomes = ["logins"]

    var user: MessagingUser

    public init(extras: NoExtras, context: ScriptContext) {
        self.user = MessagingUser(
            username: context.username("user"),
            password: ScriptContext.password(),
            suite: context.hpke
        )
    }

    public mutating func prepare<R: StepRecorder>(_ client: MessagingClient, recorder: inout R) async throws {
        try await self.user.register(client, recorder: &recorder).orThrow()
    }

    public mutating func iterate<R: StepRecorder>(_ client: MessagingClient, recorder: inout R) async throws {
        try await self.user.logIn(client, recorder: &recorder)
        try await self.user.logout(client, recorder: &recorder)
        recorder.count("logins")
    }
}

/// `lockout`'s own options.
public struct LockoutExtras: MessagingExtras {
    public static let keys = ["maxAttempts", "waitOut", "untilLocked"]
    /// Wrong passwords tried at most per account.
    public var maxAttempts: Int
    /// Wait out a postponement (instant on the virtual clock) before trying again.
    public var waitOut: Bool
    /// Go on past postponements (waiting them out) until the account is locked or
    /// `maxAttempts` is reached, instead of stopping at the policy's first action.
    public var untilLocked: Bool

    public init(_ object: ScenarioObject) {
        self.maxAttempts =
            object.optional("maxAttempts", expected: "a count from 1 to 1000", isValid: { (1...1000).contains($0) })
            ?? 100
        self.waitOut = object.optional("waitOut", expected: "true or false") ?? true
        self.untilLocked = object.optional("untilLocked", expected: "true or false") ?? false
        if self.untilLocked, !self.waitOut {
            object.problem("untilLocked", "needs \"waitOut\": true (a postponed account cannot be tried)")
        }
    }
}

/// `lockout`: each iteration registers a fresh account and tries wrong passwords until the
/// policy acts (or, with `untilLocked`, until it locks the account), then the right one,
/// after waiting out any postponement if `waitOut`.
///
/// Outcomes: `attempts` (wrong passwords checked and counted by the server), `postponed`
/// (postponements started), `locked`, `neverLocked` (`untilLocked` reached `maxAttempts`),
/// `neverActed`, `recovered` (the right password accepted at the end), `refused` (refused).
public struct LockoutScript: MessagingScript {
    public static let name = "lockout"
    public static let summary = "msg/1: wrong passwords until the policy acts, then the right one"
    public static let steps: [Step] = [.captcha, .register, .login, .kdf]
    public static let outcomes = [
        "attempts", "postponed", "locked", "neverLocked", "neverActed", "recovered", "refused", "captchaRenewed",
    ]

    let context: ScriptContext
    let extras: LockoutExtras
    var accounts = 0

    public init(extras: LockoutExtras, context: ScriptContext) {
        self.context = context
        self.extras = extras
    }

    public static func check(
        _ extras: LockoutExtras,
        service: ServiceSpec,
        setup: FlowSetup
    ) -> [(
        path: String, message: String
    )] {
        extras.waitOut && setup.startsServer && service.clock.plugin.waitsInRealTime
            ? [
                (
                    "options.waitOut",
                    "waiting out a postponement on the system clock takes real minutes; use \"clock\": \"virtual\" or \"waitOut\": false"
                )
            ] : []
    }

    public mutating func prepare<R: StepRecorder>(_ client: MessagingClient, recorder: inout R) async throws {}

    public mutating func iterate<R: StepRecorder>(_ client: MessagingClient, recorder: inout R) async throws {
        self.accounts += 1
        var user = MessagingUser(
            username: self.context.username("victim\(self.accounts)"),
            password: ScriptContext.password(),
            suite: self.context.hpke
        )
        try await user.register(client, recorder: &recorder).orThrow()
        var pending: Date? = nil
        var locked = false
        var acted = false
        attempts: for attempt in 1...self.extras.maxAttempts {
            if let until = pending {
                try await self.context.clock.sleep(until: until)
                pending = nil
            }
            let wrong = "wrong-\(attempt)-" + Token.random(bytes: 4)
            switch try await Self.attempt(&user, password: wrong, client, recorder: &recorder) {
            case .success:
                throw LabError(.serverError, "A wrong password logged in")
            case .failure(let failure) where failure.code == .badCredentials:
                recorder.count("attempts")
                if let until = failure.until {
                    recorder.count("postponed")
                    acted = true
                    pending = until
                    if !self.extras.untilLocked || !self.extras.waitOut { break attempts }
                }
            case .failure(let failure) where failure.code == .locked:
                locked = true
                break attempts
            case .failure(let failure) where failure.code == .postponed:
                pending = failure.until
                if !self.extras.untilLocked || !self.extras.waitOut { break attempts }
            case .failure(let failure):
                throw failure.labError
            }
        }
        if locked {
            recorder.count("locked")
        } else if self.extras.untilLocked {
            recorder.count("neverLocked")
        } else if !acted {
            recorder.count("neverActed")
        }
        if let until = pending, self.extras.waitOut { try await self.context.clock.sleep(until: until) }
        switch try await Self.attempt(&user, password: user.password, client, recorder: &recorder) {
        case .success:
            recorder.count("recovered")
            try await user.logout(client, recorder: &recorder)
        case .failure(let failure) where failure.code == .locked || failure.code == .postponed:
            recorder.count("refused")
        case .failure(let failure):
            throw failure.labError
        }
    }

    /// One login attempt with a captcha read correctly. On the virtual clock another client's
    /// wait may jump time past the captcha's lifetime: then the fresh captcha that comes with
    /// the refusal is answered instead (counted as `captchaRenewed`), as a person would, up
    /// to 10 times. (With 3, `untilLocked` under throttle failed about one run in three on
    /// two cores once failed logins no longer wrote to SQLite: the other client, faster,
    /// jumped the clock by its 8 to 60 minutes of postponement between a renewal and its use
    /// four times running.)
    static func attempt<R: StepRecorder>(
        _ user: inout MessagingUser,
        password: String,
        _ client: MessagingClient,
        recorder: inout R
    ) async throws -> Result<String, MsgFailure> {
        var captcha = try await user.solveCaptcha(client, recorder: &recorder)
        for _ in 1...10 {
            let answer = try await user.login(client, password: password, captcha: captcha, recorder: &recorder)
            guard case .failure(let failure) = answer, failure.code == .badCaptcha, let fresh = failure.captcha else {
                return answer
            }
            recorder.count("captchaRenewed")
            captcha = fresh
        }
        return try await user.login(client, password: password, captcha: captcha, recorder: &recorder)
    }
}

/// `captcha-guess`: an attacker that cannot read captcha images predicts them from the
/// server's time, as the reference's middle-square generator allows, and answers with the
/// prediction for a user name that does not exist (so no account is hurt).
///
/// Outcomes: `guessed` (the captcha was accepted: the answer was `badCredentials`, or, once
/// the name's failures hold it back as they would a real one's, `postponed` or `locked`),
/// `missed`.
public struct CaptchaGuessScript: MessagingScript {
    public static let name = "captcha-guess"
    public static let summary = "msg/1: an attacker predicting middle-square captchas from the clock"
    public static let steps: [Step] = [.captcha, .login, .kdf]
    public static let outcomes = ["guessed", "missed"]

    let context: ScriptContext

    public init(extras: NoExtras, context: ScriptContext) {
        self.context = context
    }

    public mutating func prepare<R: StepRecorder>(_ client: MessagingClient, recorder: inout R) async throws {}

    public mutating func iterate<R: StepRecorder>(_ client: MessagingClient, recorder: inout R) async throws {
        var attacker = MessagingUser(
            username: self.context.username("nobody"),
            password: ScriptContext.password(),
            suite: self.context.hpke
        )
        let captcha = try await attacker.solveCaptcha(client, recorder: &recorder)
        // The bot never looks at `captcha.challenge`: it computes what the server's clock made,
        // with its own model of the generator, not the server's code.
        let guess = MiddleSquarePredictor.captcha(at: self.context.clock.now())
        switch try await attacker.login(client, captcha: captcha, captchaAnswer: guess, recorder: &recorder) {
        case .failure(let failure) where failure.code == .badCaptcha:
            recorder.count("missed")
        case .failure(let failure) where [.badCredentials, .postponed, .locked].contains(failure.code):
            recorder.count("guessed")
        case .failure(let failure):
            throw failure.labError
        case .success:
            throw LabError(.serverError, "A user that was never registered logged in")
        }
    }
}

/// The `captcha-guess` attacker's model of the reference's captcha generator, written from
/// its published description rather than taken from the server: the seed is the digits of
/// the time's seconds then minutes ("ssmm", UTC); for each of 5 characters the seed becomes
/// the middle 4 of the 8 digits of its square, and the character is `A`–`Z`, `0`–`9` at
/// (seed mod 36). Checked against vectors from an independent implementation
/// (`Tests/Interop/midsquare.py`), as the server's generator is.
public enum MiddleSquarePredictor {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")

    /// The captcha a middle-square server shows at `time`.
    public static func captcha(at time: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.minute, .second], from: time)
        var seed = Array(String(format: "%02d%02d", parts.second ?? 0, parts.minute ?? 0))
        var text = ""
        for _ in 0..<5 {
            let value = Int(String(seed))!
            let square = Array(String(value * value))
            let eight = Array(repeating: Character("0"), count: 8 - square.count) + square
            seed = Array(eight[2..<6])
            text.append(Self.alphabet[Int(String(seed))! % Self.alphabet.count])
        }
        return text
    }
}
