import LabCore
import LabTestSupport
import Synchronization
import Testing

/// The scopes tests keep their servers in (`LabTestSupport/Scoped.swift`): the server is shut
/// down once, after the body, also when the body throws.
@Suite(.tier(.unit)) struct ScopedTests {
    /// An endpoint that counts its shutdowns and serves nothing.
    final class CountingEndpoint: TransportEndpoint {
        let shutdowns = Atomic<Int>(0)
        var address: String? { nil }
        func connect<R: StepRecorder>(recorder: inout R) async throws -> any Connection {
            throw LabError(.connectFailed, "serves nothing")
        }
        func shutdown() async { self.shutdowns.add(1, ordering: .relaxed) }
    }

    struct Failure: Error {}

    @Test("a body that returns: its result, then one shutdown")
    func returns() async throws {
        let endpoint = CountingEndpoint()
        let value = try await withEndpoint(endpoint) { served in
            #expect(served.shutdowns.load(ordering: .relaxed) == 0, "not shut down while the body runs")
            return 42
        }
        #expect(value == 42)
        #expect(endpoint.shutdowns.load(ordering: .relaxed) == 1)
    }

    @Test("a body that throws: the error goes on, after one shutdown")
    func throwsAfterShutdown() async throws {
        let endpoint = CountingEndpoint()
        await #expect(throws: Failure.self) {
            try await withEndpoint(endpoint) { _ in throw Failure() }
        }
        #expect(endpoint.shutdowns.load(ordering: .relaxed) == 1)
    }
}
