import Foundation
import LabCore
import LabResults
import LabTestSupport
import Testing

/// Shards of a merge: how well their measured windows overlap, and the shards that failed,
/// read from their folders' shard.json.
@Suite(.tier(.unit)) struct ShardRecordTests {
    /// A shard `K/N` of 10 iterations on `host`, measured for `seconds` from `from` (seconds since 1970).
    static func shard(_ shard: String, host: String, from: Double, seconds: Double) -> RunResult {
        var result = OutcomeTests.result([])
        result.metadata.shard = shard
        result.metadata.machine.hostname = host
        result.metadata.measuredFrom = Date(timeIntervalSince1970: from)
        result.metadata.clientsStartedAt = Date(timeIntervalSince1970: from)
        result.measuredNanoseconds = UInt64(seconds * 1e9)
        return result
    }

    @Test("Overlap is the windows' intersection ÷ their union: [0,10] and [1,10] 0.9; apart 0")
    func overlap() {
        #expect(abs(RunMerge.overlap([(0, 10), (1, 10)]) - 0.9) < 1e-12)
        #expect(RunMerge.overlap([(0, 10), (0, 10), (0, 10)]) == 1)
        #expect(abs(RunMerge.overlap([(0, 4), (2, 6), (3, 10)]) - 0.1) < 1e-12)
        #expect(RunMerge.overlap([(0, 1), (2, 3)]) == 0, "disjoint")
        #expect(RunMerge.overlap([(0, 1), (1, 3)]) == 0, "touching")
        #expect(RunMerge.overlap([]) == 0)
        #expect(RunMerge.unionLength([(2, 3), (0, 1), (0.5, 1.5)]) == 2.5)
    }

    @Test("A merge records each shard's window in shard order, their overlap, and the failed shard, not as missing")
    func mergeRecordsWindowsAndFailures() throws {
        let failed = FailedShard(shard: "3/3", host: "lab-c", reason: "stopped by SIGTERM")
        let merged = try RunMerge.merge(
            [
                Self.shard("2/3", host: "lab-b", from: 101, seconds: 9),
                Self.shard("1/3", host: "lab-a", from: 100, seconds: 10),
            ],
            sources: ["b", "a"],
            failed: [failed]
        )
        #expect(merged.missingShards.isEmpty)
        let metadata = merged.result.metadata
        #expect(metadata.failedShards == [failed])
        #expect(!merged.result.passed, "a merge with a failed shard fails")
        let windows = try #require(metadata.shardWindows)
        #expect(windows.map(\.shard) == ["1/3", "2/3"] && windows.map(\.host) == ["lab-a", "lab-b"])
        #expect(windows.map(\.iterations) == [10, 10])
        #expect(windows[1].measuredFrom == Date(timeIntervalSince1970: 101))
        #expect(windows[1].measuredTo == Date(timeIntervalSince1970: 110))
        #expect(abs((metadata.shardWindowOverlap ?? -1) - 0.9) < 1e-9)
        // The whole run, given whole: nothing failed, it passes.
        let whole = try RunMerge.merge(
            [Self.shard("1/2", host: "a", from: 0, seconds: 1), Self.shard("2/2", host: "a", from: 2, seconds: 1)],
            sources: ["a", "b"]
        )
        #expect(whole.result.metadata.failedShards == nil && whole.result.passed)
        #expect(whole.result.metadata.shardWindowOverlap == 0)
        // A failed shard given beside a good copy of itself is refused.
        #expect(throws: LabError.self) {
            try RunMerge.merge(
                [Self.shard("1/2", host: "a", from: 0, seconds: 1)],
                sources: ["a"],
                failed: [
                    FailedShard(shard: "1/2", host: "a", reason: "x")
                ]
            )
        }
    }

    /// A fresh folder holding `record` as shard.json and, if given, `results` as results.json.
    static func folder(record: String?, results: RunResult?) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("shard-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        if let record { try Data(record.utf8).write(to: folder.appendingPathComponent(ShardRecord.fileName)) }
        if let results { try results.jsonData().write(to: folder.appendingPathComponent("results.json")) }
        return folder
    }

    static func record(_ state: String, extra: String = "") -> String {
        #"{"format":"crypto-lab/shard/1","shard":"2/2","host":"lab-b","pid":4242,"began":"2026-11-28T10:00:00.250Z","state":"\#(state)"\#(extra)}"#
    }

    @Test("A folder's shard.json names a shard that failed, was stopped or was killed; a finished one merges")
    func failedShardsFromRecords() throws {
        let results = Self.shard("2/2", host: "lab-b", from: 0, seconds: 1)
        let cases: [(record: String?, results: RunResult?, failure: String?)] = [
            (
                Self.record("running"), nil,
                "shard 2/2 on lab-b: did not finish: no results.json (began 2026-11-28T10:00:00.250Z, pid 4242; killed?)"
            ),
            (
                Self.record("failed", extra: #","reason":"Cannot connect to lab-serve:7000","exitCode":3"#), nil,
                "shard 2/2 on lab-b: Cannot connect to lab-serve:7000"
            ),
            (
                Self.record("stopped", extra: #","reason":"stopped by SIGTERM","exitCode":143"#), results,
                "shard 2/2 on lab-b: stopped by SIGTERM"
            ),
            (
                Self.record("finished", extra: #","exitCode":0"#), nil,
                "shard 2/2 on lab-b: finished, but its folder holds no results.json"
            ),
            (Self.record("finished", extra: #","exitCode":0"#), results, nil),
            (nil, results, nil),
        ]
        for (record, given, expected) in cases {
            let folder = try Self.folder(record: record, results: given)
            defer { try? FileManager.default.removeItem(at: folder) }
            switch try RunMerge.Input.read(folder.appendingPathComponent("results.json")) {
            case .failed(let shard): #expect(shard.description == expected, "\(record ?? "no record")")
            case .results(let result):
                #expect(expected == nil, "\(record ?? "no record") merged")
                #expect(result.metadata.shard == "2/2")
            }
        }
        // The record's own path names its folder too.
        let killed = try Self.folder(record: Self.record("running"), results: nil)
        defer { try? FileManager.default.removeItem(at: killed) }
        if case .results = try RunMerge.Input.read(killed.appendingPathComponent(ShardRecord.fileName)) {
            Issue.record("a killed shard's shard.json read as results")
        }
        // Neither file: an input error, as before shard records.
        let empty = try Self.folder(record: nil, results: nil)
        defer { try? FileManager.default.removeItem(at: empty) }
        #expect(throws: LabError.self) { try RunMerge.Input.read(empty.appendingPathComponent("results.json")) }
    }

    @Test("shard.json round-trips, and a record ended once keeps its reason only when it did not finish")
    func recordRoundTrips() throws {
        let began = Date(timeIntervalSince1970: 1_800_000_000.125)
        let record = ShardRecord(shard: "1/2", runId: "r", host: "h", pid: 7, began: began)
        let stopped = record.ended(.stopped, reason: "stopped by SIGTERM", exitCode: 143)
        let folder = try Self.folder(record: String(decoding: try stopped.jsonData(), as: UTF8.self), results: nil)
        defer { try? FileManager.default.removeItem(at: folder) }
        let read = try ShardRecord.read(from: folder.appendingPathComponent(ShardRecord.fileName))
        #expect(read == stopped && read.state == .stopped && read.exitCode == 143)
        #expect(record.ended(.finished, reason: "ignored", exitCode: 0).reason == nil)
        let running = String(decoding: try record.jsonData(), as: UTF8.self)
        #expect(!running.contains("exitCode") && !running.contains("reason"), "\(running)")
    }
}
