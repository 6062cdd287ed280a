public import LabCore

/// Runs `body`, then `cleanup`, whether `body` returned or threw.
///
/// A test that ends with `await server.shutdown()` leaves its server running in the shared test
/// process when a `#require` or a `try` before that line throws; a scope closes it on every
/// path (hummingbird's test framework scopes its servers the same way). Swift has no `async`
/// `defer`, hence the closure.
public func withCleanup<Result>(
    _ cleanup: () async -> Void,
    _ body: () async throws -> Result
) async throws -> Result {
    let result: Result
    do {
        result = try await body()
    } catch {
        await cleanup()
        throw error
    }
    await cleanup()
    return result
}

/// Runs `body` with `endpoint`, then shuts the endpoint down, whether `body` returned or threw.
/// An endpoint made inside `body` is `body`'s own business.
public func withEndpoint<Endpoint: TransportEndpoint, Result>(
    _ endpoint: Endpoint,
    _ body: (Endpoint) async throws -> Result
) async throws -> Result {
    try await withCleanup({ await endpoint.shutdown() }) { try await body(endpoint) }
}
