import Foundation
import LabCore
import LabMessaging

/// `test-kdf`: PBKDF2-HMAC-SHA256 of `testKDFRounds` rounds under a name of its own, stored
/// as `test-kdf:<rounds>`: the test-only KDF, with an option key of its own.
struct TestKDF: PasswordKDFPlugin {
    static let choice = NamedChoice("test-kdf", "test only: PBKDF2 under another name")
    static let optionKeys = [
        ServiceOptionKey("testKDFRounds", schema: #"{ "type": "integer", "minimum": 1, "maximum": 100 }"#)
    ]

    let rounds: Int

    init() { self.rounds = 2 }

    init(_ options: ScenarioObject) {
        self.rounds =
            options.optional("testKDFRounds", expected: "a count from 1 to 100", isValid: { (1...100).contains($0) }) ?? 2
    }

    init?(stored parameters: [String]) {
        guard parameters.count == 1, let rounds = Int(parameters[0]), (1...100).contains(rounds) else { return nil }
        self.rounds = rounds
    }

    var description: String { "test-kdf:\(self.rounds)" }

    func derive(password: [UInt8], salt: [UInt8], length: Int) throws -> [UInt8] {
        try PBKDF2SHA256KDF(iterations: self.rounds).derive(password: password, salt: salt, length: length)
    }
}

/// `lock-at`: locks a user name for good at its `lockAt`-th failure, with no postponement
/// first: the test-only lockout policy.
struct LockAtPolicy: LockoutPolicyPlugin {
    static let choice = NamedChoice("lock-at", "test only: locked at the lockAt-th failure", isInsecure: true)
    static let optionKeys: [ServiceOptionKey] = [.count("lockAt")]

    let lockAt: Int

    init() { self.lockAt = 2 }

    init(_ options: ScenarioObject) { self.lockAt = options.count("lockAt") ?? 2 }

    var description: String { "lock-at (locked at \(self.lockAt) failures)" }

    func subject(username: String, source: String) -> String { username }

    func failed(_ state: LoginState, now: Date) -> LoginState {
        LoginState(failures: state.failures + 1, locked: state.failures + 1 >= self.lockAt)
    }
}

/// `fixed`: every captcha is `AAAAA`: the test-only captcha generator.
struct FixedCaptcha: CaptchaPlugin {
    static let choice = NamedChoice("fixed", "test only: always AAAAA", isInsecure: true)

    func make(now: Date) -> String { "AAAAA" }
}

/// `late`: virtual time from 2038-01-19: the test-only clock.
final class LateClock: ClockPlugin {
    static let choice = NamedChoice("late", "test only: virtual time from 2038-01-19")
    static let waitsInRealTime = false
    private let clock = VirtualClock(start: Date(timeIntervalSince1970: 2_147_483_648))

    init() {}

    var name: String { Self.choice.name }

    func now() -> Date { self.clock.now() }

    func sleep(until instant: Date) async throws { try await self.clock.sleep(until: instant) }
}
