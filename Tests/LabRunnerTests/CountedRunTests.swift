import Foundation
import LabTesting
import SwiftCSV
import Testing

/// `lab run --counted` and the counted gate (scripts/gate.sh), run for real under Valgrind.
/// In the cpu-bound pass of scripts/test: counts do not depend on what else runs, and each
/// counted run keeps a core busy for half a minute.
@Suite(.tier(.counted)) struct CountedRunTests {
    static let scenario = #"""
        {
          "name": "counted",
          "server": { "transport": "in-process", "provider": "swift-crypto", "keys": "fixed" },
          "clients": { "count": 1 },
          "load": { "model": "closed", "iterations": 24, "warmupIterations": 4 },
          "flows": [
            { "flow": "cx", "suite": "x25519", "options": { "clientKeys": "per-exchange" } },
            { "flow": "cx", "suite": "rsa-modern", "provider": "openssl", "options": { "clientKeys": "fixed" } }
          ],
          "report": { "formats": ["json", "markdown"], "charts": false }
        }
        """#

    /// Each group's steps' median instruction counts in a counted run's results.json, by
    /// suite.
    static func medians(_ out: URL) throws -> (
        counter: String?, load: String?, medians: [String: [String: UInt64]], samples: [String: [String: Int]]
    ) {
        let data = try Data(contentsOf: out.appendingPathComponent("results.json"))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let metadata = try #require(json["metadata"] as? [String: Any])
        let groups = try #require(json["groups"] as? [[String: Any]])
        var medians: [String: [String: UInt64]] = [:]
        var samples: [String: [String: Int]] = [:]
        for group in groups {
            let key = try #require(group["key"] as? [String: Any])
            let suite = try #require(key["suite"] as? String)
            for step in try #require(group["steps"] as? [[String: Any]]) {
                guard let name = step["step"] as? String,
                    let counts = step["counts"] as? [String: Any],
                    let instructions = (counts["instructions"] as? [NSNumber])?.map(\.uint64Value).sorted()
                else { continue }
                medians[suite, default: [:]][name] = instructions[(instructions.count - 1) / 2]
                samples[suite, default: [:]][name] = instructions.count
            }
        }
        return (metadata["counter"] as? String, metadata["load"] as? String, medians, samples)
    }

    @Test("lab run --counted: every step of every exchange counted; two processes count alike")
    func countsRepeat() async throws {
        let folder = try CLITests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("counted.json")
        try Self.scenario.write(to: file, atomically: true, encoding: .utf8)
        // Command lines of different lengths, as CI and the machine that recorded the gate's
        // baseline have (StackPadding).
        let outs = ["a", "a-second-run-whose-out-path-is-longer"].map { folder.appendingPathComponent($0) }
        async let first = CLITests.lab(["run", file.path, "--counted", "--quiet", "--out", outs[0].path])
        async let second = CLITests.lab(["run", file.path, "--counted", "--quiet", "--out", outs[1].path])
        for outcome in try await [first, second] { try #require(outcome.status == 0, "\(outcome.errors)") }
        let a = try Self.medians(outs[0])
        let b = try Self.medians(outs[1])
        #expect(a.counter?.hasPrefix("instructions outside the allocator (callgrind, valgrind-") == true, "\(a.counter ?? "none")")
        // Each flow counted alone, with its share of the load: 12 of the 24 iterations each.
        #expect(a.load?.contains("each flow counted alone") == true, "\(a.load ?? "none")")
        // Every step an exchange measures, once per measured exchange (warm-up left out).
        let steps = [
            "keygen.session", "encode", "decode", "wrap", "unwrap", "encrypt", "decrypt", "sign", "verify", "exchange",
        ]
        #expect(Set(a.samples["x25519"]?.keys ?? [:].keys) == Set(steps + ["keygen.client"]), "\(a.samples)")
        #expect(Set(a.samples["rsa-modern"]?.keys ?? [:].keys) == Set(steps), "\(a.samples)")
        #expect(a.samples.values.allSatisfy { $0.values.allSatisfy { $0 == 12 } }, "\(a.samples)")
        // Two processes count every step within 0.5% of each other, except RSA's steps with
        // random inputs (blinding, OAEP's seed, PSS's salt): within 1%. Ed25519 signing and
        // verifying with the server's fixed key count the same to 0.01%.
        let random: Set<String> = ["wrap", "unwrap", "sign", "verify", "exchange"]
        for suite in ["x25519", "rsa-modern"] {
            for step in steps + (suite == "x25519" ? ["keygen.client"] : []) {
                let x = Double(a.medians[suite]?[step] ?? 0)
                let y = Double(b.medians[suite]?[step] ?? 1)
                let within = suite == "rsa-modern" && random.contains(step) ? 0.01 : 0.005
                #expect(x > 0 && abs(x / y - 1) < within, "\(suite) \(step): \(x) vs \(y)")
            }
        }
        for step in ["sign", "verify"] {
            let x = Double(a.medians["x25519"]?[step] ?? 0)
            let y = Double(b.medians["x25519"]?[step] ?? 1)
            #expect(x > 1_000_000 && abs(x / y - 1) < 0.0001, "x25519 \(step): \(x) vs \(y)")
        }
        let report = try String(contentsOf: outs[0].appendingPathComponent("report.md"), encoding: .utf8)
        #expect(report.contains("Counted by instructions outside the allocator (callgrind, valgrind-"))
        #expect(report.contains("| sign | 12 | "))
    }

    @Test("lab run --counted refuses more than one client, saying where")
    func oneClient() async throws {
        let refused = try await CLITests.lab(["run", "Scenarios/quickstart.json", "--counted", "--quiet", "--out", "/dev/null/x"])
        #expect(refused.status == 1)
        #expect(refused.errors.contains("--counted counts one client's work, alone: clients.count must be 1"))
    }

    /// The gate against the committed baseline with `step` made 3% slower: the steps it flags.
    static func gate(slowing step: String, in folder: URL) async throws -> (status: Int32, flagged: [String]) {
        let out = folder.appendingPathComponent(step)
        let outcome = try await ChildProcess.run(
            URL(fileURLWithPath: "/bin/bash"),
            ["scripts/gate.sh", "check", "--lab", CLITests.lab.path, "--out", out.path, "--", "--test-slowdown", "\(step)=3%"],
            in: RepositoryPaths.root
        )
        let csv = try CSV<Named>(url: out.appendingPathComponent("check.csv"))
        let flagged = csv.rows.filter { $0["verdict"] == "more work" }.map { "\($0["suite"] ?? "?") \($0["step"] ?? "?")" }
        return (outcome.status, flagged.sorted())
    }

    @Test("The gate fails on decode or sign made 3% slower, naming that step (and an exchange holding it) alone")
    func gateCatchesThreePercent() async throws {
        let folder = try CLITests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        async let decode = Self.gate(slowing: "decode", in: folder)
        async let sign = Self.gate(slowing: "sign", in: folder)
        for (step, result) in try await [("decode", decode), ("sign", sign)] {
            #expect(result.status == 2, "\(step): exit \(result.status)")
            // Both suites' step is named; an exchange may be (it holds the step); nothing else.
            #expect(result.flagged.contains("x25519 \(step)") && result.flagged.contains("rsa-modern \(step)"), "\(result.flagged)")
            let others = result.flagged.filter { !$0.hasSuffix(" \(step)") && !$0.hasSuffix(" exchange") }
            #expect(others.isEmpty, "\(step): also flagged \(others)")
        }
    }
}
