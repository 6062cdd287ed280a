import Foundation
import LabCore
import LabReport
import LabTesting
import SwiftCSV
import Testing

/// `lab compare` on real runs: two runs of the same build differ by noise only, and a run
/// with a real 25% slowdown in one step (`--test-slowdown`: real work inside its timed region) is flagged in
/// that step alone. Runs in a pass of its own (scripts/test): its verdicts are about time.
///
/// The slowed step is `sign` (about 280 µs in a debug build), held to the 10% floor; a step
/// under 100 µs is held to 25%, since between processes of one binary those move by up to
/// 13% here.
///
/// This VM's host moves whole processes by ×0.8–×1.3 for seconds at a time (ten runs of
/// this scenario back to back, each against the one before: medians ×0.81 to ×1.32). The
/// common factor takes out most of it; the rest is the experiment's design, as a careful
/// benchmarker would do it on a shared machine: each run is six short runs, interleaved
/// with the other runs' in rotating order and merged with `lab merge`, so all of them met the
/// same moods of the machine.
///
/// One client: with two, the clients' threads share a physical core (this VM's two vCPUs
/// look like hyperthreads of one), so busy time added to one client's `sign` sped up the
/// other's steps (a merged run with sign 25% slower came out ×0.86 in every other step),
/// and the steps of two identical runs spread by ±10% instead of ±2%.
@Suite(.tier(.compareAcceptance)) struct CompareAcceptanceTests {
    @Test("lab compare: identical runs show no significant change; a 25% slowdown in sign is flagged, alone")
    func identicalRunsAndOneSlowStep() async throws {
        let folder = try CLITests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("compare-check.json")
        try #"""
        {
          "name": "compare-check",
          "server": { "transport": "in-process", "provider": "swift-crypto" },
          "clients": { "count": 1 },
          "load": { "model": "closed", "iterations": 200, "warmupIterations": 10 },
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
        let variants: [(name: String, extra: [String])] = [
            ("first", []), ("second", []), ("slowed", ["--test-slowdown", "sign=25%"]),
        ]
        var parts: [String: [URL]] = [:]
        for block in 0..<6 {
            for offset in 0..<variants.count {
                let variant = variants[(block + offset) % variants.count]
                parts[variant.name, default: []].append(try await run("\(variant.name)-\(block)", variant.extra))
            }
        }
        func merged(_ name: String) async throws -> URL {
            let out = folder.appendingPathComponent(name)
            let merge = try await CLITests.lab(
                ["merge"] + (parts[name] ?? []).map(\.path) + ["--out", out.path, "--quiet"]
            )
            try #require(merge.status == 0, "\(name): \(merge.errors)")
            return out
        }
        let first = try await merged("first")
        let second = try await merged("second")
        let slowed = try await merged("slowed")

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
        #expect(flagged.map { $0["step"] ?? "" } == ["sign"], "flagged: \(flagged.map { "\($0)" })")
        #expect(flagged.first?["verdict"] == "slower")
        let ratio = Double(flagged.first?["relative_ratio"] ?? "") ?? 0
        #expect(ratio > 1.15 && ratio < 1.45, "the injected 25% shows as such: ×\(ratio) against the run")

        // The report a reader opens: the verdict, and a chart per candidate beside it.
        let markdown = try String(contentsOf: out.appendingPathComponent("comparison.md"), encoding: .utf8)
        let secondLine = markdown.split(separator: "\n").first { $0.hasPrefix("- **second**") } ?? ""
        #expect(secondLine.contains("no significant change in any of the"), "\(secondLine)")
        #expect(!secondLine.contains("as a whole**"), "\(secondLine)")
        #expect(markdown.contains("`cx x25519 swift-crypto · sign` slower"))
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
