import LabCore
import Synchronization

/// Awaits `body`, bounded by `limit`: if `limit` passes first, this throws `timedOut` naming
/// `what` at once, and cancels `body`'s task. For awaiting an event (a counter reaching a
/// value, a log line) with a bound, so that a test never hangs and never guesses with a sleep.
///
/// The body runs in a task of its own that this does not wait for once the limit has passed:
/// a body that ignores cancellation (awaiting another task's value, say) cannot hang the test.
/// Cancelling the caller (a test's time limit) ends the wait with `CancellationError`.
public func withDeadline<T: Sendable>(
    _ limit: Duration,
    _ what: @autoclosure @escaping @Sendable () -> String,
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    let race = DeadlineRace<T>()
    defer { race.stop() }
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            race.start(continuation, body: body) {
                guard (try? await Task.sleep(for: limit)) != nil else { return nil }
                return LabError(.timedOut, "\(what()): not within \(limit)")
            }
        }
    } onCancel: {
        race.finish(.failure(CancellationError()))
    }
}

/// The body and the timer of one `withDeadline`: the first to end resumes the caller, once.
private final class DeadlineRace<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>? = nil
        var outcome: Result<T, any Error>? = nil
        var tasks: [Task<Void, Never>] = []
    }

    private let state = Mutex(State())

    func start(
        _ continuation: CheckedContinuation<T, any Error>,
        body: @escaping @Sendable () async throws -> T,
        timer: @escaping @Sendable () async -> (any Error)?
    ) {
        // Cancelled before it began: the outcome is already there.
        let early = self.state.withLock { state -> Result<T, any Error>? in
            if let outcome = state.outcome { return outcome }
            state.continuation = continuation
            return nil
        }
        if let early { return continuation.resume(with: early) }
        let work = Task {
            do {
                self.finish(.success(try await body()))
            } catch {
                self.finish(.failure(error))
            }
        }
        let clock = Task {
            if let error = await timer() { self.finish(.failure(error)) }
        }
        self.state.withLock { $0.tasks += [work, clock] }
    }

    /// Resumes the caller with `outcome`, if nothing did before.
    func finish(_ outcome: Result<T, any Error>) {
        let continuation = self.state.withLock { state -> CheckedContinuation<T, any Error>? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(with: outcome)
    }

    /// Cancels the body's and the timer's tasks.
    func stop() {
        for task in self.state.withLock({ $0.tasks }) { task.cancel() }
    }
}
