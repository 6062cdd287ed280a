import Foundation
import LabCore
import Synchronization

/// Password hashing off the server's event loops, bounded.
///
/// A KDF run is deliberately slow (scrypt at its default cost: 128 MiB and a large fraction of
/// a second). Run on an event loop, a flood of wrong passwords would hold the loops, and every
/// connection they serve, for as long as it lasts, and make as many 128 MiB allocations at once
/// as there are loops. Here at most `workers` checks run at once, on an operation queue of the
/// pool's own; at most `queueLimit` more wait their turn (first come, first served); one more
/// is answered `busy` at once and changes nothing.
public final class PasswordChecks: Sendable {
    /// Checks that run at once.
    public let workers: Int
    /// Checks that may wait for a worker.
    public let queueLimit: Int
    private let queue: OperationQueue
    private let inFlight = Mutex(0)

    /// Checks running or waiting now.
    public var admitted: Int { self.inFlight.withLock { $0 } }

    /// A pool of `workers` threads with room for `queueLimit` waiting checks.
    public init(workers: Int, queueLimit: Int) {
        self.workers = max(1, workers)
        self.queueLimit = max(0, queueLimit)
        self.queue = OperationQueue()
        self.queue.name = "lab.msg.kdf"
        self.queue.maxConcurrentOperationCount = self.workers
    }

    /// Runs `work` on a worker and returns its result with the nanoseconds it took (the
    /// `kdf` step: the hash itself, not the wait); throws `busy` when the queue is full.
    public func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> (T, UInt64) {
        let admitted = self.inFlight.withLock { count in
            guard count < self.workers + self.queueLimit else { return false }
            count += 1
            return true
        }
        guard admitted else {
            throw MsgFailure(code: .busy, message: "Too many password checks are waiting; try again later")
        }
        defer { self.inFlight.withLock { $0 -= 1 } }
        return try await withCheckedThrowingContinuation { continuation in
            self.queue.addOperation {
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
