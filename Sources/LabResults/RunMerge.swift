import Foundation
import LabCore

/// Combines the results of shards of one scenario (`lab run --shard K/N`, `lab merge`):
/// groups with the same key merge exactly (histograms added bucket by bucket, counts summed),
/// so every percentile of the merge is that of the pooled samples.
public enum RunMerge {
    /// The merge, and what the reader should know about it.
    public struct Merged: Sendable {
        /// The combined run; thresholds are left for the caller to evaluate.
        public var result: RunResult
        /// Notes for the reader (missing shards, left-out server groups).
        public var notes: [String]
        /// The shards of the split that were not given (`2/4`), in order; empty for whole runs.
        public var missingShards: [String] = []
    }

    /// Merges `runs`, each named by `sources` in errors; they must be of one scenario.
    /// `failed`: the shards given that did not finish (`Input.failed`), recorded in the
    /// merge, which is then not the whole run; they are not missing.
    public static func merge(_ runs: [RunResult], sources: [String], failed: [FailedShard] = []) throws -> Merged {
        guard let first = runs.first else { throw LabError(.invalidScenario, "Nothing to merge") }
        for (run, source) in zip(runs, sources).dropFirst() where run.scenarioText != first.scenarioText {
            throw LabError(
                .invalidScenario,
                "\(source) ran another scenario ('\(run.metadata.scenario)') than \(sources[0]) ('\(first.metadata.scenario)'): only shards of one scenario merge"
            )
        }
        let shards = runs.compactMap { $0.metadata.shard }
        let missingShards = try Self.missingShards(runs, sources: sources, failed: failed)
        var notes =
            missingShards.isEmpty
            ? [] : ["Shards missing: \(missingShards.joined(separator: ", ")); the merge covers only the others."]
        let runId = try Self.runId(runs, sources: sources)
        // Each run against one server fetched the server's work during its own window, which
        // holds every other run's requests too: merged, they would count them twice or more.
        let dropServer = runs.count > 1 && runs.contains { $0.groups.contains(where: \.isServerSide) }
        let groups = Self.groups(runs, dropServer: dropServer)
        if dropServer {
            notes.append(
                "The server groups are left out: each run's covers the whole server during its window, other runs' requests included. `lab serve --report` gives the server's totals."
            )
        }
        let windows = runs.map(Self.window).sorted { $0.start < $1.start }
        let union = Self.unionLength(windows)
        let hosts = Self.hosts(runs)
        let metadata = Self.metadata(
            runs,
            runId: runId,
            dropServer: dropServer,
            firstWindow: windows.first?.start,
            hosts: hosts
        )
        var result = Self.result(runs, metadata: metadata, groups: groups, measured: union, ends: windows.map(\.end))
        result.metadata.failedShards = failed.isEmpty ? nil : failed
        result.metadata.shardWindows = Self.shardWindows(runs)
        if shards.count > 1 { result.metadata.shardWindowOverlap = Self.overlap(windows) }
        // Every shard's calibration samples, if all ran on one machine; rounds do not merge
        // (each shard met at its own barriers).
        result.calibration = Self.calibration(runs, oneHost: hosts.count == 1)
        let (intervals, intervalNote) = try Self.intervals(runs, sources: sources, shards: !shards.isEmpty)
        result.intervals = intervals
        if let intervalNote { notes.append(intervalNote) }
        // Each process's heap: snapshots add up, so per-client figures are the pooled ones.
        result.memory = RunMemory.merged(runs.compactMap(\.memory))
        if result.memory != nil, runs.contains(where: { $0.memory == nil }) {
            result.memory = nil
            notes.append("The memory block is left out: not every run measured its heap.")
        }
        // Shards of one run share their stages; whole runs pooled together keep them only if alike.
        if let stages = runs.first?.stages, runs.allSatisfy({ $0.stages == stages }), result.intervals != nil {
            result.stages = stages
        }
        // CPU adds up over the processes; how busy each one's cores were does not.
        let cpus = runs.compactMap(\.cpu)
        if cpus.count == runs.count, var cpu = cpus.first {
            for other in cpus.dropFirst() { cpu.merge(other) }
            result.cpu = cpu
        } else if !cpus.isEmpty {
            notes.append("The CPU block is left out: not every run measured its CPU time.")
        }
        return Merged(result: result, notes: notes, missingShards: missingShards)
    }

    /// The runs' hosts, each once, in order of first appearance.
    private static func hosts(_ runs: [RunResult]) -> [String] {
        runs.map(\.metadata.machine.hostname).reduce(into: [String]()) { hosts, host in
            if !hosts.contains(host) { hosts.append(host) }
        }
    }

    /// Every run's calibration samples, if all ran on one host; nil otherwise.
    private static func calibration(_ runs: [RunResult], oneHost: Bool) -> Calibration? {
        let calibrations = runs.compactMap(\.calibration)
        guard oneHost, let calibration = calibrations.first else { return nil }
        return Calibration(provider: calibration.provider, samples: calibrations.flatMap(\.samples))
    }

    /// The merge's metadata: the first run's, with what the runs add up to or agree on.
    private static func metadata(
        _ runs: [RunResult],
        runId: String?,
        dropServer: Bool,
        firstWindow: Double?,
        hosts: [String]
    ) -> RunMetadata {
        let first = runs[0]
        let shards = runs.compactMap { $0.metadata.shard }
        var metadata = first.metadata
        metadata.startedAt = runs.map(\.metadata.startedAt).min()!
        metadata.clients = runs.reduce(0) { $0 + $1.metadata.clients }
        metadata.shard = nil
        metadata.runId = runId
        let starts = runs.compactMap(\.metadata.clientsStartedAt)
        metadata.clientsStartedAt = starts.min()
        if shards.count > 1, starts.count == runs.count, let first = starts.min(), let last = starts.max() {
            metadata.shardStartSpread = last.timeIntervalSince(first)
        }
        // The lab, if every run names the same one; the tags every run has.
        metadata.lab = runs.allSatisfy { $0.metadata.lab == first.metadata.lab } ? first.metadata.lab : nil
        metadata.tags = first.metadata.tags?.filter { tag in
            runs.allSatisfy { $0.metadata.tags?[tag.key] == tag.value }
        }
        metadata.serverSide = dropServer ? nil : first.metadata.serverSide
        metadata.measuredFrom = firstWindow.map { Date(timeIntervalSince1970: $0) }
        metadata.description = Self.description(first.metadata.description, runs: runs.count, shards: shards, hosts: hosts)
        return metadata
    }

    /// The shards' intervals on one time line (`RunIntervals.merged`: on the wall clock, each
    /// shard moved to the nearest interval of the earliest one's grid), and a note when that
    /// moved any by more than a tenth of an interval or when intervals are left out. Whole
    /// runs pooled into one ran at different times: their intervals are left out.
    private static func intervals(
        _ runs: [RunResult],
        sources: [String],
        shards: Bool
    ) throws -> (RunIntervals?, String?) {
        let kept = runs.compactMap(\.intervals)
        guard !kept.isEmpty else { return (nil, nil) }
        guard runs.count == 1 || shards else {
            return (
                nil,
                "The intervals are left out: whole runs ran at different times, and only shards of one run share a time line."
            )
        }
        guard kept.count == runs.count else {
            let without = zip(runs, sources).filter { $0.0.intervals == nil }.map(\.1)
            return (
                nil,
                "The intervals are left out: \(without.joined(separator: ", ")) kept none (report.interval 0, a counted run, or an older lab)."
            )
        }
        guard Set(kept.map(\.width)).count == 1 else {
            let widths = zip(kept, sources).map { "\($1): \(TimeSpan(nanoseconds: $0.width))" }
            return (
                nil,
                "The intervals are left out: the shards' intervals are of different widths (\(widths.joined(separator: ", "))); give every shard the same report.interval."
            )
        }
        let (merged, offset) = try RunIntervals.merged(kept, sources: sources)
        guard offset > Double(merged.width) / 1e9 / 10 else { return (merged, nil) }
        return (
            merged,
            "The shards' intervals were put on one grid to the nearest interval: samples moved by up to \(TimeSpan.format(nanoseconds: offset * 1e9)) (shards started with one `lab run --start-at` share one grid)."
        )
    }

    /// The shards' run id: shards that have one must all have the same (the shards of one run,
    /// given one `--run-id`), so that last run's shards never merge into this one's; a shard
    /// without one merges with any. Whole runs (repeats pooled into one) keep their own ids,
    /// and the merge has none.
    private static func runId(_ runs: [RunResult], sources: [String]) throws -> String? {
        guard runs.allSatisfy({ $0.metadata.shard != nil }) else { return nil }
        let named = zip(runs, sources).compactMap { run, source in run.metadata.runId.map { ($0, source) } }
        guard let (id, source) = named.first else { return nil }
        if let (other, otherSource) = named.first(where: { $0.0 != id }) {
            throw LabError(
                .invalidScenario,
                "\(otherSource) belongs to run '\(other)', \(source) to run '\(id)': only shards of one run merge (give every shard the same --run-id)"
            )
        }
        return id
    }

    /// Every run's groups, those of one key merged into one; the server's groups left out
    /// when `dropServer`.
    private static func groups(_ runs: [RunResult], dropServer: Bool) -> [GroupKey: GroupResult] {
        var groups: [GroupKey: GroupResult] = [:]
        for run in runs {
            for group in run.groups where !(group.isServerSide && dropServer) {
                if groups[group.key] == nil {
                    groups[group.key] = group
                } else {
                    groups[group.key]!.merge(group)
                }
            }
        }
        return groups
    }

    /// The merged result's figures: the measured time is the union of the runs' windows, the
    /// total from the first start to the last end; iterations and clients add up.
    private static func result(
        _ runs: [RunResult],
        metadata: RunMetadata,
        groups: [GroupKey: GroupResult],
        measured union: Double,
        ends: [Double]
    ) -> RunResult {
        let starts = runs.map { $0.metadata.startedAt.timeIntervalSince1970 }
        func nanoseconds(_ seconds: Double) -> UInt64 { UInt64(max(0, seconds * 1e9).rounded()) }
        let planned = runs.map(\.plannedIterations)
        return RunResult(
            metadata: metadata,
            scenarioText: runs[0].scenarioText,
            groups: Array(groups.values),
            measuredNanoseconds: nanoseconds(union),
            totalNanoseconds: nanoseconds(ends.max()! - starts.min()!),
            plannedIterations: planned.contains(nil) ? nil : planned.reduce(0) { $0 + $1! },
            completedIterations: runs.reduce(0) { $0 + $1.completedIterations },
            warmupIterations: runs.reduce(0) { $0 + $1.warmupIterations },
            stoppedByDeadline: runs.contains(where: \.stoppedByDeadline)
        )
    }

    /// The first run's description, and where the merge comes from.
    private static func description(_ first: String, runs: Int, shards: [String], hosts: [String]) -> String {
        let merged =
            "Merged from \(runs) results"
            + (shards.isEmpty ? "" : " (shards \(shards.sorted().joined(separator: ", ")))")
            + " run on \(hosts.joined(separator: ", "))."
        return [first, merged].filter { !$0.isEmpty }.joined(separator: " ")
    }

    /// Shards: each at most once, all of the same N (or no shard at all). Returns the shards
    /// missing.
    private static func missingShards(
        _ runs: [RunResult],
        sources: [String],
        failed: [FailedShard]
    ) throws -> [String] {
        let shards = runs.compactMap { $0.metadata.shard } + failed.map(\.shard)
        guard !shards.isEmpty else { return [] }
        var seen: Set<String> = []
        for (run, source) in zip(runs, sources) {
            guard let shard = run.metadata.shard else {
                throw LabError(
                    .invalidScenario,
                    "\(source) is a whole run, the others are shards: merge shards only"
                )
            }
            guard seen.insert(shard).inserted else {
                throw LabError(.invalidScenario, "\(source) is shard \(shard) again: each shard merges once")
            }
        }
        for shard in failed where !seen.insert(shard.shard).inserted {
            throw LabError(.invalidScenario, "shard \(shard.shard) is given twice: each shard merges once")
        }
        let totals = Set(shards.compactMap { $0.split(separator: "/").last.map(String.init) })
        guard totals.count == 1, let total = totals.first, let count = Int(total) else {
            throw LabError(
                .invalidScenario,
                "The shards are of different splits: \(shards.joined(separator: ", "))"
            )
        }
        return (1...max(count, 1)).map { "\($0)/\(count)" }.filter { !seen.contains($0) }
    }
}
