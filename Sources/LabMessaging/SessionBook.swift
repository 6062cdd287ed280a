import Synchronization

/// The service's login sessions, by token: at most `perAccount` for one account (a login past
/// it ends that account's oldest session) and `capacity` in all (a login past it ends the
/// oldest session of an account holding the most); those of an account that gets locked end
/// with the lock.
///
/// Before, the cap was global alone: one account's 100,200 logins ended every other account's
/// session (the second adversarial trial, 58 s with sha512-salted). Now one account's logins
/// end only its own sessions; to end another account's, an attacker must hold at least as
/// many sessions in each of enough accounts of his own to fill `capacity`: `capacity`
/// registered accounts for an owner with one session, each a password check and a captcha.
final class SessionBook: Sendable {
    struct Session: Sendable {
        var userID: Int64
        var username: String
    }

    private struct State {
        var sessions: [String: Session] = [:]
        /// Each account's tokens, oldest first.
        var byAccount: [Int64: [String]] = [:]
        /// Tokens in the order they were issued; ended ones are skipped when met.
        var order: [String] = []
        var head = 0

        mutating func end(_ token: String) {
            guard let session = self.sessions.removeValue(forKey: token) else { return }
            var tokens = self.byAccount[session.userID] ?? []
            tokens.removeAll { $0 == token }
            self.byAccount[session.userID] = tokens.isEmpty ? nil : tokens
        }

        /// Ends the oldest session of an account that holds the most.
        mutating func endOneOfTheBusiest() {
            let most = self.byAccount.values.lazy.map(\.count).max() ?? 0
            var index = self.head
            while index < self.order.count {
                let token = self.order[index]
                if let session = self.sessions[token], self.byAccount[session.userID]?.count == most {
                    self.end(token)
                    return
                }
                index += 1
            }
        }

        /// Drops ended tokens at the front once they are half the list.
        mutating func compact() {
            while self.head < self.order.count, self.sessions[self.order[self.head]] == nil { self.head += 1 }
            if self.head > self.order.count / 2 {
                self.order.removeFirst(self.head)
                self.head = 0
            }
        }
    }

    let capacity: Int
    let perAccount: Int
    private let state = Mutex(State())

    init(capacity: Int, perAccount: Int) {
        self.capacity = max(1, capacity)
        self.perAccount = max(1, perAccount)
    }

    var count: Int { self.state.withLock { $0.sessions.count } }

    func session(_ token: String) -> Session? {
        self.state.withLock { $0.sessions[token] }
    }

    /// Adds a session; past the account's cap its oldest ends, past the book's the oldest of
    /// an account holding the most.
    func add(_ token: String, _ session: Session) {
        self.state.withLock { state in
            if let oldest = state.byAccount[session.userID]?.first, state.byAccount[session.userID]!.count >= self.perAccount {
                state.end(oldest)
            }
            if state.sessions.count >= self.capacity { state.endOneOfTheBusiest() }
            state.sessions[token] = session
            state.byAccount[session.userID, default: []].append(token)
            state.order.append(token)
            state.compact()
        }
    }

    /// Ends one session; false if there was none.
    func remove(_ token: String) -> Bool {
        self.state.withLock { state in
            guard state.sessions[token] != nil else { return false }
            state.end(token)
            state.compact()
            return true
        }
    }

    /// Ends every session of `userID`.
    func removeAll(of userID: Int64) {
        self.state.withLock { state in
            for token in state.byAccount[userID] ?? [] { state.sessions[token] = nil }
            state.byAccount[userID] = nil
            state.compact()
        }
    }
}
