public import LabCore

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

    /// A choice.
    public init(_ name: String, _ summary: String, isDefault: Bool = false, isInsecure: Bool = false) {
        self.name = name
        self.summary = summary
        self.isDefault = isDefault
        self.isInsecure = isInsecure
    }
}

/// A key a msg/1 plugin reads from a messaging flow's `"options"` (and `lab serve
/// --service key=value`), with the JSON schema of its value for `lab schema`.
public struct ServiceOptionKey: Sendable, Equatable {
    /// The key, e.g. `scryptLogN`.
    public let name: String
    /// Its value's schema, a JSON object, e.g. `{ "type": "integer", "minimum": 1 }`.
    public let schema: String

    /// A key.
    public init(_ name: String, schema: String) {
        self.name = name
        self.schema = schema
    }
}

/// msg/1's plugin kinds, each one list: password KDFs, lockout policies, captcha generators
/// and clocks. A catalog carries them (`PluginExtensions`, under this type), so scenario
/// options, stored hashes, `lab serve`, `lab list` and `lab schema` all read the kinds a
/// `lab` was built with: a new choice is its type plus `adding(kdf:)` (or the like) on the
/// catalog, in this repository or outside it (docs/architecture.md).
public struct MessagingKinds: Sendable, PluginExtensionKey {
    /// `PasswordKDFPlugin`s: how a password becomes what is stored.
    public private(set) var kdfs: [any PasswordKDFPlugin.Type]
    /// `LockoutPolicyPlugin`s: how wrong passwords are answered.
    public private(set) var policies: [any LockoutPolicyPlugin.Type]
    /// `CaptchaPlugin`s: how captcha texts are made.
    public private(set) var captchas: [any CaptchaPlugin.Type]
    /// `ClockPlugin`s: the time the policies wait in. No one default: a scenario's service
    /// runs on the virtual clock unless it says otherwise, `lab serve` on the system's.
    public private(set) var clocks: [any ClockPlugin.Type]

    /// Kinds of these lists; names must be distinct within each, and the KDFs, policies and
    /// captchas must each have exactly one default unless the list is empty.
    public init(
        kdfs: [any PasswordKDFPlugin.Type],
        policies: [any LockoutPolicyPlugin.Type],
        captchas: [any CaptchaPlugin.Type],
        clocks: [any ClockPlugin.Type]
    ) {
        PluginLookup.requireDistinct(kdfs.map { $0.choice.name }, kind: "KDF")
        PluginLookup.requireDistinct(policies.map { $0.choice.name }, kind: "lockout policy")
        PluginLookup.requireDistinct(captchas.map { $0.choice.name }, kind: "captcha")
        PluginLookup.requireDistinct(clocks.map { $0.choice.name }, kind: "clock")
        precondition(kdfs.isEmpty || kdfs.filter { $0.choice.isDefault }.count == 1, "one KDF is the default")
        precondition(policies.isEmpty || policies.filter { $0.choice.isDefault }.count == 1, "one lockout policy is the default")
        precondition(captchas.isEmpty || captchas.filter { $0.choice.isDefault }.count == 1, "one captcha is the default")
        self.kdfs = kdfs
        self.policies = policies
        self.captchas = captchas
        self.clocks = clocks
    }

    /// No kinds: a catalog that never set them has no msg/1 plugins (the lab's own are in
    /// its catalog, `BuiltInPlugins`).
    public static let none = MessagingKinds(kdfs: [], policies: [], captchas: [], clocks: [])

    /// A catalog that never set them holds none.
    public static var defaultValue: MessagingKinds { .none }

    /// These kinds with one more KDF (its name must be new).
    public func adding(kdf: any PasswordKDFPlugin.Type) -> MessagingKinds {
        MessagingKinds(kdfs: self.kdfs + [kdf], policies: self.policies, captchas: self.captchas, clocks: self.clocks)
    }

    /// These kinds with one more lockout policy (its name must be new).
    public func adding(policy: any LockoutPolicyPlugin.Type) -> MessagingKinds {
        MessagingKinds(kdfs: self.kdfs, policies: self.policies + [policy], captchas: self.captchas, clocks: self.clocks)
    }

    /// These kinds with one more captcha generator (its name must be new).
    public func adding(captcha: any CaptchaPlugin.Type) -> MessagingKinds {
        MessagingKinds(kdfs: self.kdfs, policies: self.policies, captchas: self.captchas + [captcha], clocks: self.clocks)
    }

    /// These kinds with one more clock (its name must be new).
    public func adding(clock: any ClockPlugin.Type) -> MessagingKinds {
        MessagingKinds(kdfs: self.kdfs, policies: self.policies, captchas: self.captchas, clocks: self.clocks + [clock])
    }

    /// Every kind, with its name, in the order `lab list` shows them.
    public var all: [(kind: String, choices: [NamedChoice])] {
        [
            ("KDFs", self.kdfs.map { $0.choice }), ("Lockout policies", self.policies.map { $0.choice }),
            ("Captchas", self.captchas.map { $0.choice }), ("Clocks", self.clocks.map { $0.choice }),
        ]
    }

    /// The KDF plugin called `name`.
    public func kdf(named name: String) -> (any PasswordKDFPlugin.Type)? {
        self.kdfs.first { $0.choice.name == name }
    }

    /// The default KDF's plugin.
    public var defaultKDF: any PasswordKDFPlugin.Type { self.kdfs.first { $0.choice.isDefault }! }

    /// The lockout policy called `name`.
    public func policy(named name: String) -> (any LockoutPolicyPlugin.Type)? {
        self.policies.first { $0.choice.name == name }
    }

    /// The default policy's plugin.
    public var defaultPolicy: any LockoutPolicyPlugin.Type { self.policies.first { $0.choice.isDefault }! }

    /// The captcha generator called `name`.
    public func captcha(named name: String) -> (any CaptchaPlugin.Type)? {
        self.captchas.first { $0.choice.name == name }
    }

    /// The default captcha's plugin.
    public var defaultCaptcha: any CaptchaPlugin.Type { self.captchas.first { $0.choice.isDefault }! }

    /// The clock called `name`.
    public func clock(named name: String) -> (any ClockPlugin.Type)? {
        self.clocks.first { $0.choice.name == name }
    }

    /// The KDF a stored hash names with its parameters (`PasswordKDF.description`'s form:
    /// `scrypt:17:8:1`), or nil if no plugin of these kinds reads it.
    public func kdf(stored text: String) -> PasswordKDF? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard let name = parts.first, let plugin = self.kdf(named: name) else { return nil }
        return plugin.init(stored: Array(parts.dropFirst())).map(PasswordKDF.init)
    }

    /// The option keys of every plugin, kind by kind, with their schemas.
    public var optionKeys: [ServiceOptionKey] {
        var seen = Set<String>()
        let all = self.kdfs.flatMap { $0.optionKeys } + self.policies.flatMap { $0.optionKeys }
        return all.filter { seen.insert($0.name).inserted }
    }
}
