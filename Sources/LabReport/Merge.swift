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
    }

    /// Merges `runs`, each named by `sources` in errors; they must be of one scenario.
    public static func merge(_ runs: [RunResult], sources: [String]) throws -> Merged {
        guard let first = runs.first else { throw LabError(.invalidScenario, "Nothing to merge") }
        var notes: [String] = []
        for (run, source) in zip(runs, sources).dropFirst() where run.scenarioText != first.scenarioText {
            throw LabError(
                .invalidScenario,
                "\(source) ran another scenario ('\(run.metadata.scenario)') than \(sources[0]) ('\(first.metadata.scenario)'): only shards of one scenario merge"
            )
        }
        // Shards: each at most once, all of the same N.
        let shards = runs.compactMap { $0.metadata.shard }
        if !shards.isEmpty {
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
            let totals = Set(shards.compactMap { $0.split(separator: "/").last.map(String.init) })
            guard totals.count == 1, let total = totals.first, let count = Int(total) else {
                throw LabError(
                    .invalidScenario,
                    "The shards are of different splits: \(shards.joined(separator: ", "))"
                )
            }
            let missing = (1...max(count, 1)).map { "\($0)/\(count)" }.filter { !seen.contains($0) }
            if !missing.isEmpty {
                notes.append("Shards missing: \(missing.joined(separator: ", ")); the merge covers only the others.")
            }
        }
        var groups: [GroupKey: GroupResult] = [:]
        let withServer = runs.filter { $0.groups.contains(where: \.isServerSide) }.count
        for run in runs {
            for group in run.groups {
                // Shards against one server each fetched the server's work during their own
                // window, which holds the other shards' requests too: summing would count them twice.
                if group.isServerSide, withServer > 1 { continue }
                if groups[group.key] == nil {
                    groups[group.key] = group
                } else {
                    groups[group.key]!.merge(group)
                }
            }
        }
        if withServer > 1 {
            notes.append(
                "The server groups are left out: each shard's covers the whole server during its window, other shards' requests included. `lab serve --report` gives the server's totals."
            )
        }
        // The measured window is the union of the runs' windows (each ends at start + total).
        let starts = runs.map { $0.metadata.startedAt.timeIntervalSince1970 }
        let ends = runs.map { $0.metadata.startedAt.timeIntervalSince1970 + Double($0.totalNanoseconds) / 1e9 }
        let measuredStarts = zip(runs, ends).map { run, end in end - Double(run.measuredNanoseconds) / 1e9 }
        func nanoseconds(_ seconds: Double) -> UInt64 { UInt64(max(0, seconds * 1e9).rounded()) }
        var metadata = first.metadata
        metadata.startedAt = runs.map(\.metadata.startedAt).min()!
        metadata.clients = runs.reduce(0) { $0 + $1.metadata.clients }
        metadata.shard = nil
        metadata.serverSide = withServer > 1 ? nil : runs.compactMap(\.metadata.serverSide).first
        let hosts = runs.map(\.metadata.machine.hostname).reduce(into: [String]()) { hosts, host in
            if !hosts.contains(host) { hosts.append(host) }
        }
        let merged =
            "Merged from \(runs.count) results"
            + (shards.isEmpty ? "" : " (shards \(shards.sorted().joined(separator: ", ")))")
            + " run on \(hosts.joined(separator: ", "))."
        metadata.description = [first.metadata.description, merged].filter { !$0.isEmpty }.joined(separator: " ")
        let planned = runs.map(\.plannedIterations)
        let result = RunResult(
            metadata: metadata,
            scenarioText: first.scenarioText,
            groups: Array(groups.values),
            measuredNanoseconds: nanoseconds(ends.max()! - measuredStarts.min()!),
            totalNanoseconds: nanoseconds(ends.max()! - starts.min()!),
            plannedIterations: planned.contains(nil) ? nil : planned.reduce(0) { $0 + $1! },
            completedIterations: runs.reduce(0) { $0 + $1.completedIterations },
            warmupIterations: runs.reduce(0) { $0 + $1.warmupIterations },
            stoppedByDeadline: runs.contains(where: \.stoppedByDeadline)
        )
        return Merged(result: result, notes: notes)
    }
}
