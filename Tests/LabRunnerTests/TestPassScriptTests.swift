import Foundation
import LabTesting
import Testing

/// scripts/test-pass.sh, which every pass of scripts/test goes through: a pass fails when
/// `swift test` fails, and when it ran no test (none matched, or every suite was skipped by
/// its tier). It is run here with a stand-in `swift`
/// first on PATH that prints what `swift test` prints (a real nested `swift test` would
/// wait for this one's lock on .build).
@Suite(.tier(.unit)) struct TestPassScriptTests {
    /// Runs `test_pass` with a stand-in `swift` that prints `output` and exits `status`.
    func testPass(output: String, status: Int32) async throws -> ChildProcess.Outcome {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("test-pass-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let stub = folder.appendingPathComponent("swift")
        let printed = folder.appendingPathComponent("printed.txt")
        try Data(output.utf8).write(to: printed)
        try "#!/bin/sh\ncat '\(printed.path)'\nexit \(status)\n".write(to: stub, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: stub.path)
        let script = RepositoryPaths.root.appendingPathComponent("scripts/test-pass.sh").path
        return try await ChildProcess.run(
            URL(fileURLWithPath: "/bin/bash"),
            ["-c", "export PATH='\(folder.path)':\"$PATH\"; source '\(script)'; test_pass probe --filter Some.Suite"]
        )
    }

    @Test("a pass whose tests ran and passed passes")
    func ranAndPassed() async throws {
        let outcome = try await self.testPass(
            output: "Executed 0 tests, with 0 failures\n✔ Test \"one\" passed after 0.1 seconds.\n"
                + "✔ Test run with 12 tests in 3 suites passed after 1.5 seconds.\n",
            status: 0
        )
        #expect(outcome.status == 0, "\(outcome.output)")
    }

    @Test("a pass whose every suite was skipped by its tier fails, though the closing line counts them")
    func everySuiteSkipped() async throws {
        let outcome = try await self.testPass(
            output: "➜ Suite Some skipped: \"tier 'load': runs when LAB_TEST_TIERS names it\"\n"
                + "✔ Test run with 12 tests in 3 suites passed after 0.01 seconds.\n",
            status: 0
        )
        #expect(outcome.status == 1)
        #expect(outcome.output.contains("ran no test"), "\(outcome.output)")
    }

    @Test("a filter that matches nothing fails the pass, though swift test exits 0")
    func ranNothing() async throws {
        let outcome = try await self.testPass(
            output: "Executed 0 tests, with 0 failures\n✔ Test run with 0 tests in 0 suites passed after 0.001 seconds.\n",
            status: 0
        )
        #expect(outcome.status == 1)
        #expect(outcome.output.contains("ran no test"), "\(outcome.output)")
    }

    @Test("output without Swift Testing's closing line fails the pass")
    func noClosingLine() async throws {
        let outcome = try await self.testPass(output: "error: no tests found\n", status: 0)
        #expect(outcome.status == 1)
    }

    @Test("a failing swift test fails the pass")
    func failed() async throws {
        let outcome = try await self.testPass(
            output: "✘ Test run with 12 tests in 3 suites failed after 1.5 seconds with 1 issue.\n",
            status: 1
        )
        #expect(outcome.status == 1)
        #expect(outcome.output.contains("FAILED"), "\(outcome.output)")
    }
}
