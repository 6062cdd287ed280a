import Foundation
import LabAnalysis
import LabCore
import LabReport
import LabResults
import LabTestSupport
import Testing

/// `lab check --format junit|github`: the gate's verdicts as CI systems read them, checked by
/// an independent JUnit reader (junitparser).
@Suite(.tier(.integration)) struct CheckFormatsTests {
    /// The cases junitparser reads in `file`: name → failure message (nil when passed).
    static func junitCases(_ file: URL) async throws -> [String: String?] {
        let reader = #"""
            import json, sys
            from junitparser import JUnitXml, Failure
            cases = {}
            for suite in JUnitXml.fromfile(sys.argv[1]):
                for case in suite:
                    failed = [r for r in case.result if isinstance(r, Failure)]
                    cases[case.name] = failed[0].message if failed else None
            print(json.dumps(cases))
            """#
        let parsed = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["python3", "-c", reader, file.path]
        )
        try #require(parsed.status == 0, "junitparser: \(parsed.errors)")
        let object = try JSONSerialization.jsonObject(with: Data(parsed.output.utf8)) as? [String: Any] ?? [:]
        return object.mapValues { $0 as? String }
    }

    @Test("A counted gate with decode 3% over: one failing case, decode's; an ::error line and the summary for GitHub")
    func countedGateForCI() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lab-check-formats-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let baseline = CountedCheckTests.run([
            .decode: CountedCheckTests.samples(200_000), .sign: CountedCheckTests.samples(2_500_000),
        ])
        let run = CountedCheckTests.run([
            .decode: CountedCheckTests.samples(206_000), .sign: CountedCheckTests.samples(2_500_000),
        ])
        try baseline.jsonData().write(to: folder.appendingPathComponent("baseline.json"))
        try run.jsonData().write(to: folder.appendingPathComponent("run.json"))
        let summary = folder.appendingPathComponent("summary.md")
        let check = try await ChildProcess.run(
            LabProcess.executable,
            [
                "check", folder.appendingPathComponent("run.json").path, "--baseline",
                folder.appendingPathComponent("baseline.json").path, "--out", folder.path, "--format", "junit",
                "--format", "github",
            ],
            environment: ["GITHUB_STEP_SUMMARY": summary.path]
        )
        #expect(check.status == 2, "a regression: \(check.errors)")
        let cases = try await Self.junitCases(folder.appendingPathComponent("check-junit.xml"))
        #expect(cases.count == 2, "\(cases)")
        #expect(cases["cx x25519 swift-crypto · sign"] == .some(nil), "sign passed: \(cases)")
        let decode = cases["cx x25519 swift-crypto · decode"] ?? nil
        #expect(decode?.hasPrefix("more work: ×1.0300") == true, "\(String(describing: decode))")
        let errors = check.output.split(separator: "\n").filter { $0.hasPrefix("::error ") }
        #expect(
            errors == [
                "::error title=crypto-lab%3A regression::lab check: cx x25519 swift-crypto · decode: 206,000 instructions against the baseline's 200,000, ×1.0300 (allowed ±0.25%25)"
            ],
            "\(check.output)"
        )
        let written = try String(contentsOf: summary, encoding: .utf8)
        #expect(written == (try String(contentsOf: folder.appendingPathComponent("check.md"), encoding: .utf8)))
        // And as one page to open: check.md's heading and its tables, as HTML.
        // check.html, never report.html: the run's folder, where a check writes by default, has its own.
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("report.html").path))
        let page = try String(contentsOf: folder.appendingPathComponent("check.html"), encoding: .utf8)
        let heading = written.split(separator: "\n").first.map { String($0.dropFirst(2)) } ?? "?"
        #expect(page.hasPrefix("<!DOCTYPE html>") && page.contains("<h1>\(heading)</h1>"), "\(heading): \(page.prefix(400))")
        #expect(page.contains("<table"), "check.md's table, as HTML")
    }

    @Test("lab check into its run's folder joins its files and replaces an earlier check's; --out elsewhere refuses")
    func checkBesideItsRun() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lab-check-folder-\(UUID())")
        let runFolder = folder.appendingPathComponent("run")
        try FileManager.default.createDirectory(at: runFolder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = CountedCheckTests.run([.decode: CountedCheckTests.samples(200_000)])
        try run.jsonData().write(to: folder.appendingPathComponent("base.json"))
        // The run as `lab run` leaves it: its results.json and report.html, listed in .lab-files.
        try run.jsonData().write(to: runFolder.appendingPathComponent("results.json"))
        try Data("the run's page".utf8).write(to: runFolder.appendingPathComponent("report.html"))
        try Data(#"{ "files": { "run": ["report.html", "results.json"] } }"#.utf8)
            .write(to: runFolder.appendingPathComponent(".lab-files"))
        let check = { (arguments: [String]) in
            try await ChildProcess.run(
                LabProcess.executable,
                ["check", runFolder.path, "--baseline", folder.appendingPathComponent("base.json").path, "--quiet"]
                    + arguments
            )
        }
        let first = try await check(["--format", "junit"])
        #expect(first.status == 0, "\(first.errors)")
        let junit = runFolder.appendingPathComponent("check-junit.xml")
        #expect(FileManager.default.fileExists(atPath: junit.path))
        // Again, without junit: the earlier check's file goes, the run's stay as they were.
        let second = try await check([])
        #expect(second.status == 0, "\(second.errors)")
        #expect(!FileManager.default.fileExists(atPath: junit.path), "the earlier check's junit file stayed")
        let page = try String(contentsOf: runFolder.appendingPathComponent("report.html"), encoding: .utf8)
        #expect(page == "the run's page")
        let listed = try String(contentsOf: runFolder.appendingPathComponent(".lab-files"), encoding: .utf8)
        #expect(listed.contains("\"run\"") && listed.contains("\"check.md\"") && !listed.contains("junit"), "\(listed)")
        // Into another run's folder with --out: refused, as lab run is.
        let other = try await check(["--out", runFolder.path + "/.."])
        #expect(other.status == 0, "a folder of no run: \(other.errors)")
        let base = folder.appendingPathComponent("base.json").path
        let refused = try await ChildProcess.run(
            LabProcess.executable,
            ["check", base, "--baseline", base, "--out", runFolder.path]
        )
        #expect(refused.status == 1 && refused.errors.contains("pass --replace"), "\(refused.errors)")
    }

    @Test("A comparison with encrypt 25% slower: junitparser finds that case failed, and the others passed")
    func comparisonForCI() async throws {
        let base = ComparisonTests.run(
            "base",
            [
                .encrypt: ComparisonTests.timings(2000, median: 300_000, seed: 10),
                .sign: ComparisonTests.timings(2000, median: 250_000, seed: 11),
            ]
        )
        let candidate = ComparisonTests.run(
            "candidate",
            [
                .encrypt: ComparisonTests.timings(2000, median: 300_000, seed: 20, scale: 1.25),
                .sign: ComparisonTests.timings(2000, median: 250_000, seed: 21),
            ]
        )
        let suite = VerdictSuite(comparison: Comparison(baseline: base, candidates: [candidate]))
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lab-compare-formats-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let written = try suite.writeCheck(formats: ["junit"], markdown: "", to: folder, prefix: "comparison")
        #expect(written.map(\.lastPathComponent) == ["comparison-junit.xml"])
        let cases = try await Self.junitCases(folder.appendingPathComponent("comparison-junit.xml"))
        #expect(cases.count == 3, "the run as a whole and two steps: \(cases)")
        let failed = cases.filter { $0.value != nil }
        #expect(Array(failed.keys) == ["candidate: cx x25519 swift-crypto · encrypt"], "\(cases)")
        #expect(failed.values.first??.hasPrefix("slower: p50 ×1.2") == true, "\(failed)")
        #expect(suite.annotations().count == 1)
    }

    @Test("lab check refuses a format it does not write, before reading the runs")
    func unknownFormat() async throws {
        let refused = try await ChildProcess.run(
            LabProcess.executable,
            ["check", "no-such-run.json", "--baseline", "no-such-baseline.json", "--format", "bmf"]
        )
        #expect(refused.status == 1, "\(refused.errors)")
        #expect(refused.errors.contains("--format bmf") && !refused.errors.contains("no-such-run"), "\(refused.errors)")
    }
}
