import Foundation
import LabTestSupport
import Testing

/// The reports other tools read (`lab run --format`): junit, github, bmf and hgrm, each
/// read back by an independent reader where one exists (junitparser for JUnit).
@Suite(.tier(.integration)) struct ReportFormatsTests {
    /// Two thresholds that cannot hold and one that does.
    static let scenario = #"""
        {
          "name": "formats-check",
          "server": { "transport": "in-process" },
          "clients": { "count": 2 },
          "load": { "model": "closed", "iterations": 20, "warmupIterations": 2 },
          "flows": [ { "flow": "cx", "suite": "x25519", "provider": "swift-crypto" } ],
          "thresholds": {
            "errors": "== 0",
            "cx.exchange.p99": "< 1 ns",
            "cx.exchange.count": ">= 1000000"
          }
        }
        """#

    /// Runs the scenario with every format, the job summary going to a file of the test's.
    static func run(in folder: URL) async throws -> (ChildProcess.Outcome, URL) {
        let file = folder.appendingPathComponent("formats.json")
        try Self.scenario.write(to: file, atomically: true, encoding: .utf8)
        let summary = folder.appendingPathComponent("step-summary.md")
        try "earlier step\n".write(to: summary, atomically: true, encoding: .utf8)
        let out = folder.appendingPathComponent("out")
        let run = try await ChildProcess.run(
            CLITests.lab,
            [
                "run", file.path, "--quiet", "--out", out.path, "--format", "junit", "--format", "github",
                "--format", "bmf", "--format", "hgrm",
            ],
            in: RepositoryPaths.root,
            environment: ["GITHUB_STEP_SUMMARY": summary.path]
        )
        return (run, out)
    }

    @Test("JUnit: junitparser reads one case per threshold and the deadline, one failure per missed threshold")
    func junitReadsBack() async throws {
        let folder = try CLITests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (run, out) = try await Self.run(in: folder)
        #expect(run.status == 2, "two thresholds missed: \(run.errors)")
        let reader = #"""
            import json, sys
            from junitparser import JUnitXml, Failure
            xml = JUnitXml.fromfile(sys.argv[1])
            cases = []
            for suite in xml:
                props = {p.name: p.value for p in suite.properties()}
                for case in suite:
                    failed = [r for r in case.result if isinstance(r, Failure)]
                    cases.append({"name": case.name, "failed": bool(failed),
                                  "message": failed[0].message if failed else None})
            print(json.dumps({"tests": xml.tests, "failures": xml.failures, "cases": cases,
                              "commit": props.get("lab.commit")}))
            """#
        let parsed = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["python3", "-c", reader, out.appendingPathComponent("junit.xml").path]
        )
        try #require(parsed.status == 0, "junitparser: \(parsed.errors)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(parsed.output.utf8)) as? [String: Any])
        #expect(document["tests"] as? Int == 4)
        #expect(document["failures"] as? Int == 2)
        let cases = document["cases"] as? [[String: Any]] ?? []
        let failed = Set(cases.filter { $0["failed"] as? Bool == true }.compactMap { $0["name"] as? String })
        #expect(failed == ["cx.exchange.p99 < 1 ns", "cx.exchange.count >= 1000000"], "\(cases)")
        let message = cases.first { $0["name"] as? String == "cx.exchange.p99 < 1 ns" }?["message"] as? String
        #expect(message?.hasPrefix("observed ") == true, "\(String(describing: message))")
        #expect((document["commit"] as? String)?.count == 40, "the lab's commit among the properties")
    }

    @Test("github: an ::error line per missed threshold, and the summary appended to $GITHUB_STEP_SUMMARY")
    func githubAnnotatesAndSummarises() async throws {
        let folder = try CLITests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (run, out) = try await Self.run(in: folder)
        let errors = run.output.split(separator: "\n").filter { $0.hasPrefix("::error ") }
        #expect(errors.count == 2, "\(run.output)")
        #expect(errors.allSatisfy { $0.hasPrefix("::error title=crypto-lab%3A threshold missed::formats-check: ") })
        #expect(errors.contains { $0.contains("cx.exchange.p99 < 1 ns (observed ") })
        let summary = try String(contentsOf: folder.appendingPathComponent("step-summary.md"), encoding: .utf8)
        let written = try String(contentsOf: out.appendingPathComponent("github-summary.md"), encoding: .utf8)
        #expect(summary == "earlier step\n" + written, "appended after what the job wrote before")
        #expect(written.contains("❌ failed") && written.contains("❌ **missed**") && written.contains("✅ met"))
        // x25519's exchange on the wire: a 110-byte request frame, a 789-byte answer (TrafficTests).
        #expect(written.contains("| 110 B / 789 B |"), "\(written)")
    }

    @Test("bmf and hgrm: each step's median inside its interval, throughput for the exchange, counts as in results.csv")
    func bencherAndHdrHistogram() async throws {
        let folder = try CLITests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (_, out) = try await Self.run(in: folder)
        let csv = try String(contentsOf: out.appendingPathComponent("results.csv"), encoding: .utf8)
        var rows: [String: (count: Int, p50: Double)] = [:]
        for line in csv.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: ",").map(String.init)
            rows[fields[4]] = (Int(fields[5]) ?? -1, (Double(fields[8]) ?? -1) * 1000)
        }
        let bmf = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("bmf.json")))
                as? [String: [String: [String: Double]]]
        )
        #expect(bmf.count == rows.count, "one benchmark per step: \(bmf.keys.sorted())")
        for (name, measures) in bmf {
            let step = String(name.split(separator: "/").last ?? "")
            let latency = try #require(measures["latency"], "\(name)")
            let value = try #require(latency["value"])
            #expect(latency["lower_value"]! <= value && value <= latency["upper_value"]!, "\(name): \(latency)")
            // results.csv rounds to the nanosecond (µs with three decimals).
            #expect(abs(value - (rows[step]?.p50 ?? -1)) < 1, "\(name): \(value) against results.csv")
            #expect((measures["throughput"] != nil) == (step == "exchange"), "\(name): \(measures.keys)")
            // The exchange's bytes per iteration, both ways: x25519's 110 + 789.
            #expect((measures["bytes"]?["value"] == 899) == (step == "exchange"), "\(name): \(measures)")
        }
        for (step, row) in rows {
            let file = out.appendingPathComponent("hgrm/cx_x25519_swift-crypto_in-process_\(step).hgrm")
            let text = try String(contentsOf: file, encoding: .utf8)
            // HdrHistogram's footer: `#[Max     =       27.183, Total count    =          483]`.
            let total = text.firstMatch(of: /Total count\s*=\s*(\d+)/).map { Int($0.output.1) }
            #expect(total == row.count, "\(step): \(String(describing: total)) against results.csv's \(row.count)")
        }
    }

    @Test("An unknown --format is refused before the run, with the reporters' names")
    func unknownFormatIsRefused() async throws {
        let refused = try await CLITests.lab(["run", "Scenarios/quickstart.json", "--quiet", "--format", "xml"])
        #expect(refused.status == 1, "\(refused.errors)")
        #expect(
            refused.errors.contains("No reporter named 'xml'") && refused.errors.contains("junit"),
            "\(refused.errors)"
        )
    }
}
