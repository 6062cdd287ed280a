import Foundation
import LabTestSupport
import Testing

/// scripts/test-pass.sh, which every pass of scripts/test goes through: a pass fails when
/// the test binary fails, and when it ran no test (none matched, or every suite was skipped by
/// its tier); `test_summary` closes scripts/test with what failed, since a CI log is read from
/// its tail. It is run here with a stand-in test binary (`LAB_TEST_BINARY`) that prints what
/// the real one prints, and records the arguments it was given.
@Suite(.tier(.unit)) struct TestPassScriptTests {
    /// Runs `test_pass` with a stand-in `swift` that prints `output` and exits `status`.
    func testPass(output: String, status: Int32) async throws -> ChildProcess.Outcome {
        try await self.testPasses([(output, status)], summary: false)
    }

    /// Runs `test_pass` once for each of `passes`, its stand-in binary printing the pass's
    /// output and exiting with its status; then `test_summary` if `summary`. The outcome's
    /// status is the last command's.
    func testPasses(_ passes: [(output: String, status: Int32)], summary: Bool) async throws -> ChildProcess.Outcome {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("test-pass-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let stub = folder.appendingPathComponent("tests.xctest")
        try "#!/bin/sh\necho \"arguments: $*\"\ncat \"$STUB_OUTPUT\"\nexit \"$STUB_STATUS\"\n".write(
            to: stub,
            atomically: true,
            encoding: .utf8
        )
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: stub.path)
        var commands = [
            "export LAB_TEST_BINARY='\(stub.path)' LAB_TEST_TIERS=probe-tier",
            "source '\(RepositoryPaths.root.path)/scripts/test-pass.sh'",
        ]
        for (index, pass) in passes.enumerated() {
            let printed = folder.appendingPathComponent("printed-\(index).txt")
            try Data(pass.output.utf8).write(to: printed)
            commands += [
                "export STUB_OUTPUT='\(printed.path)' STUB_STATUS=\(pass.status)",
                "test_pass probe-\(index) --filter Some.Suite",
            ]
        }
        if summary { commands.append("test_summary") }
        return try await ChildProcess.run(URL(fileURLWithPath: "/bin/bash"), ["-c", commands.joined(separator: "; ")])
    }

    /// What follows the last `== summary` line of `outcome`.
    func summary(of outcome: ChildProcess.Outcome) throws -> String {
        let marker = try #require(outcome.output.range(of: "== summary\n", options: .backwards), "\(outcome.output)")
        return String(outcome.output[marker.upperBound...])
    }

    @Test("a pass whose tests ran and passed passes; the binary runs Swift Testing with the pass's arguments")
    func ranAndPassed() async throws {
        let outcome = try await self.testPass(
            output: "✔ Test \"one\" passed after 0.1 seconds.\n"
                + "✔ Test run with 12 tests in 3 suites passed after 1.5 seconds.\n",
            status: 0
        )
        #expect(outcome.status == 0, "\(outcome.output)")
        #expect(
            outcome.output.contains("arguments: --testing-library swift-testing --filter Some.Suite\n"),
            "\(outcome.output)"
        )
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

    @Test("a filter that matches nothing fails the pass, though the test binary exits 0")
    func ranNothing() async throws {
        let outcome = try await self.testPass(
            output:
                "✔ Test run with 0 tests in 0 suites passed after 0.001 seconds.\n",
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

    @Test("a failing test binary fails the pass")
    func failed() async throws {
        let outcome = try await self.testPass(
            output: "✘ Test run with 12 tests in 3 suites failed after 1.5 seconds with 1 issue.\n",
            status: 1
        )
        #expect(outcome.status == 1)
        #expect(outcome.output.contains("FAILED"), "\(outcome.output)")
    }

    /// As Swift Testing 6.3 prints them: details after "↳", a comment's further lines
    /// indented, an expectation's expansion run on unindented; a test's own print between.
    static let failedRun = """
        ◇ Test run started.
        ↳ Testing Library Version: 6.3.1
        ✔ Test "one" passed after 0.1 seconds.
        ✘ Test "two" recorded an issue at Foo.swift:12:5: Expectation failed: (a → [1, 2]) == ([
        1,
        ] → [1])
        ↳ the comment the expectation gave,
              on two lines
        ◇ Test "three" started.
        a line test three printed
        ✘ Test "two" failed after 0.2 seconds with 1 issue.
        ✘ Suite Some failed after 0.2 seconds with 1 issue.
        ✘ Test run with 3 tests in 1 suite failed after 1.0 seconds with 1 issue.
        ↳ Testing Library Version: 6.3.1

        """
    static let passedRun = """
        ✔ Test "three" passed after 0.1 seconds.
        ✔ Test run with 1 test in 1 suite passed after 1.0 seconds.

        """

    @Test("a failed test's issues and comments are repeated in the closing summary, after the passes that followed")
    func summaryNamesFailedTests() async throws {
        let outcome = try await self.testPasses([(Self.failedRun, 1), (Self.passedRun, 0)], summary: true)
        #expect(outcome.status == 1, "\(outcome.output)")
        let summary = try self.summary(of: outcome)
        let lines = summary.split(separator: "\n").map(String.init)
        #expect(
            lines == [
                "test pass 'probe-0' failed (LAB_TEST_TIERS=probe-tier, arguments: --filter Some.Suite):",
                "    ✘ Test \"two\" recorded an issue at Foo.swift:12:5: Expectation failed: (a → [1, 2]) == ([",
                "    1,",
                "    ] → [1])",
                "    ↳ the comment the expectation gave,",
                "          on two lines",
                "    ✘ Test \"two\" failed after 0.2 seconds with 1 issue.",
                "    ✘ Suite Some failed after 0.2 seconds with 1 issue.",
            ],
            "\(summary)"
        )
    }

    @Test("a pass that crashed before naming a failed test shows its exit status and how its output ended")
    func summaryOfACrash() async throws {
        let crashed = "✔ Test \"one\" passed after 0.1 seconds.\nFatal error: Index out of range\n"
        let outcome = try await self.testPasses([(crashed, 132)], summary: true)
        #expect(outcome.status == 1)
        let summary = try self.summary(of: outcome)
        #expect(summary.contains("the test binary exited 132"), "\(summary)")
        #expect(summary.contains("    Fatal error: Index out of range"), "\(summary)")
        #expect(!outcome.output.contains("ran no test"), "a crash is not a pass that ran nothing: \(outcome.output)")
    }

    @Test("a pass that ran nothing is named in the summary as such")
    func summaryOfAnEmptyPass() async throws {
        let outcome = try await self.testPasses(
            [("✔ Test run with 0 tests in 0 suites passed after 0.001 seconds.\n", 0)],
            summary: true
        )
        #expect(outcome.status == 1)
        #expect(try self.summary(of: outcome).contains("    it ran no test"), "\(outcome.output)")
    }

    @Test("when every pass passed, the summary says nothing failed, and passes")
    func summaryOfPasses() async throws {
        let outcome = try await self.testPasses([(Self.passedRun, 0), (Self.passedRun, 0)], summary: true)
        #expect(outcome.status == 0, "\(outcome.output)")
        #expect(try self.summary(of: outcome) == "nothing failed\n")
    }
}
