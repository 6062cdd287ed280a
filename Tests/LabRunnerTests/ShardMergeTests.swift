import Foundation
import Histogram
import LabCore
import LabReport
import LabResults
import LabTestSupport
import Testing

/// `lab run --shard K/N` and `lab merge`, as a user runs them: N shards merged are the
/// unsharded run, count for count, and their percentiles are the pooled samples'.
@Suite(.tier(.load)) struct ShardMergeTests {
    static let scenario = #"""
        {
          "name": "shard-check",
          "server": { "transport": "in-process" },
          "clients": { "count": 10 },
          "load": { "model": "closed", "iterations": 12, "warmupIterations": 2 },
          "flows": [
            { "flow": "cx", "suite": "x25519", "provider": "swift-crypto", "weight": 3 },
            { "flow": "cx", "suite": "x25519", "provider": "openssl", "weight": 1 }
          ],
          "thresholds": { "errors": "== 0", "cx.exchange.count": ">= 120" }
        }
        """#

    static func load(_ folder: URL) throws -> RunResult {
        try RunResult.decode(Data(contentsOf: folder.appendingPathComponent("results.json")))
    }

    @Test("4 shards merged: the unsharded run's counts, and the pooled histogram's percentiles exactly")
    func shardsMergeExactly() async throws {
        let folder = try CLITests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("shard-check.json")
        try Self.scenario.write(to: file, atomically: true, encoding: .utf8)

        let whole = folder.appendingPathComponent("whole")
        let unsharded = try await CLITests.lab(["run", file.path, "--out", whole.path, "--quiet"])
        #expect(unsharded.status == 0, "\(unsharded.errors)")
        var shards: [URL] = []
        for index in 1...4 {
            let out = folder.appendingPathComponent("shard-\(index)")
            let run = try await CLITests.lab(["run", file.path, "--shard", "\(index)/4", "--out", out.path, "--quiet"])
            #expect(run.status == 0, "shard \(index): \(run.errors)")
            shards.append(out)
        }
        let mergedFolder = folder.appendingPathComponent("merged")
        let merge = try await CLITests.lab(["merge"] + shards.map(\.path) + ["--out", mergedFolder.path, "--quiet"])
        #expect(merge.status == 0, "\(merge.errors)")

        let reference = try Self.load(whole)
        let parts = try shards.map(Self.load)
        let merged = try Self.load(mergedFolder)
        // The slices: 10 clients as 3, 3, 2, 2, every fourth from the shard's own (0, 4, 8; 1, 5, 9; …).
        #expect(parts.map(\.metadata.clients) == [3, 3, 2, 2])
        #expect(parts.map(\.metadata.shard) == ["1/4", "2/4", "3/4", "4/4"])
        #expect(parts.map(\.completedIterations).reduce(0, +) == 120)
        let judged = parts.filter { !$0.thresholds.isEmpty }.count
        #expect(judged == 0, "a shard is judged on the merge")
        #expect(merged.metadata.clients == 10 && merged.metadata.shard == nil)
        #expect(merged.completedIterations == reference.completedIterations)
        #expect(merged.plannedIterations == reference.plannedIterations)
        #expect(merged.warmupIterations == reference.warmupIterations)
        #expect(merged.errorCount == 0 && merged.thresholds.allSatisfy(\.passed), "\(merged.thresholds)")
        // Clients keep their seeds: each flow got exactly the unsharded run's share of exchanges.
        #expect(merged.groups.map(\.key) == reference.groups.map(\.key))
        for (group, expected) in zip(merged.groups, reference.groups) {
            #expect(group.iterations == expected.iterations, "\(group.key)")
            #expect(group.orderedSteps.map(\.step) == expected.orderedSteps.map(\.step), "\(group.key)")
            for (entry, other) in zip(group.orderedSteps, expected.orderedSteps) where entry.step != .keygenServer {
                // (`keygen.server` is set-up, once per run: each shard's in-process server made its keys.)
                #expect(entry.step == other.step)
                #expect(entry.histogram.totalCount == other.histogram.totalCount, "\(group.key) \(entry.step)")
            }
        }
        // Percentiles: the merge against every sample of every shard pooled into one histogram.
        for group in merged.groups {
            for (step, histogram) in group.orderedSteps {
                var pooled = Histogram<UInt64>(numberOfSignificantValueDigits: .three)
                for part in parts {
                    guard let samples = part.groups.first(where: { $0.key == group.key })?.steps[step] else { continue }
                    for bucket in SparseHistogram(samples).counts {
                        for _ in 0..<bucket.count { pooled.record(bucket.value) }
                    }
                }
                #expect(histogram.totalCount == pooled.totalCount, "\(group.key) \(step)")
                for percentile in [0.0, 1, 10, 25, 50, 75, 90, 99, 99.9, 100] {
                    #expect(
                        histogram.valueAtPercentile(percentile) == pooled.valueAtPercentile(percentile),
                        "\(group.key) \(step) p\(percentile)"
                    )
                }
                let figures = try #require(merged.statistics(group, step))
                #expect(figures.p50 == Double(pooled.valueAtPercentile(50)))
                #expect(figures.p99 == Double(pooled.valueAtPercentile(99)))
                #expect(figures.max == Double(pooled.maxRecorded))
            }
        }
    }

    @Test("Open model: shards split the schedule, and together plan exactly the unsharded exchanges")
    func openModelShardsSplitTheSchedule() async throws {
        let folder = try CLITests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("open.json")
        try #"""
        {
          "name": "shard-open",
          "clients": { "count": 3 },
          "load": { "model": "open", "rate": 100, "duration": "500 ms", "warmup": "100 ms" },
          "flows": [ { "flow": "cx", "suite": "x25519" } ]
        }
        """#.write(to: file, atomically: true, encoding: .utf8)
        var planned: [Int] = []
        var ran: [Int] = []
        for index in 1...2 {
            let out = folder.appendingPathComponent("shard-\(index)")
            let run = try await CLITests.lab(["run", file.path, "--shard", "\(index)/2", "--out", out.path, "--quiet"])
            #expect(run.status == 0, "\(run.errors)")
            let result = try Self.load(out)
            planned.append(result.plannedIterations ?? -1)
            ran.append(result.completedIterations + result.warmupIterations)
        }
        let whole = folder.appendingPathComponent("whole")
        #expect(try await CLITests.lab(["run", file.path, "--out", whole.path, "--quiet"]).status == 0)
        let unsharded = try Self.load(whole)
        // 50 exchanges, 10 of them in the warm-up; exchange j goes to client j mod 3: the
        // first shard (clients 0 and 2) plans 13 + 13 of the 40 measured, the second (client 1) 14.
        #expect(planned == [26, 14])
        #expect(unsharded.plannedIterations == 40)
        // What the clients actually ran: client 0 takes exchanges 0, 3, …, 48 (17), client 2
        // 2, 5, …, 47 (16), client 1 the other 17; together the unsharded run's 50.
        #expect(ran == [33, 17])
        #expect(unsharded.completedIterations + unsharded.warmupIterations == 50)
    }

    @Test("Bad shards and bad merges are refused with exit 1, naming the problem")
    func badShardsAreRefused() async throws {
        let folder = try CLITests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("shard-check.json")
        try Self.scenario.write(to: file, atomically: true, encoding: .utf8)
        for bad in ["0/4", "5/4", "1/0", "x", "1/11"] {
            let run = try await CLITests.lab([
                "run", file.path, "--shard", bad, "--out", folder.path + "/no", "--quiet",
            ])
            #expect(run.status == 1, "--shard \(bad)")
            #expect(run.errors.contains("--shard"), "\(run.errors)")
        }
        let out = folder.appendingPathComponent("one")
        #expect(try await CLITests.lab(["run", file.path, "--shard", "1/2", "--out", out.path, "--quiet"]).status == 0)
        let twice = try await CLITests.lab(["merge", out.path, out.path, "--out", folder.path + "/m", "--quiet"])
        #expect(twice.status == 1)
        #expect(twice.errors.contains("shard 1/2 again"), "\(twice.errors)")
        let alone = try await CLITests.lab(["merge", out.path, "--out", folder.path + "/m2", "--quiet"])
        #expect(alone.status == 1, "a lost shard is refused: \(alone.errors)")
        #expect(alone.errors.contains("Shards missing: 2/2 (of 2)") && alone.errors.contains("--allow-partial"))
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/m2"), "nothing written")
        let partial = try await CLITests.lab([
            "merge", out.path, "--out", folder.path + "/m3", "--quiet", "--allow-partial",
        ])
        #expect(partial.status == 2, "half the clients miss the scenario's count threshold: \(partial.errors)")
        #expect(partial.errors.contains("threshold missed: cx.exchange.count"))
        #expect(partial.errors.contains("Shards missing: 2/2"), "\(partial.errors)")
    }

    @Test("Four shards launched 0.4 s apart with one --start-at begin within 100 ms of each other")
    func shardsStartTogether() async throws {
        let folder = try CLITests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("start-at.json")
        try Self.scenario.write(to: file, atomically: true, encoding: .utf8)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let startAt = Date().addingTimeInterval(6)
        let stamp = formatter.string(from: startAt)
        let statuses = try await withThrowingTaskGroup(of: Int32.self) { group in
            for k in 1...4 {
                group.addTask {
                    // The skew a fleet has: pods scheduled at different moments (not a wait
                    // for an event: the launches are made to differ by 1.2 s in all).
                    try await Task.sleep(for: .milliseconds(400 * (k - 1)))
                    return try await CLITests.lab([
                        "run", file.path, "--shard", "\(k)/4", "--run-id", "together", "--start-at", stamp, "--out",
                        folder.path + "/\(k)", "--quiet",
                    ]).status
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses == [0, 0, 0, 0])
        let shards = try (1...4).map { try Self.load(folder.appendingPathComponent("\($0)")) }
        for shard in shards {
            let began = try #require(shard.metadata.clientsStartedAt)
            #expect(began.timeIntervalSince(startAt) >= -0.001, "shard \(shard.metadata.shard ?? "?") began early")
        }
        let merge = try await CLITests.lab(
            ["merge"] + (1...4).map { folder.path + "/\($0)" } + ["--out", folder.path + "/m", "--quiet"]
        )
        #expect(merge.status == 0, "\(merge.errors)")
        let merged = try Self.load(folder.appendingPathComponent("m"))
        let spread = try #require(merged.metadata.shardStartSpread)
        #expect(spread < 0.1, "the shards began \(spread) s apart")
        let report = try String(contentsOf: folder.appendingPathComponent("m/report.md"), encoding: .utf8)
        #expect(report.contains("; shards began within "), "the merged report shows it")
        // Four shards of one --start-at measured side by side.
        #expect(merged.metadata.shardWindows?.map(\.shard) == ["1/4", "2/4", "3/4", "4/4"])
        let overlap = try #require(merged.metadata.shardWindowOverlap)
        // (How much depends on this machine: each shard measures for some 10 to 40 ms here.)
        #expect((0...1).contains(overlap), "the shards' windows overlap \(overlap)")
        #expect(report.contains("Measured windows overlap "), "the merged report says how well")
    }

    @Test("Shards of one --run-id merge and keep it; shards of two runs are refused, naming both ids")
    func shardsOfOneRunMerge() async throws {
        let folder = try CLITests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("shard-ids.json")
        try Self.scenario.write(to: file, atomically: true, encoding: .utf8)
        for (shard, id) in [("1/2", "run-a"), ("2/2", "run-a"), ("2/2", "run-b")] {
            let out = folder.appendingPathComponent("\(id)-\(shard.prefix(1))")
            let run = try await CLITests.lab([
                "run", file.path, "--shard", shard, "--run-id", id, "--out", out.path, "--quiet",
            ])
            #expect(run.status == 0, "\(shard) \(id): \(run.errors)")
        }
        let one = try await CLITests.lab([
            "merge", folder.path + "/run-a-1", folder.path + "/run-a-2", "--out", folder.path + "/a", "--quiet",
        ])
        #expect(one.status == 0, "\(one.errors)")
        let merged = try Self.load(folder.appendingPathComponent("a"))
        #expect(merged.metadata.runId == "run-a")
        let mixed = try await CLITests.lab([
            "merge", folder.path + "/run-a-1", folder.path + "/run-b-2", "--out", folder.path + "/mixed", "--quiet",
        ])
        #expect(mixed.status == 1, "\(mixed.errors)")
        #expect(mixed.errors.contains("'run-b'") && mixed.errors.contains("'run-a'"), "\(mixed.errors)")
    }
}
