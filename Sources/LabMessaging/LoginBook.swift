import Foundation
import Synchronization

/// Failed-login states kept in memory, by subject (`LockoutPolicy.subject`): under
/// `throttle` every user name and source pair that failed, whether or not the name exists;
/// under `seed` the names that do not exist (a real account's state is stored with it).
///
/// So an unknown name moves through the same answers as a real one (`until`, `postponed`,
/// `locked`), and a name's failures from one source never postpone its logins from another.
///
/// Bounded: at most `capacity` subjects. A new one past that first drops a tenth of the
/// book, the subjects not held back at that moment first, then those least recently
/// changed; so an attacker who wants a throttled subject of his own dropped must first
/// fail on a tenth of the book's worth of new subjects, each costing a password check. A
/// server restart forgets the book (the seed policy's real accounts keep their state).
public final class LoginBook: Sendable {
    struct Entry: Sendable {
        var state: LoginState
        var changed: Date
    }

    /// Subjects kept at most.
    public let capacity: Int
    private let entries = Mutex<[String: Entry]>([:])

    /// A book of at most `capacity` subjects.
    public init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Subjects kept now.
    public var count: Int { self.entries.withLock { $0.count } }

    /// The state of `subject`: a fresh one if it has none.
    public func state(_ subject: String) -> LoginState {
        self.entries.withLock { $0[subject]?.state } ?? LoginState()
    }

    /// Applies `change` to `subject`'s state under the book's lock and returns what it
    /// returned. A state back to fresh is dropped, which keeps the book to the subjects
    /// that failed.
    func update<T>(_ subject: String, now: Date, _ change: (inout LoginState) -> T) -> T {
        self.entries.withLock { entries in
            var state = entries[subject]?.state ?? LoginState()
            let result = change(&state)
            if state == LoginState() {
                entries[subject] = nil
            } else {
                if entries[subject] == nil, entries.count >= self.capacity { Self.thin(&entries, now: now, keep: self.capacity) }
                entries[subject] = Entry(state: state, changed: now)
            }
            return result
        }
    }

    /// Drops a tenth of the book (at least one): the subjects free to try at `now` first,
    /// then the least recently changed.
    static func thin(_ entries: inout [String: Entry], now: Date, keep capacity: Int) {
        let drop = max(1, entries.count - capacity + capacity / 10)
        let order = entries.sorted { left, right in
            let (leftHeld, rightHeld) = (Self.isHeld(left.value.state, now), Self.isHeld(right.value.state, now))
            if leftHeld != rightHeld { return !leftHeld }
            return left.value.changed < right.value.changed
        }
        for (subject, _) in order.prefix(drop) { entries[subject] = nil }
    }

    static func isHeld(_ state: LoginState, _ now: Date) -> Bool {
        state.locked || (state.postponedUntil.map { $0 > now } ?? false)
    }
}
