import Foundation
public import LabCore
import Synchronization

/// The messaging service's settings in a flow entry's `"options"`: the KDF, the lockout
/// policy and its thresholds, the captcha generator and the clock.
public struct ServiceSpec: Sendable, Hashable {
    /// The keys it reads.
    public static let keys = [
        "kdf", "pbkdf2Iterations", "scryptLogN", "argon2MemoryKiB", "policy", "postponeAfter", "postponeFor",
        "lockAfter", "freeFailures",
        "delay", "maxDelay", "captcha", "clock", "minPasswordLength", "hpke",
    ]
    static let seedKeys = ["postponeAfter", "postponeFor", "lockAfter"]
    static let throttleKeys = ["freeFailures", "delay", "maxDelay"]

    /// The service's options.
    public var options: MessagingOptions
    /// The clock both sides share when the lab runs the server.
    public var clock: ClockKind

    /// The defaults: scrypt, throttle, csprng, the virtual clock.
    public init(options: MessagingOptions = MessagingOptions(), clock: ClockKind = .virtual) {
        self.options = options
        self.clock = clock
    }

    /// Reads the keys from `object`, recording every problem with its path.
    ///
    /// Longer than the functions around it, on purpose: one statement per key of the
    /// service's keys in a messaging flow's `"options"`, in the order docs/scenarios.md lists them, each with the value it
    /// expects, so that the decoder reads as the reference does.
    public init(_ object: ScenarioObject) {
        var options = MessagingOptions()
        let kdfName: String =
            object.optional(
                "kdf",
                expected: "one of: \(PasswordKDF.names.joined(separator: ", "))",
                isValid: { PasswordKDF.names.contains($0) }
            ) ?? PasswordKDF.default.name
        switch kdfName {
        case "sha512-salted":
            options.kdf = .sha512Salted
        case "pbkdf2-sha256":
            let iterations =
                object.optional(
                    "pbkdf2Iterations",
                    expected: "an iteration count from 1 to 10000000",
                    isValid: { (1...10_000_000).contains($0) }
                ) ?? PasswordKDF.defaultPBKDF2Iterations
            options.kdf = .pbkdf2SHA256(iterations: iterations)
        case "argon2id":
            let memory =
                object.optional(
                    "argon2MemoryKiB",
                    expected: "Argon2id's memory in KiB, from 64 to 4194304",
                    isValid: { PasswordKDF.argon2MemoryRange.contains($0) }
                ) ?? 19_456
            options.kdf = .argon2id(memoryKiB: memory, iterations: 2, parallelism: 1)
        default:
            let logN =
                object.optional(
                    "scryptLogN",
                    expected: "log2 of scrypt's N, from 1 to 20",
                    isValid: { (1...20).contains($0) }
                ) ?? 17
            options.kdf = .scrypt(logN: logN, r: 8, p: 1)
        }
        if kdfName != "pbkdf2-sha256", object.contains("pbkdf2Iterations") {
            object.problem("pbkdf2Iterations", "only for \"kdf\": \"pbkdf2-sha256\"")
        }
        if kdfName != "scrypt", object.contains("scryptLogN") {
            object.problem("scryptLogN", "only for \"kdf\": \"scrypt\"")
        }
        if kdfName != "argon2id", object.contains("argon2MemoryKiB") {
            object.problem("argon2MemoryKiB", "only for \"kdf\": \"argon2id\"")
        }

        let policy: String =
            object.optional(
                "policy",
                expected: "one of: \(LockoutPolicy.names.joined(separator: ", "))",
                isValid: { LockoutPolicy.names.contains($0) }
            ) ?? LockoutPolicy.default.name
        let count = { (key: String, fallback: Int) -> Int in
            object.optional(key, expected: "a count from 1 to 1000", isValid: { (1...1000).contains($0) }) ?? fallback
        }
        let span = { (key: String, fallback: TimeInterval) -> TimeInterval in
            let value: TimeSpan? = object.optional(key, expected: TimeSpan.expectation)
            return value.map(\.seconds) ?? fallback
        }
        if policy == "seed" {
            guard case .seed(let after, let duration, let lock) = LockoutPolicy.seedDefault else { fatalError() }
            let postponeAfter = count("postponeAfter", after)
            let lockAfter = count("lockAfter", lock)
            if lockAfter <= postponeAfter, object.contains("lockAfter") || object.contains("postponeAfter") {
                object.problem("lockAfter", "must be greater than postponeAfter (\(postponeAfter))")
            }
            options.policy = .seed(
                postponeAfter: postponeAfter,
                postponeFor: span("postponeFor", duration),
                lockAfter: lockAfter
            )
        } else {
            guard case .throttle(let free, let delay, let maxDelay) = LockoutPolicy.default else { fatalError() }
            let first = span("delay", delay)
            let cap = span("maxDelay", maxDelay)
            if cap < first { object.problem("maxDelay", "must be at least the delay (\(Int(first)) s)") }
            options.policy = .throttle(freeFailures: count("freeFailures", free), delay: first, maxDelay: cap)
        }
        for key in (policy == "seed" ? Self.throttleKeys : Self.seedKeys) where object.contains(key) {
            object.problem(key, "not an option of the '\(policy)' policy")
        }
        options.captcha = object.optional("captcha", expected: "\"csprng\" or \"midsquare\"") ?? .csprng
        options.minPasswordLength =
            object.optional(
                "minPasswordLength",
                expected: "a length from 1 to 128",
                isValid: { (1...128).contains($0) }
            ) ?? 8
        let hpke: String =
            object.optional(
                "hpke",
                expected: "\"x25519\" or \"xwing\"",
                isValid: { MsgHPKE(rawValue: $0) != nil }
            ) ?? MsgHPKE.x25519.rawValue
        options.hpke = MsgHPKE(rawValue: hpke) ?? .x25519
        self.options = options
        self.clock = object.optional("clock", expected: "\"virtual\" or \"system\"") ?? .virtual
    }

    /// Whether reports must mark the entry insecure: the seed KDF, policy or captcha.
    public var isInsecure: Bool {
        self.options.kdf.isInsecure || self.options.policy.isInsecure || self.options.captcha.isInsecure
    }
}

/// Stores shared by every messaging flow of a process that names the same file.
enum StoreCache {
    private static let stores = LockedStores()

    static func store(at path: String) throws -> MessagingStore {
        try self.stores.store(at: URL(fileURLWithPath: path).standardizedFileURL.path)
    }
}

final class LockedStores: Sendable {
    private let stores = Synchronization.Mutex<[String: MessagingStore]>([:])

    func store(at path: String) throws -> MessagingStore {
        try self.stores.withLock { stores in
            if let store = stores[path] { return store }
            let store = try MessagingStore(path: path)
            stores[path] = store
            return store
        }
    }
}
