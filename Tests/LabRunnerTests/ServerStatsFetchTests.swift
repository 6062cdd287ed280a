import Foundation
import LabCore
import LabResults
import LabTestSupport
import LabWire
import Synchronization
import Testing

import LabRunner

/// Asking a server elsewhere for its heap once it has taken every client's connection on
/// (`ServerSide.fetch(_:whenOpen:patience:)`): the kernel completes handshakes before the
/// server's event loops do, so the first answer may count fewer.
@Suite(.tier(.unit)) struct ServerStatsFetchTests {
    /// A server elsewhere, as its connections see it: it answers `serverStats` requests with
    /// open connections from `counts`, one per request, the last one repeated. Its own
    /// endpoint, not the `direct` transport's: that one counts what it carries for
    /// `TestPluginTests`.
    final class ScriptedServer: TransportEndpoint, Connection {
        let counts: [Int]
        let asked = Atomic<Int>(0)
        let connected = Atomic<Int>(0)
        var address: String? { "scripted" }

        init(counts: [Int]) {
            self.counts = counts
        }

        func connect<R: StepRecorder>(recorder: inout R) async throws -> any Connection {
            self.connected.add(1, ordering: .relaxed)
            return self
        }

        func shutdown() async {}
        func close() async {}

        func request<R: StepRecorder>(_ body: [UInt8], step: Step, recorder: inout R) async throws -> [UInt8] {
            let index = self.asked.add(1, ordering: .relaxed).oldValue
            var stats = ServerStats(
                provider: ProviderInfo(name: "scripted", version: "0"),
                machine: MachineInfo.current(),
                transport: "scripted",
                startedAt: Date(),
                groups: []
            )
            stats.openConnections = self.counts[min(index, self.counts.count - 1)]
            return try ServerStatsMessage.answer(stats)
        }
    }

    @Test("The answer is the first that counts the connections asked for, not the first one")
    func waitsForTheConnections() async throws {
        let server = ScriptedServer(counts: [470, 495, 500, 501])
        // Patience enough for any machine's load: what is checked is where asking stops.
        let answer = try await ServerSide.fetch(server, whenOpen: 500, patience: .seconds(600)).get()
        #expect(answer.openConnections == 500)
        #expect(server.asked.load(ordering: .relaxed) == 3)
        #expect(server.connected.load(ordering: .relaxed) == 1, "every ask on one connection")
    }

    @Test("A server that never gets there gives its last answer once the patience is spent", .timeLimit(.minutes(1)))
    func givesUp() async throws {
        // A different count in each answer, none of them 500.
        let server = ScriptedServer(counts: Array(400..<499))
        let answer = try await ServerSide.fetch(server, whenOpen: 500, patience: .milliseconds(300)).get()
        let asked = server.asked.load(ordering: .relaxed)
        #expect(answer.openConnections == 400 + asked - 1, "the last of \(asked) answers")
        // One ask every 10 ms at most, never a busy loop.
        #expect(asked <= 31, "asked \(asked) times in 300 ms")
    }

    @Test("Without a count to wait for, one answer")
    func asksOnce() async throws {
        let server = ScriptedServer(counts: [470, 500])
        let answer = try await ServerSide.fetch(server, whenOpen: nil).get()
        #expect(answer.openConnections == 470)
        #expect(server.asked.load(ordering: .relaxed) == 1)
    }
}
