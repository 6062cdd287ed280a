import Crypto
import CryptoExtras
import Foundation
public import LabCore

/// `sha512-salted`: one SHA-512 of the password followed by a 64-hex-character salt, as the
/// reference app did. Insecure: one fast hash is no defence against guessing.
public struct SHA512SaltedKDF: PasswordKDFPlugin {
    public static let choice = NamedChoice(
        "sha512-salted",
        "one SHA-512 of the password and a 64-hex salt: the reference app's",
        isInsecure: true
    )

    public init() {}
    public init(_ options: ScenarioObject) {}

    public init?(stored parameters: [String]) {
        guard parameters.isEmpty else { return nil }
    }

    public var description: String { Self.choice.name }

    /// 64 hex characters, as the reference made them.
    public func makeSalt() -> [UInt8] {
        Array(SecureRandom.bytes(32).map { String(format: "%02x", $0) }.joined().utf8)
    }

    /// SHA-512's 64 bytes, whatever `length` asks.
    public func derive(password: [UInt8], salt: [UInt8], length: Int) throws -> [UInt8] {
        var hash = SHA512()
        hash.update(data: password)
        hash.update(data: salt)
        return Array(hash.finalize())
    }
}

/// `pbkdf2-sha256`: PBKDF2-HMAC-SHA256 with a 16-byte salt.
public struct PBKDF2SHA256KDF: PasswordKDFPlugin {
    public static let choice = NamedChoice(
        "pbkdf2-sha256",
        "PBKDF2-HMAC-SHA256, 600,000 iterations (OWASP 2023; --pbkdf2-iterations)"
    )
    public static let optionKeys = [
        ServiceOptionKey("pbkdf2Iterations", schema: #"{ "type": "integer", "minimum": 1, "maximum": 10000000 }"#)
    ]
    /// OWASP's 2023 figure.
    public static let defaultIterations = 600_000

    /// The iteration count.
    public let iterations: Int

    public init() { self.init(iterations: Self.defaultIterations) }

    /// PBKDF2 of `iterations` rounds.
    public init(iterations: Int) { self.iterations = iterations }

    public init(_ options: ScenarioObject) {
        self.iterations =
            options.optional(
                "pbkdf2Iterations",
                expected: "an iteration count from 1 to 10000000",
                isValid: { (1...10_000_000).contains($0) }
            ) ?? Self.defaultIterations
    }

    public init?(stored parameters: [String]) {
        guard parameters.count == 1, let iterations = Int(parameters[0]), iterations >= 1 else { return nil }
        self.iterations = iterations
    }

    public var description: String { "pbkdf2-sha256:\(self.iterations)" }

    public func derive(password: [UInt8], salt: [UInt8], length: Int) throws -> [UInt8] {
        let key = try KDF.Insecure.PBKDF2.deriveKey(
            from: password,
            salt: salt,
            using: .sha256,
            outputByteCount: length,
            unsafeUncheckedRounds: self.iterations
        )
        return key.withUnsafeBytes { Array($0) }
    }
}

/// `scrypt` (the default): a 16-byte salt; N = 2^17, r = 8, p = 1 unless told otherwise.
public struct ScryptKDF: PasswordKDFPlugin {
    public static let choice = NamedChoice(
        "scrypt",
        "scrypt, N = 2^17, r = 8, p = 1 (OWASP; --scrypt-log-n)",
        isDefault: true
    )
    public static let optionKeys = [
        ServiceOptionKey("scryptLogN", schema: #"{ "type": "integer", "minimum": 1, "maximum": 20 }"#)
    ]

    /// log2 of N, r and p.
    public let logN: Int, r: Int, p: Int

    public init() { self.init(logN: 17, r: 8, p: 1) }

    /// scrypt with N = 2^`logN`.
    public init(logN: Int, r: Int, p: Int) {
        (self.logN, self.r, self.p) = (logN, r, p)
    }

    public init(_ options: ScenarioObject) {
        let logN =
            options.optional(
                "scryptLogN",
                expected: "log2 of scrypt's N, from 1 to 20",
                isValid: { (1...20).contains($0) }
            ) ?? 17
        self.init(logN: logN, r: 8, p: 1)
    }

    public init?(stored parameters: [String]) {
        guard parameters.count == 3, let logN = Int(parameters[0]), let r = Int(parameters[1]),
            let p = Int(parameters[2]), (1...30).contains(logN), r >= 1, p >= 1
        else { return nil }
        self.init(logN: logN, r: r, p: p)
    }

    public var description: String { "scrypt:\(self.logN):\(self.r):\(self.p)" }

    public func derive(password: [UInt8], salt: [UInt8], length: Int) throws -> [UInt8] {
        let key = try KDF.Scrypt.deriveKey(
            from: password,
            salt: salt,
            outputByteCount: length,
            rounds: 1 << self.logN,
            blockSize: self.r,
            parallelism: self.p
        )
        return key.withUnsafeBytes { Array($0) }
    }
}

/// `argon2id`: Argon2id (RFC 9106, version 1.3) with a 16-byte salt: m KiB of memory, t
/// passes, p lanes; OWASP's first setting (m = 19 MiB, t = 2, p = 1) by default.
public struct Argon2idKDF: PasswordKDFPlugin {
    public static let choice = NamedChoice(
        "argon2id",
        "Argon2id, m = 19 MiB, t = 2, p = 1 (OWASP's first choice; --argon2-memory-kib)"
    )
    public static let optionKeys = [
        ServiceOptionKey("argon2MemoryKiB", schema: #"{ "type": "integer", "minimum": 64, "maximum": 4194304 }"#)
    ]
    /// The memory a scenario or `lab serve` may give it, in KiB (64 KiB to 4 GiB).
    public static let memoryRange = 64...4_194_304

    /// m in KiB, t and p.
    public let memoryKiB: Int, iterations: Int, parallelism: Int

    public init() { self.init(memoryKiB: 19_456, iterations: 2, parallelism: 1) }

    /// Argon2id of these parameters.
    public init(memoryKiB: Int, iterations: Int, parallelism: Int) {
        (self.memoryKiB, self.iterations, self.parallelism) = (memoryKiB, iterations, parallelism)
    }

    public init(_ options: ScenarioObject) {
        let memory =
            options.optional(
                "argon2MemoryKiB",
                expected: "Argon2id's memory in KiB, from 64 to 4194304",
                isValid: { Self.memoryRange.contains($0) }
            ) ?? 19_456
        self.init(memoryKiB: memory, iterations: 2, parallelism: 1)
    }

    public init?(stored parameters: [String]) {
        guard parameters.count == 3, let memory = Int(parameters[0]), let iterations = Int(parameters[1]),
            let parallelism = Int(parameters[2]), Self.memoryRange.contains(memory), (1...100).contains(iterations),
            (1...64).contains(parallelism), memory >= 8 * parallelism
        else { return nil }
        self.init(memoryKiB: memory, iterations: iterations, parallelism: parallelism)
    }

    public var description: String { "argon2id:\(self.memoryKiB):\(self.iterations):\(self.parallelism)" }

    public func derive(password: [UInt8], salt: [UInt8], length: Int) throws -> [UInt8] {
        try Argon2id.derive(
            password: password,
            salt: salt,
            memoryKiB: self.memoryKiB,
            iterations: self.iterations,
            parallelism: self.parallelism,
            length: length
        )
    }
}
