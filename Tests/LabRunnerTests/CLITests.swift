import Foundation
import LabScenario
import LabTestSupport
import Testing

/// `lab validate` and `lab run` as a user runs them: exit codes, messages, report files.
@Suite(.tier(.integration)) struct CLITests {
    /// The `lab` executable built beside the test bundle.
    static let lab: URL = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("lab")

    static func lab(_ arguments: [String]) async throws -> ChildProcess.Outcome {
        try await ChildProcess.run(Self.lab, arguments, in: RepositoryPaths.root)
    }

    static func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("lab-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test("lab validate: exit 0 for the shipped scenarios, 1 with every problem for a broken one")
    func validate() async throws {
        let good = try await Self.lab(["validate", "Scenarios/quickstart.json", "Scenarios/open-rate.json"])
        #expect(good.status == 0, "\(good.errors)")
        #expect(good.output.contains("Scenarios/quickstart.json: ok"))
        let bad = try await Self.lab(["validate", "Tests/Scenarios/broken/wrong-types.json"])
        #expect(bad.status == 1)
        #expect(bad.errors.contains("has 6 problems"))
        #expect(bad.errors.contains(#"$.clients.count: expected an integer from 1 to 100000, found "16""#))
        // --set as lab run takes it: the changed scenario is checked, a bad change blamed on --set.
        let set = try await Self.lab(["validate", "Scenarios/quickstart.json", "--set", "clients.count=0"])
        #expect(set.status == 1, "\(set.output)")
        #expect(set.errors.contains("$.clients.count") && set.errors.contains("--set"), "\(set.errors)")
        let fixed = try await Self.lab(["validate", "Tests/Scenarios/broken/wrong-types.json", "--set", "clients.count=16"])
        #expect(fixed.errors.contains("has 5 problems") && !fixed.errors.contains("$.clients.count"), "\(fixed.errors)")
    }

    @Test("A usage error exits 1, as documented, and names the values an option takes")
    func usageErrorsExitOne() async throws {
        let framing = try await Self.lab(["serve", "--framing", "u16"])
        #expect(framing.status == 1, "\(framing.errors)")
        #expect(framing.errors.contains("'u32be'") && framing.errors.contains("'u64le'"), "\(framing.errors)")
        let unknown = try await Self.lab(["run", "Scenarios/quickstart.json", "--no-such-option"])
        #expect(unknown.status == 1, "\(unknown.errors)")
        #expect(unknown.errors.contains("--no-such-option"), "\(unknown.errors)")
        let missing = try await Self.lab(["run"])
        #expect(missing.status == 1, "\(missing.errors)")
        // lab run's values are checked by the parser, before the scenario is read or run:
        // the file named here does not exist, so only the option can be the error.
        for (arguments, named) in [
            (["--shard", "0/4"], "--shard"),
            (["--shard", "2"], "--shard"),
            (["--test-slowdown", "sign"], "--test-slowdown"),
            (["--test-slowdown", "sign=-5%"], "--test-slowdown"),
            (["--counted", "--shard", "1/2"], "takes no --shard"),
        ] {
            let refused = try await Self.lab(["run", "no-such-scenario.json", "--quiet"] + arguments)
            #expect(refused.status == 1, "\(arguments): \(refused.errors)")
            #expect(refused.errors.contains(named), "\(arguments): \(refused.errors)")
            #expect(!refused.errors.contains("no-such-scenario"), "\(arguments) was not refused first: \(refused.errors)")
        }
        let help = try await Self.lab(["serve", "--help"])
        #expect(help.status == 0)
        // The help wraps its lines: compare with the whitespace collapsed.
        let text = help.output.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for values in ["per-run, per-exchange, fixed", "csprng, midsquare", "system, virtual", "trace, debug, info"] {
            #expect(text.contains(values), "lab serve --help lists \(values): \(help.output)")
        }
    }

    @Test("lab run refuses a broken scenario before running (exit 1) and writes nothing")
    func runRefusesBrokenScenario() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("out")
        let bad = try await Self.lab([
            "run", "Tests/Scenarios/broken/impossible-combinations.json", "--out", out.path, "--quiet",
        ])
        #expect(bad.status == 1)
        #expect(bad.errors.contains("$.flows[0].suite: The openssl provider cannot do suite 'pq'"))
        #expect(!FileManager.default.fileExists(atPath: out.path))
    }

    @Test("lab run: a missed threshold exits 2 after writing every report; a met one exits 0")
    func runExitCodes() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let scenario = { (threshold: String) in
            #"""
            { "name": "cli", "clients": { "count": 2 }, "load": { "iterations": 10 },
              "flows": [ { "flow": "cx", "suite": "x25519" } ], "thresholds": { "cx.exchange.p50": "\#(threshold)" } }
            """#
        }
        let missed = folder.appendingPathComponent("missed.json")
        try scenario("< 1 ns").write(to: missed, atomically: true, encoding: .utf8)
        let met = folder.appendingPathComponent("met.json")
        try scenario("< 1 h").write(to: met, atomically: true, encoding: .utf8)

        let missedOut = folder.appendingPathComponent("missed-out")
        let failing = try await Self.lab(["run", missed.path, "--out", missedOut.path])
        #expect(failing.status == 2, "\(failing.errors)")
        #expect(failing.errors.contains("threshold missed: cx.exchange.p50 < 1 ns"))
        for file in ["results.csv", "report.md", "results.json", "throughput.svg"] {
            #expect(FileManager.default.fileExists(atPath: missedOut.appendingPathComponent(file).path), "\(file)")
        }
        #expect(failing.output.contains("MISSED cx.exchange.p50 < 1 ns"))
        // Not a terminal: progress comes as plain lines, never carriage returns.
        #expect(!failing.errors.contains("\r"))

        let passing = try await Self.lab([
            "run", met.path, "--out", folder.appendingPathComponent("met-out").path, "--quiet",
        ])
        #expect(passing.status == 0, "\(passing.errors)")
        #expect(passing.output.isEmpty, "--quiet prints nothing")
    }

    @Test("lab hiccups: its figures as JSON, one thread per core; a bad working set exits 1 and names the option")
    func hiccups() async throws {
        let outcome = try await Self.lab(["hiccups", "--seconds", "0.2", "--working-set", "1MiB", "--json"])
        #expect(outcome.status == 0, "\(outcome.errors)")
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(outcome.output.utf8)) as? [String: Any],
            "\(outcome.output)"
        )
        #expect(document["threads"] as? Int == ProcessInfo.processInfo.activeProcessorCount)
        #expect(document["workingSetBytes"] as? Int == 1_048_576)
        let measured = try #require(document["nanoseconds"] as? Int)
        #expect(measured >= 200_000_000 * ProcessInfo.processInfo.activeProcessorCount, "\(measured) ns")
        let tallies = try #require(document["tallies"] as? [String: Any])
        #expect(Set(tallies.keys) == ["switched", "interrupted", "unseen"])
        let text = try await Self.lab(["hiccups", "--seconds", "0.1", "--threads", "1"])
        #expect(text.status == 0, "\(text.errors)")
        #expect(text.output.contains("| nothing (unseen) |"), "\(text.output)")
        #expect(text.output.contains("per second of running"), "\(text.output)")
        for (arguments, named) in [
            (["--working-set", "10"], "--working-set"),
            (["--working-set", "2GiB"], "--working-set"),
            (["--seconds", "0"], "--seconds"),
            (["--threads", "0"], "--threads"),
        ] {
            let refused = try await Self.lab(["hiccups"] + arguments)
            #expect(refused.status == 1, "\(arguments): \(refused.errors)")
            #expect(refused.errors.contains(named), "\(arguments): \(refused.errors)")
        }
    }
}
