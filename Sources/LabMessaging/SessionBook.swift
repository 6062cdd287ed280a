import Synchronization

/// The service's login sessions, by token: at most `capacity` at once (a login past it ends
/// the oldest session), and those of an account that gets locked end with the lock.
///
/// Before, sessions were neither capped nor tied to the account's state: 20,000 logins kept
/// 20,000 tokens (about 258 bytes each) for the life of the process, and a locked account's
/// old token still worked.
final class SessionBook: Sendable {
    struct Session: Sendable {
        var userID: Int64
        var username: String
    }

    private struct State {
        var sessions: [String: Session] = [:]
        /// Tokens in the order they were issued; ended ones are skipped when met.
        var order: [String] = []
        var head = 0
    }

    let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    var count: Int { self.state.withLock { $0.sessions.count } }

    func session(_ token: String) -> Session? {
        self.state.withLock { $0.sessions[token] }
    }

    /// Adds a session; past the capacity the oldest one ends.
    func add(_ token: String, _ session: Session) {
        self.state.withLock { state in
            state.sessions[token] = session
            state.order.append(token)
            while state.sessions.count > self.capacity, state.head < state.order.count {
                let oldest = state.order[state.head]
                state.head += 1
                state.sessions[oldest] = nil
            }
            // Ended tokens at the front are dropped once they are half the list.
            if state.head > state.order.count / 2 {
                state.order.removeFirst(state.head)
                state.head = 0
            }
        }
    }

    /// Ends one session; false if there was none.
    func remove(_ token: String) -> Bool {
        self.state.withLock { $0.sessions.removeValue(forKey: token) != nil }
    }

    /// Ends every session of `userID`.
    func removeAll(of userID: Int64) {
        self.state.withLock { state in
            state.sessions = state.sessions.filter { $0.value.userID != userID }
        }
    }
}
