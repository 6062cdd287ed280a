import Dispatch
import LabCore
import Synchronization

/// One `advertise` or `discover` call: the caller's continuation, the operations it started
/// and its deadline.
///
/// The first of the callbacks' answer, the deadline and task cancellation to call ``finish(_:)``
/// wins; it resumes the continuation (exactly once) and cancels the tracked operations.
final class Session<Value: Sendable>: Sendable {
    /// How a session ends.
    enum Outcome: Sendable {
        case success(Value)
        case failure(LabError)
        case cancelled
    }

    private struct State {
        var continuation: CheckedContinuation<Value, any Error>?
        var finished = false
        /// An outcome that came before the continuation (a task cancelled at once).
        var early: Outcome?
        var operations: [any Cancellable] = []
    }

    private let state = Mutex(State())

    /// Whether the session has ended.
    var isFinished: Bool {
        self.state.withLock { $0.finished }
    }

    /// Runs `start` on `DNSSD.queue` and waits for the session to finish, at most `timeout`.
    func run(
        timeout: Duration,
        onTimeout: @escaping @Sendable () -> LabError,
        start: @escaping @Sendable () throws(LabError) -> Void
    ) async throws -> Value {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                let early = self.state.withLock { state -> Outcome? in
                    if let early = state.early { return early }
                    state.continuation = continuation
                    return nil
                }
                if let early {
                    Self.resume(continuation, with: early)
                    return
                }
                // The deadline fires on the queue, like the callbacks, so it needs no free
                // thread of the cooperative pool; a finished session makes it a no-op.
                DNSSD.queue.asyncAfter(deadline: .now() + DNSSD.interval(timeout)) { [weak self] in
                    self?.finish(.failure(onTimeout()))
                }
                DNSSD.queue.async {
                    guard !self.isFinished else { return }
                    do throws(LabError) {
                        try start()
                    } catch {
                        self.finish(.failure(error))
                    }
                }
            }
        } onCancel: {
            self.finish(.cancelled)
        }
    }

    /// Cancels `operation` when the session ends, or at once if it has ended.
    func track(_ operation: any Cancellable) {
        let finished = self.state.withLock { state in
            if !state.finished { state.operations.append(operation) }
            return state.finished
        }
        if finished { operation.cancel() }
    }

    /// Leaves `operation` running when the session ends (an advertisement handed to the caller).
    func untrack(_ operation: any Cancellable) {
        self.state.withLock { state in
            state.operations.removeAll { $0 === operation }
        }
    }

    /// Ends the session with `outcome` unless it has ended; returns whether this call ended it.
    @discardableResult
    func finish(_ outcome: Outcome) -> Bool {
        let ended = self.state.withLock {
            state -> (CheckedContinuation<Value, any Error>?, [any Cancellable])? in
            guard !state.finished else { return nil }
            state.finished = true
            defer {
                state.continuation = nil
                state.operations = []
            }
            if state.continuation == nil { state.early = outcome }
            return (state.continuation, state.operations)
        }
        guard let (continuation, operations) = ended else { return false }
        for operation in operations { operation.cancel() }
        if let continuation { Self.resume(continuation, with: outcome) }
        return true
    }

    private static func resume(_ continuation: CheckedContinuation<Value, any Error>, with outcome: Outcome) {
        switch outcome {
        case .success(let value): continuation.resume(returning: value)
        case .failure(let error): continuation.resume(throwing: error)
        case .cancelled: continuation.resume(throwing: CancellationError())
        }
    }
}
