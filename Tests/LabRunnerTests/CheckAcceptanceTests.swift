import Foundation
import LabTestSupport
import SwiftCSV
import Testing

/// `lab check` on real timed runs, end to end: rounds, calibration, the test over rounds,
/// check.csv, the exit code. Runs in the last pass of scripts/test, alone: its verdicts are
/// about time.
///
/// What it asserts holds whatever this shared VM's host does. Between processes of one
/// build, a step's calibrated median moved by up to ×1.23 (`sign`) and ×1.36 (`decode`) in
/// 30 runs measured here, so a 15% slowdown is not always seen against one baseline, and an
/// unchanged run is sometimes flagged: how often, on a given machine, is a measurement
/// (`bash scripts/check-acceptance.sh`, docs/performance.md), not a test. The host's slow
/// state moves one step by up to ×1.64 against another process (docs/performance.md), so a
/// run may meet its baseline anywhere between ×1/1.64 and ×1.64: `sign` given ten times its
/// work reads ×6 at the least, and an unchanged `sign` ×1.7 at the most. (The official CI
/// runs of 2026-11-24 read a doubled `sign` as ×1.39 and a quadrupled one as ×1.61: the
/// added work was then sized by one timing at start, and came out short; it is now sized by
/// what it takes inside the step, `StepSlowdownTests`.) That a slowdown adds work to its
/// step and to no other is deterministic, and tested on counts (`CountedRunTests`); the
/// statistics on made-up rounds are `CheckTests`'.
@Suite(.tier(.checkAcceptance)) struct CheckAcceptanceTests {
    static let scenario = #"""
        {
          "name": "check-acceptance",
          "server": { "transport": "in-process", "provider": "swift-crypto" },
          "clients": { "count": 1 },
          "load": { "model": "closed", "iterations": 400, "warmupIterations": 20, "rounds": 10 },
          "flows": [ { "flow": "cx", "suite": "x25519" } ],
          "thresholds": { "errors": "== 0" },
          "report": { "formats": ["json"] }
        }
        """#

    /// A folder, the scenario in it, and the two commands.
    struct Lab {
        let folder: URL
        let file: URL

        init() throws {
            self.folder = try CLITests.temporaryFolder()
            self.file = self.folder.appendingPathComponent("check.json")
            try CheckAcceptanceTests.scenario.write(to: self.file, atomically: true, encoding: .utf8)
        }

        func run(_ name: String, _ extra: [String] = []) async throws -> URL {
            let out = self.folder.appendingPathComponent(name)
            let run = try await CLITests.lab(["run", self.file.path, "--out", out.path, "--quiet"] + extra)
            try #require(run.status == 0, "\(name): \(run.errors)")
            return out
        }

        /// `lab check`'s exit code and check.csv's rows, by step.
        func check(_ run: URL, against baseline: URL) async throws -> (status: Int32, rows: [String: [String: String]]) {
            let out = run.appendingPathComponent("check-\(baseline.lastPathComponent)")
            let check = try await CLITests.lab(["check", run.path, "--baseline", baseline.path, "--out", out.path, "--quiet"])
            let csv = try CSV<Named>(url: out.appendingPathComponent("check.csv"))
            let rows = Dictionary(csv.rows.compactMap { row in row["step"].map { ($0, row) } }, uniquingKeysWith: { first, _ in first })
            return (check.status, rows)
        }
    }

    @Test("lab check: sign given ten times its work is flagged in each of 3 runs, with exit 2; a run against itself, nothing")
    func slowedSignIsFlagged() async throws {
        let lab = try Lab()
        defer { try? FileManager.default.removeItem(at: lab.folder) }
        let baseline = try await lab.run("baseline")

        // The same rounds on both sides: every step is compared, none is slower.
        let itself = try await lab.check(baseline, against: baseline)
        #expect(itself.status == 0)
        #expect(Set(itself.rows.keys).isSuperset(of: ["encode", "decode", "wrap", "unwrap", "encrypt", "decrypt", "sign", "verify", "exchange"]))
        for (step, row) in itself.rows {
            #expect(row["verdict"] == "no significant change", "\(step): \(row)")
            #expect(row["ratio"] == "1.0000", "\(step): \(row)")
        }

        for index in 0..<3 {
            let slowed = try await lab.run("slow-\(index)", ["--test-slowdown", "sign=900%"])
            let check = try await lab.check(slowed, against: baseline)
            let sign = try #require(check.rows["sign"], "check.csv has no sign row")
            #expect(sign["verdict"] == "slower", "run \(index): \(sign)")
            // Ten times the work, against a baseline up to ×1.64 off in either direction. No
            // upper bound: the host's slow state against a fast baseline reads more.
            let ratio = try #require(sign["ratio"].flatMap(Double.init))
            #expect(ratio > 3, "run \(index): sign ×\(ratio)")
            #expect(check.status == 2, "run \(index): exit \(check.status)")
        }
    }
}
