import Foundation
import LabCore
import LabReport
import LabTesting
import SwiftCSV
import Testing

/// `lab compare` on real runs: two runs of the same build differ by noise only, and a run
/// with a real 25% slowdown in one step (busy time added inside that step) is flagged in
/// that step alone. Runs in a pass of its own (scripts/test): its verdicts are about time.
struct CompareAcceptanceTests {
    @Test("lab compare: identical runs show no significant change; a 25% slowdown in encrypt is flagged, alone")
    func identicalRunsAndOneSlowStep() async throws {
        let folder = try CLITests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("compare-check.json")
        try #"""
        {
          "name": "compare-check",
          "server": { "transport": "in-process", "provider": "swift-crypto" },
          "clients": { "count": 2 },
          "load": { "model": "closed", "iterations": 600, "warmupIterations": 20 },
          "flows": [ { "flow": "cx", "suite": "x25519" } ],
          "thresholds": { "errors": "== 0" }
        }
        """#.write(to: file, atomically: true, encoding: .utf8)
        func run(_ name: String, _ extra: [String] = []) async throws -> URL {
            let out = folder.appendingPathComponent(name)
            let run = try await CLITests.lab(["run", file.path, "--out", out.path, "--quiet"] + extra)
            #expect(run.status == 0, "\(name): \(run.errors)")
            return out
        }
        // A discarded first run: the first process after the previous test pass met a machine
        // still settling (in CI once, every step of the first run was ×1.33 slower than
        // the next two runs alike). Benchmarks warm up; so does this comparison.
        _ = try await run("warm-up")
        let first = try await run("first")
        let second = try await run("second")
        let slowed = try await run("slowed", ["--test-slowdown", "encrypt=25%"])

        let out = folder.appendingPathComponent("comparison")
        let compare = try await CLITests.lab(["compare", first.path, second.path, slowed.path, "--out", out.path])
        #expect(compare.status == 0, "\(compare.errors)")
        let csv = try CSV<Named>(url: out.appendingPathComponent("comparison.csv"))
        let candidates = csv.rows.filter { $0["role"] == "candidate" }
        let steps = Set(candidates.map { $0["step"] ?? "" })
        #expect(steps.isSuperset(of: ["encrypt", "decrypt", "sign", "verify", "wrap", "unwrap", "exchange"]))
        let verdicts = Dictionary(grouping: candidates) { $0["run"] ?? "" }
        let same = verdicts["second"] ?? []
        #expect(same.count == steps.count)
        for row in same {
            #expect(
                ["no significant change", "too few samples"].contains(row["verdict"] ?? ""),
                "identical runs: \(row["step"] ?? "") was called \(row["verdict"] ?? "") (p50 ×\(row["p50_ratio"] ?? ""))"
            )
        }
        let slow = verdicts["slowed"] ?? []
        let flagged = slow.filter { ["slower", "faster"].contains($0["verdict"] ?? "") }
        #expect(flagged.map { $0["step"] ?? "" } == ["encrypt"], "flagged: \(flagged.map { "\($0)" })")
        #expect(flagged.first?["verdict"] == "slower")
        let ratio = Double(flagged.first?["p50_ratio"] ?? "") ?? 0
        #expect(ratio > 1.15 && ratio < 1.45, "the injected 25% shows as such: ×\(ratio)")

        // The report a reader opens: the verdict, and a chart per candidate beside it.
        let markdown = try String(contentsOf: out.appendingPathComponent("comparison.md"), encoding: .utf8)
        #expect(markdown.contains("**second**: no significant change in any of the"))
        #expect(markdown.contains("`cx x25519 swift-crypto · encrypt` slower"))
        for chart in ["comparison-1-second.svg", "comparison-2-slowed.svg"] {
            let svg = try String(contentsOf: out.appendingPathComponent(chart), encoding: .utf8)
            #expect(svg.hasPrefix("<svg") || svg.hasPrefix("<?xml"), "\(chart)")
            #expect(markdown.contains("](\(chart))"))
        }
        // A gate: --fail-on-slower exits 2 on the slowed run and 0 on the identical one.
        let gateSlow = try await CLITests.lab([
            "compare", first.path, slowed.path, "--out", folder.path + "/gate1", "--fail-on-slower", "--quiet",
        ])
        #expect(gateSlow.status == 2)
        let gateSame = try await CLITests.lab([
            "compare", first.path, second.path, "--out", folder.path + "/gate2", "--fail-on-slower", "--quiet",
        ])
        #expect(gateSame.status == 0)
    }
}
