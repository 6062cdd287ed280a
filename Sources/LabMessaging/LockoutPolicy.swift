public import Foundation
public import LabCore

/// An account's login-failure state, as stored.
public struct LoginState: Sendable, Equatable {
    /// Consecutive failed attempts since the last success.
    public var failures: Int
    /// No attempt is checked before this instant.
    public var postponedUntil: Date?
    /// Locked for good: even the right password is refused.
    public var locked: Bool

    /// A state.
    public init(failures: Int = 0, postponedUntil: Date? = nil, locked: Bool = false) {
        self.failures = failures
        self.postponedUntil = postponedUntil
        self.locked = locked
    }
}

/// What a policy says about an attempt before the password is checked.
public enum LoginGate: Sendable, Equatable {
    /// Check the password.
    case open
    /// Refuse without checking or counting.
    case postponed(until: Date)
    /// Refuse without checking or counting.
    case locked
}

/// What a lockout policy decides: whose state an attempt counts against, and what a
/// wrong password does to it. The service keeps the state and the turns; a policy only
/// computes.
public protocol LockoutRules: Sendable, CustomStringConvertible {
    /// The plugin's name, e.g. `throttle`.
    var name: String { get }
    /// Whether reports must mark it insecure.
    var isInsecure: Bool { get }
    /// Whether a real account's state is stored with it (a lock for good that outlives a
    /// restart) rather than kept in the service's `LoginBook`.
    var storesAccountState: Bool { get }
    /// Whose state an attempt is judged by and counts against: the user name, or the name
    /// as tried from one source (`FramePeer.source`). User names have no `@`.
    func subject(username: String, source: String) -> String
    /// Whether an attempt at `now` may check the password.
    func gate(_ state: LoginState, now: Date) -> LoginGate
    /// The state after a wrong password at `now` (only called when the gate was open).
    func failed(_ state: LoginState, now: Date) -> LoginState
    /// The state after the right password (only called when the gate was open).
    func succeeded(_ state: LoginState) -> LoginState
}

extension LockoutRules {
    /// Locked refuses; a postponement not yet over refuses; else open.
    public func gate(_ state: LoginState, now: Date) -> LoginGate {
        if state.locked { return .locked }
        if let until = state.postponedUntil, until > now { return .postponed(until: until) }
        return .open
    }

    /// A clean state.
    public func succeeded(_ state: LoginState) -> LoginState {
        LoginState(failures: 0, postponedUntil: nil, locked: false)
    }
}

/// A lockout-policy plugin (`MessagingKinds.policies`): rules that scenario options and
/// `lab serve` can name.
public protocol LockoutPolicyPlugin: LockoutRules {
    /// Its name, summary and marks.
    static var choice: NamedChoice { get }
    /// The keys it reads from a messaging flow's `"options"` (besides `policy`).
    static var optionKeys: [ServiceOptionKey] { get }
    /// The policy with its default thresholds.
    init()
    /// The policy `options` ask for, recording bad values there.
    init(_ options: ScenarioObject)
}

extension LockoutPolicyPlugin {
    /// No keys of its own.
    public static var optionKeys: [ServiceOptionKey] { [] }

    /// `choice.name`.
    public var name: String { Self.choice.name }

    /// `choice.isInsecure`.
    public var isInsecure: Bool { Self.choice.isInsecure }

    /// Kept in the `LoginBook`.
    public var storesAccountState: Bool { false }
}

/// How the service answers wrong passwords: a policy plugin with its thresholds; the
/// built-in ones are `seed` (the reference app's) and `throttle` (the default). Two are
/// equal when they describe themselves alike.
public struct LockoutPolicy: Sendable, Hashable, CustomStringConvertible {
    /// The policy.
    public let rules: any LockoutRules

    /// `rules`, as the service uses them.
    public init(_ rules: any LockoutRules) {
        self.rules = rules
    }

    /// The reference's thresholds: postponed 30 minutes at 3 failures, locked at 5.
    public static let seedDefault = LockoutPolicy(SeedPolicy())
    /// The default: 5 free failures, then 1 minute doubling up to 1 hour.
    public static let `default` = LockoutPolicy(ThrottlePolicy())

    /// `SeedPolicy` of these thresholds.
    public static func seed(postponeAfter: Int, postponeFor: TimeInterval, lockAfter: Int) -> LockoutPolicy {
        LockoutPolicy(SeedPolicy(postponeAfter: postponeAfter, postponeFor: postponeFor, lockAfter: lockAfter))
    }

    /// `ThrottlePolicy` of these thresholds.
    public static func throttle(freeFailures: Int, delay: TimeInterval, maxDelay: TimeInterval) -> LockoutPolicy {
        LockoutPolicy(ThrottlePolicy(freeFailures: freeFailures, delay: delay, maxDelay: maxDelay))
    }

    /// The plugin name.
    public var name: String { self.rules.name }
    /// Whether reports must mark it insecure.
    public var isInsecure: Bool { self.rules.isInsecure }
    /// The policy and its thresholds, in words.
    public var description: String { self.rules.description }
    /// `LockoutRules.storesAccountState`.
    public var storesAccountState: Bool { self.rules.storesAccountState }

    /// `LockoutRules.subject(username:source:)`.
    public func subject(username: String, source: String) -> String {
        self.rules.subject(username: username, source: source)
    }

    /// `LockoutRules.gate(_:now:)`.
    public func gate(_ state: LoginState, now: Date) -> LoginGate { self.rules.gate(state, now: now) }

    /// `LockoutRules.failed(_:now:)`.
    public func failed(_ state: LoginState, now: Date) -> LoginState { self.rules.failed(state, now: now) }

    /// `LockoutRules.succeeded(_:)`.
    public func succeeded(_ state: LoginState) -> LoginState { self.rules.succeeded(state) }

    public static func == (lhs: LockoutPolicy, rhs: LockoutPolicy) -> Bool { lhs.description == rhs.description }

    public func hash(into hasher: inout Hasher) { hasher.combine(self.description) }
}
