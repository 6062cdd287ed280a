import Foundation
import LabReport
import LabResults
import LabTestSupport
import Testing

/// Shards that do not finish, as a scheduler leaves them: killed (SIGKILL), stopped
/// (SIGTERM, a cancel or a time limit) or unable to reach the server; each says so in its
/// shard.json, and `lab merge` fails the whole, naming it.
@Suite(.tier(.load)) struct ShardFailureTests {
    /// `lab run FILE --shard K/N --out OUT ARGUMENTS…` started in the background, with the
    /// signals a shell would let through.
    static func start(_ file: URL, shard: String, out: URL, _ arguments: [String]) throws -> ServerProcess {
        try ServerProcess(LabProcess.executable, ["run", file.path, "--shard", shard, "--out", out.path] + arguments)
    }

    /// `--start-at` 30 s from now, and that instant.
    static func startAt() -> (argument: String, date: Date) {
        let date = Date().addingTimeInterval(30)
        return (String(format: "%.3f", date.timeIntervalSince1970), date)
    }

    static func record(_ folder: URL) throws -> ShardRecord {
        try ShardRecord.read(from: folder.appendingPathComponent(ShardRecord.fileName))
    }

    /// Waits for the shard to hold its clients for --start-at.
    static func holding(_ process: ServerProcess) async throws {
        _ = try await process.errorLine(described: "the hold for --start-at", timeout: .seconds(60)) {
            $0.contains("holding the clients")
        }
    }

    @Test("A shard killed with SIGKILL fails the merge of the others: exit 1, the shard named on stderr and in the reports")
    func killedShardFailsTheMerge() async throws {
        let folder = try CLITests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("shard-check.json")
        try ShardMergeTests.scenario.write(to: file, atomically: true, encoding: .utf8)
        let first = folder.appendingPathComponent("1")
        let second = folder.appendingPathComponent("2")
        let done = try await CLITests.lab(["run", file.path, "--shard", "1/2", "--out", first.path, "--quiet"])
        #expect(done.status == 0, "\(done.errors)")
        #expect(try Self.record(first).state == .finished && (try Self.record(first).exitCode) == 0)
        let killed = try Self.start(file, shard: "2/2", out: second, ["--start-at", Self.startAt().argument, "--quiet"])
        try await Self.holding(killed)
        let status = try await killed.stop(signal: SIGKILL, timeout: .seconds(30))
        #expect(status == SIGKILL, "killed, not exited")
        let left = try Self.record(second)
        #expect(left.state == .running && left.pid == Int(killed.pid) && left.shard == "2/2", "\(left)")
        #expect(!FileManager.default.fileExists(atPath: second.appendingPathComponent("results.json").path))

        let merged = folder.appendingPathComponent("merged")
        let merge = try await CLITests.lab(["merge", first.path, second.path, "--out", merged.path])
        #expect(merge.status == 1, "a failed shard fails the merge: \(merge.errors)")
        #expect(merge.errors.contains("failed shard: shard 2/2 on \(left.host): did not finish: no results.json"), "\(merge.errors)")
        #expect(!merge.errors.contains("Shards missing"), "a failed shard is not a missing one: \(merge.errors)")
        #expect(merge.output.contains("FAILED: This merge is not the whole run: shard 2/2"), "\(merge.output)")
        let report = try String(contentsOf: merged.appendingPathComponent("report.md"), encoding: .utf8)
        #expect(report.contains("This merge is not the whole run: shard 2/2 on"), "\(report.prefix(600))")
        let html = try String(contentsOf: merged.appendingPathComponent("report.html"), encoding: .utf8)
        #expect(html.contains("data-failed-shards") && html.contains("This merge is not the whole run: shard 2/2"))
        let result = try ShardMergeTests.load(merged)
        #expect(result.metadata.failedShards?.map(\.shard) == ["2/2"])
        #expect(result.metadata.shardWindows?.map(\.shard) == ["1/2"])
        // --allow-partial does not make a failed shard pass.
        let partial = try await CLITests.lab([
            "merge", first.path, second.path, "--out", merged.path, "--replace", "--allow-partial", "--quiet",
        ])
        #expect(partial.status == 1, "\(partial.errors)")
        // Every shard failed: nothing to merge, each named, no reports.
        let none = try await CLITests.lab(["merge", second.path, "--out", folder.path + "/none", "--quiet"])
        #expect(none.status == 1 && none.errors.contains("failed shard: shard 2/2"), "\(none.errors)")
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/none/report.md"))
    }

    @Test("SIGTERM while a shard holds for --start-at: exit 143, shard.json says stopped")
    func stoppedShardSaysSo() async throws {
        let folder = try CLITests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("shard-check.json")
        try ShardMergeTests.scenario.write(to: file, atomically: true, encoding: .utf8)
        let out = folder.appendingPathComponent("1")
        let start = Self.startAt()
        let shard = try Self.start(file, shard: "1/2", out: out, ["--start-at", start.argument, "--quiet"])
        try await Self.holding(shard)
        let status = try await shard.stop(signal: SIGTERM, timeout: .seconds(30))
        #expect(Date() < start.date, "it stopped at once, not at the start")
        #expect(status == 143, "\(shard.errors)")
        let record = try Self.record(out)
        #expect(record.state == .stopped && record.reason == "stopped by SIGTERM" && record.exitCode == 143)
        // The record is the lab's file: a new run there is refused without --replace, naming it.
        let again = try await CLITests.lab(["run", file.path, "--shard", "1/2", "--out", out.path, "--quiet"])
        #expect(again.status == 1 && again.errors.contains("shard.json"), "\(again.errors)")
    }

    @Test("A shard that cannot reach its server fails before its --start-at, its shard.json saying why")
    func unreachableShardFailsFast() async throws {
        let folder = try CLITests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("unreachable.json")
        // Port 9 (discard): nothing listens on this machine's loopback.
        try #"""
        {
          "name": "shard-unreachable",
          "server": { "transport": "tcp", "address": "127.0.0.1:9" },
          "clients": { "count": 4 },
          "load": { "model": "closed", "iterations": 5 },
          "flows": [ { "flow": "cx", "suite": "x25519" } ]
        }
        """#.write(to: file, atomically: true, encoding: .utf8)
        let out = folder.appendingPathComponent("1")
        let start = Self.startAt()
        let run = try await CLITests.lab([
            "run", file.path, "--shard", "1/2", "--start-at", start.argument, "--out", out.path, "--quiet",
        ])
        #expect(Date() < start.date, "it failed before its start")
        #expect(run.status == 3 && run.errors.contains("Cannot connect to 127.0.0.1:9"), "\(run.errors)")
        let record = try Self.record(out)
        #expect(record.state == .failed && record.exitCode == 3, "\(record)")
        #expect(record.reason?.hasPrefix("Cannot connect to 127.0.0.1:9") == true, "\(record)")
        let listed = try String(contentsOf: out.appendingPathComponent(".lab-files"), encoding: .utf8)
        #expect(listed.contains("shard.json"), "--replace removes it: \(listed)")
    }
}
