import Crypto
import CryptoExtras
import Foundation
import LabCore

/// How the service turns a password into what it stores: `sha512-salted` (the reference
/// app's, insecure), `pbkdf2-sha256`, `scrypt` or `argon2id`. Timed as the `kdf` step.
///
/// Each stored hash records its KDF and parameters (`StoredPassword.kdf`), so a service
/// configured with another KDF still verifies the passwords stored under the old one.
public enum PasswordKDF: Sendable, Hashable, CustomStringConvertible {
    /// One SHA-512 of the password followed by a 64-hex-character salt, as the reference did.
    case sha512Salted
    /// PBKDF2-HMAC-SHA256 with a 16-byte salt and a 32-byte output.
    case pbkdf2SHA256(iterations: Int)
    /// scrypt with a 16-byte salt and a 32-byte output.
    case scrypt(logN: Int, r: Int, p: Int)
    /// Argon2id (RFC 9106, version 1.3) with a 16-byte salt and a 32-byte output: m KiB of
    /// memory, t passes, p lanes.
    case argon2id(memoryKiB: Int, iterations: Int, parallelism: Int)

    /// The plugin names scenario files use (`MessagingChoices.kdfs`).
    public static let names = MessagingChoices.kdfs.map(\.name)
    /// OWASP's 2023 figure for PBKDF2-HMAC-SHA256.
    public static let defaultPBKDF2Iterations = 600_000
    /// The default: scrypt with N = 2^17, r = 8, p = 1 (OWASP's first scrypt setting).
    public static let `default` = PasswordKDF.scrypt(logN: 17, r: 8, p: 1)
    /// OWASP's first Argon2id setting: m = 19 MiB, t = 2, p = 1.
    public static let defaultArgon2id = PasswordKDF.argon2id(memoryKiB: 19_456, iterations: 2, parallelism: 1)
    /// The memory an `argon2id` scenario or `lab serve` may give it, in KiB (64 KiB to 4 GiB).
    public static let argon2MemoryRange = 64...4_194_304

    /// The KDF called `name` with its default parameters, or nil.
    public init?(name: String) {
        switch name {
        case "sha512-salted": self = .sha512Salted
        case "pbkdf2-sha256": self = .pbkdf2SHA256(iterations: Self.defaultPBKDF2Iterations)
        case "scrypt": self = .default
        case "argon2id": self = .defaultArgon2id
        default: return nil
        }
    }

    /// The plugin name.
    public var name: String {
        switch self {
        case .sha512Salted: "sha512-salted"
        case .pbkdf2SHA256: "pbkdf2-sha256"
        case .scrypt: "scrypt"
        case .argon2id: "argon2id"
        }
    }

    /// Whether reports must mark it insecure: one fast hash is no defence against guessing.
    public var isInsecure: Bool { self == .sha512Salted }

    /// The name with its parameters, as stored beside each hash: `pbkdf2-sha256:600000`,
    /// `scrypt:17:8:1`, `argon2id:19456:2:1` (m in KiB, t, p), `sha512-salted`.
    public var description: String {
        switch self {
        case .sha512Salted: "sha512-salted"
        case .pbkdf2SHA256(let iterations): "pbkdf2-sha256:\(iterations)"
        case .scrypt(let logN, let r, let p): "scrypt:\(logN):\(r):\(p)"
        case .argon2id(let memory, let iterations, let parallelism): "argon2id:\(memory):\(iterations):\(parallelism)"
        }
    }

    /// Parses `description`'s form back; nil if it is not one.
    public init?(stored text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        switch parts.first {
        case "sha512-salted" where parts.count == 1:
            self = .sha512Salted
        case "pbkdf2-sha256" where parts.count == 2:
            guard let iterations = Int(parts[1]), iterations >= 1 else { return nil }
            self = .pbkdf2SHA256(iterations: iterations)
        case "scrypt" where parts.count == 4:
            guard let logN = Int(parts[1]), let r = Int(parts[2]), let p = Int(parts[3]),
                (1...30).contains(logN), r >= 1, p >= 1
            else { return nil }
            self = .scrypt(logN: logN, r: r, p: p)
        case "argon2id" where parts.count == 4:
            guard let memory = Int(parts[1]), let iterations = Int(parts[2]), let parallelism = Int(parts[3]),
                Self.argon2MemoryRange.contains(memory), (1...100).contains(iterations), (1...64).contains(parallelism),
                memory >= 8 * parallelism
            else { return nil }
            self = .argon2id(memoryKiB: memory, iterations: iterations, parallelism: parallelism)
        default:
            return nil
        }
    }

    /// A fresh salt as this KDF stores it: 64 hex characters for `sha512-salted` (the
    /// reference's), 16 random bytes otherwise.
    public func makeSalt() -> [UInt8] {
        switch self {
        case .sha512Salted:
            return Array(SecureRandom.bytes(32).map { String(format: "%02x", $0) }.joined().utf8)
        case .pbkdf2SHA256, .scrypt, .argon2id:
            return SecureRandom.bytes(16)
        }
    }

    /// Derives the stored hash of `password` with `salt`: 32 bytes (64 for `sha512-salted`,
    /// whose length is SHA-512's), or `length` bytes from PBKDF2, scrypt and Argon2id.
    public func derive(password: [UInt8], salt: [UInt8], length: Int = 32) throws -> [UInt8] {
        do {
            switch self {
            case .sha512Salted:
                var hash = SHA512()
                hash.update(data: password)
                hash.update(data: salt)
                return Array(hash.finalize())
            case .pbkdf2SHA256(let iterations):
                let key = try KDF.Insecure.PBKDF2.deriveKey(
                    from: password,
                    salt: salt,
                    using: .sha256,
                    outputByteCount: length,
                    unsafeUncheckedRounds: iterations
                )
                return key.withUnsafeBytes { Array($0) }
            case .scrypt(let logN, let r, let p):
                let key = try KDF.Scrypt.deriveKey(
                    from: password,
                    salt: salt,
                    outputByteCount: length,
                    rounds: 1 << logN,
                    blockSize: r,
                    parallelism: p
                )
                return key.withUnsafeBytes { Array($0) }
            case .argon2id(let memory, let iterations, let parallelism):
                return try Argon2id.derive(
                    password: password,
                    salt: salt,
                    memoryKiB: memory,
                    iterations: iterations,
                    parallelism: parallelism,
                    length: length
                )
            }
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
}
