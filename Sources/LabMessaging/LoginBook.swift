public import Foundation
import LabCore
import Synchronization

/// Failed-login states kept in memory, by subject (`LockoutPolicy.subject`): under
/// `throttle` every user name and source pair that failed, whether or not the name exists;
/// under `seed` the names that do not exist (a real account's state is stored with it).
///
/// So an unknown name moves through the same answers as a real one (`until`, `postponed`,
/// `locked`), and a name's failures from one source never postpone its logins from another.
///
/// Bounded: at most `capacity` subjects. A new one past that first drops a tenth of the
/// book: the subjects not held back at that moment first, least recently changed first. When
/// too few are free, held-back subjects of one network go too, and that network is held
/// back as a whole (`holds`) until the latest of their postponements: the narrowest
/// network (address, /24 or /16; IPv6 /64, /48 or /32) that holds enough of them, found
/// from the widest down by the most held subjects. So filling the book with held-back
/// subjects never frees the one who filled it: before, once every subject was held back,
/// held-back subjects were dropped and an attacker postponed for 30 minutes was checked
/// again at once. What it costs: every name tried from that network waits with him. A
/// seed policy's unknown names carry no source; those go least recently changed first. A
/// server restart forgets the book (the seed policy's real accounts keep their state).
public final class LoginBook: Sendable {
    struct Entry: Sendable {
        var state: LoginState
        var changed: Date
    }

    private struct Book {
        var entries: [String: Entry] = [:]
        /// Networks held back as a whole, and until when.
        var holds: [String: Date] = [:]
    }

    /// Subjects kept at most.
    public let capacity: Int
    private let book = Mutex(Book())

    /// A book of at most `capacity` subjects.
    public init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Subjects kept now.
    public var count: Int { self.book.withLock { $0.entries.count } }

    /// Networks held back as a whole now (some may have ended).
    public var heldNetworks: [String: Date] { self.book.withLock { $0.holds } }

    /// The state of `subject`: a fresh one if it has none (postponed, if its network is held).
    public func state(_ subject: String, now: Date = .distantPast) -> LoginState {
        self.book.withLock { book in book.entries[subject]?.state ?? Self.held(subject, book.holds, now) }
    }

    /// Applies `change` to `subject`'s state under the book's lock and returns what it
    /// returned. A state back to fresh is dropped, which keeps the book to the subjects
    /// that failed; one its network's hold gave it, unchanged, is not stored either.
    public func update<T>(_ subject: String, now: Date, _ change: (inout LoginState) -> T) -> T {
        self.book.withLock { book in
            let initial = book.entries[subject]?.state ?? Self.held(subject, book.holds, now)
            var state = initial
            let result = change(&state)
            if state == LoginState() {
                book.entries[subject] = nil
            } else if book.entries[subject] != nil || state != initial {
                if book.entries[subject] == nil, book.entries.count >= self.capacity {
                    Self.thin(&book, now: now, keep: self.capacity)
                }
                book.entries[subject] = Entry(state: state, changed: now)
            }
            return result
        }
    }

    /// The state a subject with none starts from: postponed while a network of its source is held.
    private static func held(_ subject: String, _ holds: [String: Date], _ now: Date) -> LoginState {
        guard !holds.isEmpty, let source = Self.source(of: subject) else { return LoginState() }
        let until = FramePeer.networks(of: source).compactMap { holds[$0] }.max()
        guard let until, until > now else { return LoginState() }
        return LoginState(postponedUntil: until)
    }

    /// The source part of a `name@source` subject (user names have no `@`).
    static func source(of subject: String) -> String? {
        subject.lastIndex(of: "@").map { String(subject[subject.index(after: $0)...]) }
    }

    /// Drops a tenth of the book (at least one): the subjects free to try at `now` first, least
    /// recently changed first; then, if too few were free, held subjects of one network,
    /// which is held as a whole (see the type).
    private static func thin(_ book: inout Book, now: Date, keep capacity: Int) {
        book.holds = book.holds.filter { $0.value > now }
        var drop = max(1, book.entries.count - capacity + capacity / 10)
        let free = book.entries.filter { !Self.isHeld($0.value.state, now) }.sorted { $0.value.changed < $1.value.changed }
        for (subject, _) in free.prefix(drop) { book.entries[subject] = nil }
        drop -= min(drop, free.count)
        guard drop > 0 else { return }
        // Held subjects by source; the widest network with the most, then narrower while one
        // inside it alone holds enough.
        var held = book.entries.keys.compactMap { subject in Self.source(of: subject).map { (subject, $0) } }
        guard !held.isEmpty else {
            let oldest = book.entries.sorted { $0.value.changed < $1.value.changed }
            for (subject, _) in oldest.prefix(drop) { book.entries[subject] = nil }
            return
        }
        var network: String? = nil
        for level in 0..<3 {
            let counts = Dictionary(grouping: held) { Self.network($0.1, level) }
            guard let (busiest, members) = counts.max(by: { $0.value.count < $1.value.count }) else { break }
            if network != nil, members.count < drop { break }
            network = busiest
            held = members
        }
        let victims = held.map(\.0).sorted { book.entries[$0]!.changed < book.entries[$1]!.changed }
        var until = Date.distantPast
        for subject in victims.prefix(drop) {
            let state = book.entries.removeValue(forKey: subject)!.state
            until = max(until, state.locked ? .distantFuture : state.postponedUntil ?? now)
        }
        if let network, until > now { book.holds[network] = max(book.holds[network] ?? now, until) }
    }

    /// `source`'s network at `level` (0 the widest), or itself past its list.
    private static func network(_ source: String, _ level: Int) -> String {
        let networks = FramePeer.networks(of: source)
        return level < networks.count ? networks[level] : source
    }

    static func isHeld(_ state: LoginState, _ now: Date) -> Bool {
        state.locked || (state.postponedUntil.map { $0 > now } ?? false)
    }
}
