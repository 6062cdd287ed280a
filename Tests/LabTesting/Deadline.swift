import LabCore

/// Awaits `body`, bounded by `limit`: if `limit` passes first, `body`'s task is cancelled and
/// this throws `timedOut` naming `what`. For awaiting an event (a counter reaching a value, a
/// log line) with a bound, so that a test never hangs and never guesses with a sleep.
public func withDeadline<T: Sendable>(
    _ limit: Duration,
    _ what: @autoclosure @escaping @Sendable () -> String,
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    return try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: limit)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else {
            throw LabError(.timedOut, "\(what()): not within \(limit)")
        }
        return value
    }
}
