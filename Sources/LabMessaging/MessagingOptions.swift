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
    /// Captchas issued and not yet answered that the service keeps; beyond it the oldest go.
    public var captchaCapacity: Int
    /// Password checks (KDF runs) at once, each on a thread of its own, off the event loops.
    public var kdfWorkers: Int
    /// Password checks that may wait for a worker; one more is answered `busy`.
    public var kdfQueueLimit: Int
    /// Password checks of one account that may wait for the one before them to end (they
    /// hold no worker and no place in the queue while they wait); one more is answered `busy`.
    public var accountWaitLimit: Int
    /// The HPKE suite passwords are sealed and chat keys wrapped with; users' keys are of its kind.
    public var hpke: MsgHPKE
    /// Failed-login subjects kept in memory at most (`LoginBook`).
    public var loginBookCapacity: Int
    /// Login sessions at once; a login past it ends the oldest session of an account that
    /// holds the most (`SessionBook`).
    public var maxSessions: Int
    /// Login sessions of one account at once; a login past it ends that account's oldest.
    public var maxSessionsPerAccount: Int

    /// The default of `kdfWorkers`: half the cores (at least one), so that a flood of
    /// passwords leaves the rest to everyone else.
    public static var defaultKDFWorkers: Int { max(1, ProcessInfo.processInfo.activeProcessorCount / 2) }

    /// Options; the safer choices by default.
    public init(
        kdf: PasswordKDF = .default,
        policy: LockoutPolicy = .default,
        captcha: CaptchaGenerator = .csprng,
        minPasswordLength: Int = 8,
        captchaCapacity: Int = 100_000,
        kdfWorkers: Int = MessagingOptions.defaultKDFWorkers,
        kdfQueueLimit: Int = 64,
        accountWaitLimit: Int = 256,
        hpke: MsgHPKE = .x25519,
        loginBookCapacity: Int = 100_000,
        maxSessions: Int = 100_000,
        maxSessionsPerAccount: Int = 16
    ) {
        self.kdf = kdf
        self.policy = policy
        self.captcha = captcha
        self.minPasswordLength = minPasswordLength
        self.captchaCapacity = max(1, captchaCapacity)
        self.kdfWorkers = max(1, kdfWorkers)
        self.kdfQueueLimit = max(0, kdfQueueLimit)
        self.accountWaitLimit = max(0, accountWaitLimit)
        self.hpke = hpke
        self.loginBookCapacity = max(1, loginBookCapacity)
        self.maxSessions = max(1, maxSessions)
        self.maxSessionsPerAccount = max(1, maxSessionsPerAccount)
    }

    /// What a report says about them, e.g. `kdf scrypt:17:8:1, policy throttle (…), captcha csprng`.
    public var description: String {
        "kdf \(self.kdf), policy \(self.policy), captcha \(self.captcha.name), hpke \(self.hpke.rawValue)"
    }
}
