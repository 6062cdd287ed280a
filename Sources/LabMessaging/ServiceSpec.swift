import Foundation
public import LabCore
import Synchronization

/// The messaging service's settings in a flow entry's `"options"`: the KDF, the lockout
/// policy and its thresholds, the captcha generator and the clock, each a plugin of the
/// catalog's `MessagingKinds`, with the keys each plugin reads.
public struct ServiceSpec: Sendable, Hashable {
    /// The keys it reads with `kinds`: the choices, the plugins' own, the service's limits.
    public static func keys(_ kinds: MessagingKinds) -> [String] {
        ["kdf", "policy", "captcha", "clock", "minPasswordLength", "hpke"] + kinds.optionKeys.map(\.name)
    }

    /// The service's options.
    public var options: MessagingOptions
    /// The clock both sides share when the lab runs the server.
    public var clock: ClockKind

    /// The defaults: scrypt, throttle, csprng, the virtual clock.
    public init(options: MessagingOptions = MessagingOptions(), clock: ClockKind = .virtual) {
        self.options = options
        self.clock = clock
    }

    /// Reads the keys from `object` with the kinds its catalog carries
    /// (`ScenarioObject.extensions`), recording every problem with its path: a plugin's
    /// key given with another plugin chosen is one.
    public init(_ object: ScenarioObject) {
        let kinds = object.extensions[MessagingKinds.self]
        guard !kinds.kdfs.isEmpty, !kinds.policies.isEmpty, !kinds.captchas.isEmpty else {
            // A catalog without msg/1's kinds (`MessagingKinds`): a problem, not a trap.
            object.problem("kdf", "this lab's catalog has no msg/1 KDFs, lockout policies or captchas to choose from")
            self = ServiceSpec()
            return
        }
        var options = MessagingOptions()
        let kdfName = Self.choose("kdf", kinds.kdfs.map { $0.choice }, object, Self.oneOf)
        let kdf = kinds.kdf(named: kdfName) ?? kinds.defaultKDF
        options.kdf = PasswordKDF(kdf.init(object))
        for other in kinds.kdfs where other.choice.name != kdfName {
            for key in other.optionKeys where object.contains(key.name) && !kdf.optionKeys.contains(key) {
                object.problem(key.name, "only for \"kdf\": \"\(other.choice.name)\"")
            }
        }
        let policyName = Self.choose("policy", kinds.policies.map { $0.choice }, object, Self.oneOf)
        let policy = kinds.policy(named: policyName) ?? kinds.defaultPolicy
        options.policy = LockoutPolicy(policy.init(object))
        let ownKeys = policy.optionKeys.map(\.name)
        for key in kinds.policies.flatMap({ $0.optionKeys }) where object.contains(key.name) && !ownKeys.contains(key.name) {
            object.problem(key.name, "not an option of the '\(policyName)' policy")
        }
        let captchaName = Self.choose("captcha", kinds.captchas.map { $0.choice }, object, Self.either)
        options.captcha = CaptchaGenerator((kinds.captcha(named: captchaName) ?? kinds.defaultCaptcha).init())
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
        let clocks = kinds.clocks.map { $0.choice }
        let clockName = Self.choose("clock", clocks, object, Self.either, fallback: VirtualClock.choice.name)
        self.clock = ClockKind(kinds.clock(named: clockName) ?? VirtualClock.self)
    }

    /// The name `object[key]` gives among `choices`, else `fallback` or the default choice's
    /// (a name not among them is recorded, listed as `expected` words them).
    static func choose(
        _ key: String,
        _ choices: [NamedChoice],
        _ object: ScenarioObject,
        _ expected: ([String]) -> String,
        fallback: String? = nil
    ) -> String {
        let names = choices.map(\.name)
        let chosen: String? = object.optional(key, expected: expected(names), isValid: { names.contains($0) })
        return chosen ?? fallback ?? choices.first { $0.isDefault }?.name ?? names[0]
    }

    /// Reads the settings from `object`, a messaging flow's service keys (`lab serve`'s
    /// flags, `--msg-option`), with `kinds`; nil with the problems, each at `$.key`.
    public static func decode(
        _ object: [String: JSONValue],
        kinds: MessagingKinds
    ) -> (spec: ServiceSpec?, problems: [ScenarioProblem]) {
        var extensions = PluginExtensions()
        extensions[MessagingKinds.self] = kinds
        let decoded = OptionsDecoding.decode(
            MessagingFlowOptions<NoExtras>.self,
            from: .object(object),
            at: "$",
            extensions: extensions,
            what: "msg/1's options"
        )
        return (decoded.problems.isEmpty ? decoded.options?.service : nil, decoded.problems)
    }

    /// `one of: a, b, c`.
    static func oneOf(_ names: [String]) -> String { "one of: " + names.joined(separator: ", ") }

    /// `"a" or "b"`, `"a", "b" or "c"`.
    static func either(_ names: [String]) -> String {
        let quoted = names.map { "\"\($0)\"" }
        return quoted.count < 2 ? quoted.joined() : quoted.dropLast().joined(separator: ", ") + " or " + quoted.last!
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
