import Foundation
import LabCore
public import LabResults
public import LabScenario

/// A merge judged as one run: the scenario's thresholds, read from the text the runs carry.
extension RunMerge {
    /// The scenario's thresholds, parsed against the merged groups' flows and steps: the
    /// scenario's files (TLS keys, pins) need not exist where the merge runs.
    public static func thresholds(for result: RunResult) throws -> [Threshold] {
        let (decoded, problems) = Scenario.decode(Data(result.scenarioText.utf8))
        guard let scenario = decoded else {
            throw LabError(
                .invalidScenario,
                "The runs' scenario does not parse: \(problems.map(\.message).joined(separator: "; "))"
            )
        }
        var flows: [String: [Step]] = [:]
        for group in result.groups where !group.isServerSide {
            for name in [group.key.flow, group.flowKind] {
                let known = flows[name] ?? []
                flows[name] = known + group.steps.keys.filter { !known.contains($0) }
            }
        }
        return try scenario.thresholds.sorted { $0.key < $1.key }.map { metric, condition in
            switch Threshold.parse(metric: metric, condition: condition, flows: flows) {
            case .success(let threshold): return threshold
            case .failure(let problem):
                throw LabError(
                    .invalidScenario,
                    "The threshold '\(metric)' cannot be judged on the merge: \(problem.message)"
                )
            }
        }
    }
}
