import LabCore
import NIOPosix
import Synchronization

/// Password hashing off the server's event loops, bounded.
///
/// A KDF run is deliberately slow (scrypt at its default cost: 128 MiB and a large fraction of
/// a second). Run on an event loop, a flood of wrong passwords would hold the loops, and every
/// connection they serve, for as long as it lasts, and make as many 128 MiB allocations at once
/// as there are loops. Here at most `workers` checks run at once, on threads of the pool's own;
/// at most `queueLimit` more wait their turn (first come, first served); one more is answered
/// `busy` at once and changes nothing.
///
/// Threads of its own, not the process's shared dispatch threads (an `OperationQueue` runs
/// there): on Linux those are as many as the cores, for every concurrent queue of the
/// process, so each KDF run held one of them, `workers` above the core count were never
/// reached, and anything else in the process that blocked those threads stopped every login.
public final class PasswordChecks: Sendable {
    /// Checks that run at once.
    public let workers: Int
    /// Checks that may wait for a worker.
    public let queueLimit: Int
    private let threads: NIOThreadPool
    private let admission = Mutex(Admission())

    /// Checks running or waiting now, and who waits for that number to change.
    private struct Admission {
        var count = 0
        var waiters: [Int: (condition: @Sendable (Int) -> Bool, continuation: CheckedContinuation<Void, Never>)] = [:]
        var nextWaiter = 0

        /// Changes the count and removes the waiters it satisfies, for resuming.
        mutating func change(by delta: Int) -> [CheckedContinuation<Void, Never>] {
            self.count += delta
            let count = self.count
            let satisfied = self.waiters.filter { $0.value.condition(count) }
            for key in satisfied.keys { self.waiters[key] = nil }
            return satisfied.values.map(\.continuation)
        }
    }

    /// Checks running or waiting now.
    public var admitted: Int { self.admission.withLock { $0.count } }

    /// Returns once the number of checks running or waiting satisfies `condition` (at once if
    /// it does now), or when the calling task is cancelled: for tests and tools that must act
    /// when the pool is busy or free, without polling. `condition` runs under the pool's lock:
    /// it must not touch the pool (reading `admitted` there would deadlock).
    public func admitted(where condition: @escaping @Sendable (Int) -> Bool) async {
        let id = self.admission.withLock { admission in
            admission.nextWaiter += 1
            return admission.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = self.admission.withLock { admission in
                    if Task.isCancelled || condition(admission.count) { return true }
                    admission.waiters[id] = (condition, continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let waiter = self.admission.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume()
        }
    }

    /// A pool of `workers` threads with room for `queueLimit` waiting checks.
    public init(workers: Int, queueLimit: Int) {
        self.workers = max(1, workers)
        self.queueLimit = max(0, queueLimit)
        self.threads = NIOThreadPool(numberOfThreads: self.workers)
        self.threads.start()
    }

    deinit {
        // Checks still waiting are resumed with `CancellationError` (their work item is
        // called `.cancelled`); the threads end after the running ones.
        self.threads.shutdownGracefully { _ in }
    }

    /// Runs `work` on a worker and returns its result with the nanoseconds it took (the
    /// `kdf` step: the hash itself, not the wait); throws `busy` when the queue is full.
    ///
    /// A check still waiting when its task is cancelled (the server shutting down) is dropped
    /// and throws `CancellationError` at once; one already running finishes, since a KDF run
    /// cannot be interrupted.
    public func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> (T, UInt64) {
        let admitted = self.admission.withLock { admission -> [CheckedContinuation<Void, Never>]? in
            guard admission.count < self.workers + self.queueLimit else { return nil }
            return admission.change(by: 1)
        }
        guard let admitted else {
            throw MsgFailure(code: .busy, message: "Too many password checks are waiting; try again later")
        }
        for waiter in admitted { waiter.resume() }
        defer {
            let satisfied = self.admission.withLock { $0.change(by: -1) }
            for waiter in satisfied { waiter.resume() }
        }
        let ticket = Ticket<(T, UInt64)>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard ticket.arm(continuation) else { return }
                self.threads.submit { state in
                    guard state == .active else { return ticket.cancel() }
                    // Taken by whoever comes first: this worker, or the cancellation.
                    guard let continuation = ticket.take() else { return }
                    continuation.resume(
                        with: Result {
                            let start = Stopwatch.now()
                            let value = try work()
                            return (value, Stopwatch.now() &- start)
                        }
                    )
                }
            }
        } onCancel: {
            ticket.cancel()
        }
    }
}

/// The continuation of one waiting check, resumed exactly once: by the worker that takes it,
/// or with `CancellationError` by a cancellation that comes first.
private final class Ticket<Value: Sendable>: Sendable {
    private enum State {
        case waiting
        case armed(CheckedContinuation<Value, any Error>)
        case taken
    }

    private let state = Mutex(State.waiting)

    /// Stores the continuation; false (having resumed it) if the task was already cancelled.
    func arm(_ continuation: CheckedContinuation<Value, any Error>) -> Bool {
        let armed = self.state.withLock { state in
            guard case .waiting = state else { return false }
            state = .armed(continuation)
            return true
        }
        if !armed { continuation.resume(throwing: CancellationError()) }
        return armed
    }

    /// The continuation, if nobody took it yet.
    func take() -> CheckedContinuation<Value, any Error>? {
        self.state.withLock { state in
            guard case .armed(let continuation) = state else { return nil }
            state = .taken
            return continuation
        }
    }

    /// Resumes the continuation with `CancellationError` unless a worker took it.
    func cancel() {
        let continuation = self.state.withLock { state -> CheckedContinuation<Value, any Error>? in
            switch state {
            case .waiting:
                state = .taken
                return nil
            case .armed(let continuation):
                state = .taken
                return continuation
            case .taken:
                return nil
            }
        }
        continuation?.resume(throwing: CancellationError())
    }
}
