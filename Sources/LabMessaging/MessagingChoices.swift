import LabCore

/// One named choice of a msg/1 plugin kind: what scenario files (a messaging flow's `"options"`), `lab serve`'s
/// options and `lab list` call it, and what it does.
public struct NamedChoice: Sendable, Equatable {
    /// The name.
    public let name: String
    /// One line on what it does.
    public let summary: String
    /// Whether it is the kind's default.
    public let isDefault: Bool
    /// Whether reports mark it insecure (the reference app's weak choices, kept for fidelity).
    public let isInsecure: Bool

    init(_ name: String, _ summary: String, isDefault: Bool = false, isInsecure: Bool = false) {
        self.name = name
        self.summary = summary
        self.isDefault = isDefault
        self.isInsecure = isInsecure
    }
}

/// The messaging service's plugin kinds, each one list: password KDFs, lockout policies,
/// captcha generators and clocks. The scenario validator, `lab serve` and `lab list` read
/// these lists; a new choice is a case of its type plus one line here.
public enum MessagingChoices {
    /// `PasswordKDF`: how a password becomes what is stored.
    public static let kdfs = [
        NamedChoice(
            "sha512-salted",
            "one SHA-512 of the password and a 64-hex salt: the reference app's",
            isInsecure: true
        ),
        NamedChoice("pbkdf2-sha256", "PBKDF2-HMAC-SHA256, 600,000 iterations (OWASP 2023; --pbkdf2-iterations)"),
        NamedChoice("scrypt", "scrypt, N = 2^17, r = 8, p = 1 (OWASP; --scrypt-log-n)", isDefault: true),
        NamedChoice("argon2id", "Argon2id, m = 19 MiB, t = 2, p = 1 (OWASP's first choice; --argon2-memory-kib)"),
    ]

    /// `LockoutPolicy`: how wrong passwords are answered.
    public static let policies = [
        NamedChoice(
            "throttle",
            "5 free failures, then each check waits 60 s, doubled per failure up to 1 h; never locks (NIST SP 800-63B)",
            isDefault: true
        ),
        NamedChoice(
            "seed",
            "postponed for 30 min at the 3rd failure, locked at the 5th: the reference app's",
            isInsecure: true
        ),
    ]

    /// `CaptchaGenerator`: how captcha texts are made.
    public static let captchas = [
        NamedChoice("csprng", "5 characters from the system's CSPRNG", isDefault: true),
        NamedChoice(
            "midsquare",
            "middle-square seeded with the clock's seconds and minutes: the reference app's, predictable",
            isInsecure: true
        ),
    ]

    /// `ClockKind`: the time the policies wait in. No one default: a scenario's service runs
    /// on the virtual clock unless it says otherwise, `lab serve` on the system's.
    public static let clocks = [
        NamedChoice("system", "real time (lab serve's default)"),
        NamedChoice(
            "virtual",
            "time that jumps to each wait's end, so a 30-minute postponement passes at once (scenarios' default)"
        ),
    ]

    /// Every kind, with its name, in the order `lab list` shows them.
    public static let all: [(kind: String, choices: [NamedChoice])] = [
        ("KDFs", kdfs), ("Lockout policies", policies), ("Captchas", captchas), ("Clocks", clocks),
    ]
}
