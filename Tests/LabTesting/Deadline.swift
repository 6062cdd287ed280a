import LabCore
import Synchronization

/// Awaits `body`, bounded by `limit`: if `limit` passes first, this throws `timedOut` naming
/// `what` at once, and cancels `body`'s task. For awaiting an event (a counter reaching a
/// value, a log line) with a bound, so that a test never hangs and never guesses with a sleep.
///
/// The body runs in a task of its own that this does not wait for once the limit has passed:
/// a body that ignores cancellation (awaiting another task's value, say) cannot hang the test.
public func withDeadline<T: Sendable>(
    _ limit: Duration,
    _ what: @autoclosure @escaping @Sendable () -> String,
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    let outcome = Mutex<CheckedContinuation<T, any Error>?>(nil)
    let finish: @Sendable (Result<T, any Error>) -> Void = { result in
        outcome.withLock { continuation in
            continuation?.resume(with: result)
            continuation = nil
        }
    }
    var work: Task<Void, Never>? = nil
    var timer: Task<Void, Never>? = nil
    defer {
        work?.cancel()
        timer?.cancel()
    }
    return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        outcome.withLock { $0 = continuation }
        work = Task { finish(await Result { try await body() }) }
        timer = Task {
            guard (try? await Task.sleep(for: limit)) != nil else { return }
            finish(.failure(LabError(.timedOut, "\(what()): not within \(limit)")))
        }
    }
}

extension Result where Failure == any Error {
    /// The outcome of an async throwing `body`.
    fileprivate init(_ body: () async throws -> Success) async {
        do {
            self = .success(try await body())
        } catch {
            self = .failure(error)
        }
    }
}
