import Foundation
import LabTestSupport
import Testing

/// Which lab made a run: `lab --version`, and the provenance in results.json and report.md,
/// each checked against a source the lab does not write (git, Package.resolved).
@Suite(.tier(.integration)) struct ProvenanceTests {
    static func git(_ arguments: [String]) async throws -> String {
        let outcome = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["git", "-C", RepositoryPaths.root.path] + arguments
        )
        try #require(outcome.status == 0, "git \(arguments): \(outcome.errors)")
        return outcome.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Whether `commit` (in full, or its first 12 digits) is the one git had checked out when
    /// `lab` was built. HEAD now, unless a commit was made after the build (a developer's
    /// tree, not CI's clean clone): then the build's commit is an ancestor of HEAD and every
    /// commit after it is younger than the lab binary. A build that named a stale commit
    /// (HEAD moved before the build) fails that: the commit after it predates the binary.
    static func expectBuiltFrom(_ commit: String) async throws {
        let head = try await Self.git(["rev-parse", "HEAD"])
        if commit.count >= 12 && head.hasPrefix(commit) { return }
        let full = try await Self.git(["rev-parse", "--verify", "\(commit)^{commit}"])
        let after = try await Self.git(["rev-list", "--reverse", "--ancestry-path", "\(full)..HEAD"])
            .split(separator: "\n").first.map(String.init)
        let next = try #require(after, "lab names commit \(commit), not HEAD \(head) nor one of its ancestors")
        let committed = try #require(Double(try await Self.git(["log", "-1", "--format=%ct", next])))
        let built = try FileManager.default.attributesOfItem(atPath: CLITests.lab.path)[.modificationDate] as? Date
        let binary = try #require(built?.timeIntervalSince1970)
        #expect(
            committed >= binary.rounded(.down),
            "lab names \(commit), but \(next), after it, was committed before lab was built: the build missed HEAD \(head)"
        )
    }

    /// swift-crypto's version as the package graph resolved it, from Package.resolved.
    static func resolvedSwiftCrypto() throws -> String {
        let data = try Data(contentsOf: RepositoryPaths.root.appendingPathComponent("Package.resolved"))
        let pins = (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["pins"] as? [[String: Any]] ?? []
        let pin = try #require(
            pins.first { $0["identity"] as? String == "swift-crypto" },
            "swift-crypto in Package.resolved"
        )
        return try #require((pin["state"] as? [String: Any])?["version"] as? String)
    }

    @Test("lab --version: the version, the commit git has checked out, the toolchain, swift-crypto's resolved version")
    func versionNamesTheCommit() async throws {
        let version = try await CLITests.lab(["--version"])
        #expect(version.status == 0, "\(version.errors)")
        let lines = version.output.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("lab ") == true, "\(lines)")
        let named = try #require(
            lines.first?.firstRange(of: "commit ").map { lines[0][$0.upperBound...].prefix { $0.isHexDigit } },
            "\(lines)"
        )
        #expect(named.count == 12, "\(lines)")
        try await Self.expectBuiltFrom(String(named))
        #expect(lines.contains { $0.hasPrefix("built with Swift version ") }, "\(lines)")
        #expect(lines.contains("swift-crypto \(try Self.resolvedSwiftCrypto())"), "\(lines)")
    }

    @Test("results.json and report.md say which lab ran, with the run's id, its tags and the real swift-crypto version")
    func resultsCarryProvenance() async throws {
        let out = try CLITests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: out) }
        let run = try await CLITests.lab([
            "run", "Scenarios/quickstart.json", "--quiet", "--out", out.path, "--run-id", "nightly-42", "--tag",
            "branch=main", "--tag", "pr=12",
        ])
        // Provenance, not speed: the quickstart's p99 threshold (50 ms) may be missed by a debug
        // build on a loaded machine (60 ms beside the integration pass, 2026-11-26), which exits
        // 2 after writing every report all the same.
        #expect(run.status == 0 || run.status == 2, "\(run.errors)")
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("results.json")))
                as? [String: Any]
        )
        let metadata = try #require(document["metadata"] as? [String: Any])
        let lab = try #require(metadata["lab"] as? [String: Any])
        let commit = try #require(lab["commit"] as? String, "\(lab)")
        #expect(commit.count == 40, "\(lab)")
        try await Self.expectBuiltFrom(commit)
        #expect((lab["toolchain"] as? String)?.hasPrefix("Swift version ") == true, "\(lab)")
        #expect(metadata["runId"] as? String == "nightly-42")
        #expect(metadata["tags"] as? [String: String] == ["branch": "main", "pr": "12"])
        let providers = metadata["providers"] as? [[String: String]] ?? []
        let crypto = providers.first { $0["name"] == "swift-crypto" }?["version"]
        #expect(crypto == "swift-crypto \(try Self.resolvedSwiftCrypto()) (BoringSSL)", "\(providers)")

        let report = try String(contentsOf: out.appendingPathComponent("report.md"), encoding: .utf8)
        #expect(report.contains("| Run id | `nightly-42` |"), "\(report.prefix(2000))")
        #expect(report.contains("| Tags | `branch=main`, `pr=12` |"))
        #expect(report.contains("| Lab | \(lab["version"] as? String ?? "?"), commit "))

        // Without --run-id, each run gets an id of its own.
        let again = try await CLITests.lab(["run", "Scenarios/quickstart.json", "--quiet", "--out", out.path + "/2"])
        #expect([0, 2].contains(again.status), "\(again.errors)")
        let other = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("2/results.json")))
                as? [String: Any]
        )
        let id = (other["metadata"] as? [String: Any])?["runId"] as? String
        #expect(id != nil && id != "nightly-42" && UUID(uuidString: id ?? "") != nil, "\(String(describing: id))")
    }

    @Test("Bad --run-id and --tag values are refused with exit 1 before the run")
    func badValuesAreRefused() async throws {
        for arguments in [
            ["--tag", "noequals"], ["--tag", "=x"], ["--tag", "a b=c"], ["--tag", "k=1", "--tag", "k=2"],
            ["--run-id", "a b"],
        ] {
            let refused = try await CLITests.lab(["run", "no-such-scenario.json", "--quiet"] + arguments)
            #expect(refused.status == 1, "\(arguments): \(refused.errors)")
            #expect(
                !refused.errors.contains("no-such-scenario"),
                "\(arguments) was not refused first: \(refused.errors)"
            )
        }
    }
}
