import Foundation
import LabCore

/// One result from the per-flow processes of a counted run (`lab run --counted`), which
/// counts each flow of the scenario alone, in a process of its own.
public enum CountedFlows {
    /// `results`, one per flow in the scenario's order, as one run: the groups of all, the
    /// iterations and times summed (the flows ran one after another as far as any one of them
    /// could tell), the first process's calibration and heap, each round's groups side by
    /// side. `command` is the command line that asked for the run. Thresholds are left to
    /// the caller, which judges them on the whole.
    public static func combine(_ results: [RunResult], command: String) throws -> RunResult {
        guard var combined = results.first else { throw LabError(.unsupported, "A counted run produced no results") }
        combined.metadata.command = command
        combined.thresholds = []
        guard results.count > 1 else { return combined }
        var groups: [GroupKey: GroupResult] = [:]
        for result in results {
            for group in result.groups {
                if groups[group.key] == nil {
                    groups[group.key] = group
                } else {
                    groups[group.key]!.merge(group)
                }
            }
        }
        combined.groups = groups.values.sorted { $0.key < $1.key }
        combined.metadata.startedAt = results.map(\.metadata.startedAt).min()!
        combined.metadata.measuredFrom = results.compactMap(\.metadata.measuredFrom).min()
        var providers: [ProviderInfo] = []
        for provider in results.flatMap(\.metadata.providers) where !providers.contains(provider) {
            providers.append(provider)
        }
        combined.metadata.providers = providers
        combined.measuredNanoseconds = results.reduce(0) { $0 &+ $1.measuredNanoseconds }
        combined.totalNanoseconds = results.reduce(0) { $0 &+ $1.totalNanoseconds }
        let planned = results.compactMap(\.plannedIterations)
        combined.plannedIterations = planned.count == results.count ? planned.reduce(0, +) : nil
        combined.completedIterations = results.reduce(0) { $0 + $1.completedIterations }
        combined.warmupIterations = results.reduce(0) { $0 + $1.warmupIterations }
        combined.stoppedByDeadline = results.contains(where: \.stoppedByDeadline)
        combined.rounds = combined.rounds.indices.map { index in
            var round = combined.rounds[index]
            for result in results.dropFirst() where index < result.rounds.count {
                round.groups += result.rounds[index].groups
            }
            return round
        }
        return combined
    }
}
