public import Foundation

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

/// How the service answers wrong passwords: `seed` (the reference app's) or `throttle`
/// (the default).
public enum LockoutPolicy: Sendable, Hashable, CustomStringConvertible {
    /// The reference: at exactly `postponeAfter` failures the account is postponed for
    /// `postponeFor`; at `lockAfter` it is locked for good. A success resets the count.
    case seed(postponeAfter: Int, postponeFor: TimeInterval, lockAfter: Int)
    /// Today's guidance (NIST SP 800-63B §5.2.2, OWASP): the first `freeFailures` failures
    /// cost nothing; each one after that postpones the next check by `delay`, doubled per
    /// further failure up to `maxDelay`. Never locks: an attacker who knows a user name
    /// must not be able to shut its owner out for good.
    case throttle(freeFailures: Int, delay: TimeInterval, maxDelay: TimeInterval)

    /// The plugin names scenario files use (`MessagingChoices.policies`).
    public static let names = MessagingChoices.policies.map(\.name)
    /// The reference's thresholds: postponed 30 minutes at 3 failures, locked at 5.
    public static let seedDefault = LockoutPolicy.seed(postponeAfter: 3, postponeFor: 30 * 60, lockAfter: 5)
    /// The default: 5 free failures, then 1 minute doubling up to 1 hour.
    public static let `default` = LockoutPolicy.throttle(freeFailures: 5, delay: 60, maxDelay: 3600)

    /// The plugin name.
    public var name: String {
        switch self {
        case .seed: "seed"
        case .throttle: "throttle"
        }
    }

    /// Whether reports must mark it insecure: a permanent lock on an attacker's say-so.
    public var isInsecure: Bool {
        if case .seed = self { return true }
        return false
    }

    /// `seed(3 → 30 min, lock at 5)`, `throttle(5 free, 60 s doubling to 3600 s)`.
    public var description: String {
        switch self {
        case .seed(let after, let duration, let lock):
            "seed (postponed \(Int(duration)) s at \(after) failures, locked at \(lock))"
        case .throttle(let free, let delay, let maxDelay):
            "throttle (\(free) free failures, then \(Int(delay)) s doubling up to \(Int(maxDelay)) s; never locks)"
        }
    }

    /// Whether a real account's state is stored with it (`seed`: its lock is for good and
    /// outlives a restart) rather than kept in the service's `LoginBook`.
    public var storesAccountState: Bool {
        if case .seed = self { return true }
        return false
    }

    /// Whose state an attempt is judged by and counts against. Under `seed`, the user name's
    /// (the reference holds the account back, whoever tries). Under `throttle`, the user
    /// name's as tried from one source (`FramePeer.source`): failures from one address
    /// postpone that address's next try at the name and no other's, so an attacker who
    /// keeps a name throttled never keeps its owner out (docs/messaging.md). User names
    /// have no `@`, so the two parts cannot run together.
    public func subject(username: String, source: String) -> String {
        switch self {
        case .seed: username
        case .throttle: "\(username)@\(source)"
        }
    }

    /// Whether an attempt at `now` may check the password.
    public func gate(_ state: LoginState, now: Date) -> LoginGate {
        if state.locked { return .locked }
        if let until = state.postponedUntil, until > now { return .postponed(until: until) }
        return .open
    }

    /// The state after a wrong password at `now` (only called when the gate was open).
    public func failed(_ state: LoginState, now: Date) -> LoginState {
        var next = state
        next.failures += 1
        // A postponement that has passed is over; only this failure may start another.
        next.postponedUntil = nil
        switch self {
        case .seed(let postponeAfter, let postponeFor, let lockAfter):
            if next.failures >= lockAfter {
                next.locked = true
            } else if next.failures == postponeAfter {
                next.postponedUntil = now.addingTimeInterval(postponeFor)
            }
        case .throttle(let freeFailures, let delay, let maxDelay):
            let over = next.failures - freeFailures
            if over >= 1 {
                let doubled = delay * pow(2, Double(min(over - 1, 62)))
                next.postponedUntil = now.addingTimeInterval(min(doubled, maxDelay))
            }
        }
        return next
    }

    /// The state after the right password (only called when the gate was open).
    public func succeeded(_ state: LoginState) -> LoginState {
        LoginState(failures: 0, postponedUntil: nil, locked: false)
    }
}
