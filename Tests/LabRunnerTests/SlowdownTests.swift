import Foundation
import LabTestSupport
import Testing

/// `lab run --test-slowdown` (test-only) adds real work inside a step's timed region, so it
/// can slow only the steps timed with `StepRecorder.measure`; asking for another fails the
/// run rather than silently measuring an unchanged step. (That the work shows in the step
/// is what CompareAcceptanceTests and CheckAcceptanceTests measure.)
@Suite(.tier(.integration)) struct SlowdownTests {
    static let scenario = #"""
        {
          "name": "slowdown",
          "server": { "transport": "in-process", "provider": "swift-crypto" },
          "clients": { "count": 1 },
          "load": { "model": "closed", "iterations": 80 },
          "flows": [ { "flow": "cx", "suite": "x25519" } ]
        }
        """#

    func run(_ slowdown: String) async throws -> ChildProcess.Outcome {
        let folder = try CLITests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("slowdown.json")
        try Self.scenario.write(to: file, atomically: true, encoding: .utf8)
        return try await CLITests.lab([
            "run", file.path, "--out", folder.appendingPathComponent("out").path, "--quiet",
            "--test-slowdown", slowdown,
        ])
    }

    @Test("a step timed with measure can be slowed: the run succeeds (by how much: the acceptance tests)")
    func measuredStep() async throws {
        let run = try await self.run("sign=10%")
        #expect(run.status == 0, "\(run.errors)")
    }

    @Test("a step the runner times itself cannot be slowed: the run fails naming it")
    func unmeasuredStep() async throws {
        let run = try await self.run("exchange=10%")
        #expect(run.status == 1, "a usage error: \(run.errors)")
        #expect(run.errors.contains("--test-slowdown: exchange never slowed"), "\(run.errors)")
    }
}
