import Synchronization

/// Password checks of one account, one at a time, in the order they arrive.
///
/// A login waits here (suspended: no thread, and no place in the password-check pool) for
/// the checks of the same account that came before it, and reads the account's state only
/// when its turn comes. So once a failure postpones or locks the account, every login that
/// was waiting is refused without a KDF run and without counting, at once, instead of each
/// running a full KDF first and being refused after it (100 wrong passwords at once under
/// `seed`: 3 KDF runs and 97 `postponed`, not 100 KDF runs, the later ones queued behind
/// the earlier for tens of seconds, or refused `busy`).
///
/// At most `waitLimit` checks wait per account; one more is refused `busy` at once and
/// changes nothing. An account's lane exists only while a check of it runs or waits.
public final class AccountTurns<Key: Hashable & Sendable>: Sendable {
    /// Checks of one account that may wait for their turn.
    public let waitLimit: Int
    /// Called (tests) when a check starts waiting, with the account's id.
    private let onWait: (@Sendable (Key) -> Void)?
    /// Per account whose turn is held: the checks waiting, oldest first.
    private let lanes = Mutex<[Key: [TurnTicket]]>([:])

    /// Turns with room for `waitLimit` waiting checks per account.
    public init(waitLimit: Int, onWait: (@Sendable (Key) -> Void)? = nil) {
        self.waitLimit = max(0, waitLimit)
        self.onWait = onWait
    }

    /// Accounts with a check running or waiting now.
    public var accounts: Int { self.lanes.withLock { $0.count } }

    /// Checks of `account` waiting now (the running one not included).
    public func waiting(for account: Key) -> Int { self.lanes.withLock { $0[account]?.count ?? 0 } }

    /// Returns when it is this check's turn on `account`; throws `busy` at once if
    /// `waitLimit` checks wait already, and `CancellationError` if the task is cancelled
    /// while it waits. Every `acquire` that returns must be followed by one `release`.
    public func acquire(_ account: Key) async throws {
        let ticket = TurnTicket()
        let admission = self.lanes.withLock { lanes -> Admission in
            guard var waiters = lanes[account] else {
                lanes[account] = []
                return .now
            }
            guard waiters.count < self.waitLimit else { return .busy }
            waiters.append(ticket)
            lanes[account] = waiters
            return .wait
        }
        switch admission {
        case .now:
            return
        case .busy:
            throw MsgFailure(code: .busy, message: "Too many logins are waiting for this account; try again later")
        case .wait:
            self.onWait?(account)
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in ticket.arm(continuation) }
            } onCancel: {
                // Out of the lane at once, so that it no longer takes a place under
                // `waitLimit` (unless the turn reached it first, which `cancel` then leaves).
                self.lanes.withLock { lanes in lanes[account]?.removeAll { $0 === ticket } }
                ticket.cancel()
            }
        }
    }

    /// Ends this check's turn on `account`: the oldest waiting check gets it, or the lane goes.
    public func release(_ account: Key) {
        while true {
            let next = self.lanes.withLock { lanes -> TurnTicket? in
                guard var waiters = lanes[account] else { return nil }
                guard !waiters.isEmpty else {
                    lanes[account] = nil
                    return nil
                }
                let first = waiters.removeFirst()
                lanes[account] = waiters
                return first
            }
            // A cancelled waiter passes the turn on to the next.
            guard let next, !next.grant() else { return }
        }
    }

    private enum Admission {
        case now, wait, busy
    }
}

/// One waiting check: granted its turn, or cancelled, exactly once, in either order with
/// the wait itself beginning (`arm`).
private final class TurnTicket: Sendable {
    private enum State {
        case waiting
        case armed(CheckedContinuation<Void, any Error>)
        case granted
        case cancelled
        case done
    }

    private let state = Mutex(State.waiting)

    /// Begins the wait; resumes at once if the turn was granted, or the task cancelled, before.
    func arm(_ continuation: CheckedContinuation<Void, any Error>) {
        let outcome = self.state.withLock { state -> Result<Void, any Error>? in
            switch state {
            case .waiting:
                state = .armed(continuation)
                return nil
            case .granted:
                state = .done
                return .success(())
            default:
                state = .done
                return .failure(CancellationError())
            }
        }
        if let outcome { continuation.resume(with: outcome) }
    }

    /// Gives this check the turn; false if it was cancelled (the turn goes to the next).
    func grant() -> Bool {
        let (granted, continuation) = self.state.withLock {
            state -> (Bool, CheckedContinuation<Void, any Error>?) in
            switch state {
            case .waiting:
                state = .granted
                return (true, nil)
            case .armed(let continuation):
                state = .done
                return (true, continuation)
            case .granted, .cancelled, .done:
                return (false, nil)
            }
        }
        continuation?.resume()
        return granted
    }

    /// Cancels the wait unless the turn was granted first.
    func cancel() {
        let continuation = self.state.withLock { state -> CheckedContinuation<Void, any Error>? in
            switch state {
            case .waiting:
                state = .cancelled
                return nil
            case .armed(let continuation):
                state = .done
                return continuation
            case .granted, .cancelled, .done:
                return nil
            }
        }
        continuation?.resume(throwing: CancellationError())
    }
}
