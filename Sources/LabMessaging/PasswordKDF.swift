public import LabCore

/// A password KDF with its parameters: what the service derives and stores with. Its
/// `description` is what is stored beside each hash, name first (`scrypt:17:8:1`), so that
/// the plugin of that name can read it back (`PasswordKDFPlugin.init(stored:)`).
public protocol PasswordHashing: Sendable, CustomStringConvertible {
    /// The plugin's name, e.g. `scrypt`.
    var name: String { get }
    /// Whether reports must mark it insecure.
    var isInsecure: Bool { get }
    /// A fresh salt as this KDF stores it.
    func makeSalt() -> [UInt8]
    /// Derives the stored hash of `password` with `salt`, `length` bytes where the KDF lets
    /// the length be chosen.
    func derive(password: [UInt8], salt: [UInt8], length: Int) throws -> [UInt8]
}

extension PasswordHashing {
    /// Not insecure, unless the KDF says so.
    public var isInsecure: Bool { false }

    /// 16 random bytes.
    public func makeSalt() -> [UInt8] { SecureRandom.bytes(16) }
}

/// A KDF plugin (`MessagingKinds.kdfs`): a `PasswordHashing` type that scenario options,
/// `lab serve` and stored hashes can name.
public protocol PasswordKDFPlugin: PasswordHashing {
    /// Its name, summary and marks, for `lab list` and the options' checks.
    static var choice: NamedChoice { get }
    /// The keys it reads from a messaging flow's `"options"` (besides `kdf`).
    static var optionKeys: [ServiceOptionKey] { get }
    /// The KDF with its default parameters.
    init()
    /// The KDF `options` ask for, its keys read with `optional` (a bad value is recorded
    /// there, and the default taken).
    init(_ options: ScenarioObject)
    /// The KDF a stored hash names: the parts of its `description` after the name; nil if
    /// they are not one this plugin writes.
    init?(stored parameters: [String])
}

extension PasswordKDFPlugin {
    /// No keys of its own.
    public static var optionKeys: [ServiceOptionKey] { [] }

    /// `choice.name`.
    public var name: String { Self.choice.name }

    /// `choice.isInsecure`.
    public var isInsecure: Bool { Self.choice.isInsecure }
}

/// How the service turns a password into what it stores: a KDF plugin with its
/// parameters; the built-in ones are `sha512-salted` (the reference app's, insecure),
/// `pbkdf2-sha256`, `scrypt` and `argon2id`. Timed as the `kdf` step.
///
/// Each stored hash records its KDF and parameters (`description`), so a service configured
/// with another KDF still verifies the passwords stored under the old one. Two are equal
/// when they store the same description.
public struct PasswordKDF: Sendable, Hashable, CustomStringConvertible {
    /// The KDF.
    public let hashing: any PasswordHashing

    /// `hashing`, as the service uses it.
    public init(_ hashing: any PasswordHashing) {
        self.hashing = hashing
    }

    /// The default: scrypt with N = 2^17, r = 8, p = 1 (OWASP's first scrypt setting).
    public static let `default` = PasswordKDF(ScryptKDF())
    /// OWASP's first Argon2id setting: m = 19 MiB, t = 2, p = 1.
    public static let defaultArgon2id = PasswordKDF(Argon2idKDF())
    /// OWASP's 2023 figure for PBKDF2-HMAC-SHA256.
    public static let defaultPBKDF2Iterations = PBKDF2SHA256KDF.defaultIterations
    /// The memory an `argon2id` scenario or `lab serve` may give it, in KiB (64 KiB to 4 GiB).
    public static let argon2MemoryRange = Argon2idKDF.memoryRange

    /// One SHA-512 of the password followed by a 64-hex-character salt, as the reference did.
    public static let sha512Salted = PasswordKDF(SHA512SaltedKDF())

    /// PBKDF2-HMAC-SHA256 with a 16-byte salt and a 32-byte output.
    public static func pbkdf2SHA256(iterations: Int) -> PasswordKDF {
        PasswordKDF(PBKDF2SHA256KDF(iterations: iterations))
    }

    /// scrypt with a 16-byte salt and a 32-byte output.
    public static func scrypt(logN: Int, r: Int, p: Int) -> PasswordKDF {
        PasswordKDF(ScryptKDF(logN: logN, r: r, p: p))
    }

    /// Argon2id (RFC 9106, version 1.3) with a 16-byte salt and a 32-byte output: m KiB of
    /// memory, t passes, p lanes.
    public static func argon2id(memoryKiB: Int, iterations: Int, parallelism: Int) -> PasswordKDF {
        PasswordKDF(Argon2idKDF(memoryKiB: memoryKiB, iterations: iterations, parallelism: parallelism))
    }

    /// The KDF called `name` in `kinds`, with its default parameters, or nil.
    public init?(name: String, kinds: MessagingKinds) {
        guard let plugin = kinds.kdf(named: name) else { return nil }
        self.init(plugin.init())
    }

    /// Parses `description`'s form back with the plugin it names in `kinds`; nil if none
    /// reads it.
    public init?(stored text: String, kinds: MessagingKinds) {
        guard let kdf = kinds.kdf(stored: text) else { return nil }
        self = kdf
    }

    /// The plugin name.
    public var name: String { self.hashing.name }

    /// Whether reports must mark it insecure.
    public var isInsecure: Bool { self.hashing.isInsecure }

    /// The name with its parameters, as stored beside each hash: `pbkdf2-sha256:600000`,
    /// `scrypt:17:8:1`, `argon2id:19456:2:1` (m in KiB, t, p), `sha512-salted`.
    public var description: String { self.hashing.description }

    /// A fresh salt as this KDF stores it.
    public func makeSalt() -> [UInt8] { self.hashing.makeSalt() }

    /// Derives the stored hash of `password` with `salt`: `length` bytes (or the KDF's own
    /// length, e.g. SHA-512's 64 for `sha512-salted`). A failure other than the lab's own
    /// errors is a `cryptoFailure` naming the KDF.
    public func derive(password: [UInt8], salt: [UInt8], length: Int = 32) throws -> [UInt8] {
        do {
            return try self.hashing.derive(password: password, salt: salt, length: length)
        } catch let error as LabError {
            throw error
        } catch {
            throw LabError(.cryptoFailure, "The \(self) KDF failed", cause: UnderlyingError(describing: error))
        }
    }

    /// Whether `password` hashes to `hash` with `salt`, compared in constant time.
    public func verify(password: [UInt8], salt: [UInt8], hash: [UInt8]) throws -> Bool {
        let derived = try self.derive(password: password, salt: salt)
        guard derived.count == hash.count else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(derived, hash) { difference |= a ^ b }
        return difference == 0
    }

    public static func == (lhs: PasswordKDF, rhs: PasswordKDF) -> Bool { lhs.description == rhs.description }

    public func hash(into hasher: inout Hasher) { hasher.combine(self.description) }
}
