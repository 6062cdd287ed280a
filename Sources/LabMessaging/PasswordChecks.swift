import Dispatch
import LabCore
import Synchronization

/// Password hashing off the server's event loops, bounded.
///
/// A KDF run is deliberately slow (scrypt at its default cost: 128 MiB and a large fraction of
/// a second). Run on an event loop, a flood of wrong passwords would hold the loops, and every
/// connection they serve, for as long as it lasts, and make as many 128 MiB allocations at once
/// as there are loops. Here at most `workers` checks run at once, each on a serial dispatch
/// queue of the pool's own; at most `queueLimit` more wait their turn; one more is answered
/// `busy` at once and changes nothing.
final class PasswordChecks: Sendable {
    /// Checks that run at once.
    let workers: Int
    /// Checks that may wait for a worker.
    let queueLimit: Int
    private let queues: [DispatchQueue]
    private let admitted = Mutex((inFlight: 0, next: 0))

    init(workers: Int, queueLimit: Int) {
        self.workers = max(1, workers)
        self.queueLimit = max(0, queueLimit)
        self.queues = (0..<self.workers).map { DispatchQueue(label: "lab.msg.kdf.\($0)") }
    }

    /// Runs `work` on a worker and returns its result with the nanoseconds it took (the
    /// `kdf` step: the hash itself, not the wait); throws `busy` when the queue is full.
    func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> (T, UInt64) {
        let slot: Int? = self.admitted.withLock { state in
            guard state.inFlight < self.workers + self.queueLimit else { return nil }
            state.inFlight += 1
            state.next = (state.next + 1) % self.workers
            return state.next
        }
        guard let slot else {
            throw MsgFailure(code: .busy, message: "Too many password checks are waiting; try again later")
        }
        defer { self.admitted.withLock { $0.inFlight -= 1 } }
        return try await withCheckedThrowingContinuation { continuation in
            self.queues[slot].async {
                continuation.resume(
                    with: Result {
                        let start = Stopwatch.now()
                        let value = try work()
                        return (value, Stopwatch.now() &- start)
                    }
                )
            }
        }
    }
}
