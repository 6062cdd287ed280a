public import Foundation
public import LabCore

/// `seed`, the reference's: at exactly `postponeAfter` failures the account is postponed
/// for `postponeFor`; at `lockAfter` it is locked for good. A success resets the count.
/// Judged by the user name, whoever tries; the state is stored with the account, so a lock
/// outlives a restart. Insecure: a permanent lock on an attacker's say-so.
public struct SeedPolicy: LockoutPolicyPlugin {
    public static let choice = NamedChoice(
        "seed",
        "postponed for 30 min at the 3rd failure, locked at the 5th: the reference app's",
        isInsecure: true
    )
    public static let optionKeys: [ServiceOptionKey] = [.count("postponeAfter"), .duration("postponeFor"), .count("lockAfter")]

    /// The thresholds.
    public let postponeAfter: Int, postponeFor: TimeInterval, lockAfter: Int

    /// Postponed 30 minutes at 3 failures, locked at 5.
    public init() { self.init(postponeAfter: 3, postponeFor: 30 * 60, lockAfter: 5) }

    /// These thresholds.
    public init(postponeAfter: Int, postponeFor: TimeInterval, lockAfter: Int) {
        (self.postponeAfter, self.postponeFor, self.lockAfter) = (postponeAfter, postponeFor, lockAfter)
    }

    public init(_ options: ScenarioObject) {
        let standard = SeedPolicy()
        let postponeAfter = options.count("postponeAfter") ?? standard.postponeAfter
        let lockAfter = options.count("lockAfter") ?? standard.lockAfter
        if lockAfter <= postponeAfter, options.contains("lockAfter") || options.contains("postponeAfter") {
            options.problem("lockAfter", "must be greater than postponeAfter (\(postponeAfter))")
        }
        self.init(
            postponeAfter: postponeAfter,
            postponeFor: options.span("postponeFor") ?? standard.postponeFor,
            lockAfter: lockAfter
        )
    }

    public var description: String {
        "seed (postponed \(Int(self.postponeFor)) s at \(self.postponeAfter) failures, locked at \(self.lockAfter))"
    }

    public var storesAccountState: Bool { true }

    /// The user name's: the reference holds the account back, whoever tries.
    public func subject(username: String, source: String) -> String { username }

    public func failed(_ state: LoginState, now: Date) -> LoginState {
        var next = state
        next.failures += 1
        // A postponement that has passed is over; only this failure may start another.
        next.postponedUntil = nil
        if next.failures >= self.lockAfter {
            next.locked = true
        } else if next.failures == self.postponeAfter {
            next.postponedUntil = now.addingTimeInterval(self.postponeFor)
        }
        return next
    }
}

/// `throttle`, today's guidance (NIST SP 800-63B §5.2.2, OWASP) and the default: the first
/// `freeFailures` failures cost nothing; each one after that postpones the next check by
/// `delay`, doubled per further failure up to `maxDelay`. Never locks: an attacker who
/// knows a user name must not be able to shut its owner out for good.
public struct ThrottlePolicy: LockoutPolicyPlugin {
    public static let choice = NamedChoice(
        "throttle",
        "5 free failures, then each check waits 60 s, doubled per failure up to 1 h; never locks (NIST SP 800-63B)",
        isDefault: true
    )
    public static let optionKeys: [ServiceOptionKey] = [.count("freeFailures"), .duration("delay"), .duration("maxDelay")]

    /// The thresholds.
    public let freeFailures: Int, delay: TimeInterval, maxDelay: TimeInterval

    /// 5 free failures, then 1 minute doubling up to 1 hour.
    public init() { self.init(freeFailures: 5, delay: 60, maxDelay: 3600) }

    /// These thresholds.
    public init(freeFailures: Int, delay: TimeInterval, maxDelay: TimeInterval) {
        (self.freeFailures, self.delay, self.maxDelay) = (freeFailures, delay, maxDelay)
    }

    public init(_ options: ScenarioObject) {
        let standard = ThrottlePolicy()
        let first = options.span("delay") ?? standard.delay
        let cap = options.span("maxDelay") ?? standard.maxDelay
        if cap < first { options.problem("maxDelay", "must be at least the delay (\(Int(first)) s)") }
        self.init(freeFailures: options.count("freeFailures") ?? standard.freeFailures, delay: first, maxDelay: cap)
    }

    public var description: String {
        "throttle (\(self.freeFailures) free failures, then \(Int(self.delay)) s doubling up to \(Int(self.maxDelay)) s; never locks)"
    }

    /// The user name's as tried from one source: failures from one address postpone that
    /// address's next try at the name and no other's, so an attacker who keeps a name
    /// throttled never keeps its owner out (docs/messaging.md).
    public func subject(username: String, source: String) -> String { "\(username)@\(source)" }

    public func failed(_ state: LoginState, now: Date) -> LoginState {
        var next = state
        next.failures += 1
        // A postponement that has passed is over; only this failure may start another.
        next.postponedUntil = nil
        let over = next.failures - self.freeFailures
        if over >= 1 {
            let doubled = self.delay * pow(2, Double(min(over - 1, 62)))
            next.postponedUntil = now.addingTimeInterval(min(doubled, self.maxDelay))
        }
        return next
    }
}

extension ServiceOptionKey {
    /// A count from 1 to 1000 (read with `ScenarioObject.count(_:)`).
    public static func count(_ name: String) -> ServiceOptionKey {
        ServiceOptionKey(name, schema: #"{ "type": "integer", "minimum": 1, "maximum": 1000 }"#)
    }

    /// A duration such as `"30 min"` (read with `ScenarioObject.span(_:)`).
    public static func duration(_ name: String) -> ServiceOptionKey {
        ServiceOptionKey(name, schema: ##"{ "$ref": "#/$defs/duration" }"##)
    }
}

extension ScenarioObject {
    /// A count from 1 to 1000 at `key`, if there is a good one.
    public func count(_ key: String) -> Int? {
        self.optional(key, expected: "a count from 1 to 1000", isValid: { (1...1000).contains($0) })
    }

    /// A duration at `key` in seconds, if there is a good one.
    public func span(_ key: String) -> TimeInterval? {
        let value: TimeSpan? = self.optional(key, expected: TimeSpan.expectation)
        return value.map(\.seconds)
    }
}
