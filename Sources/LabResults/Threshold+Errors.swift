public import LabScenario
extension Threshold {
    /// The condition of the threshold a run is held to when the scenario sets none on errors.
    public static let impliedErrorsCondition = "== 0 (implied: no errors threshold allows any)"

    /// Every threshold's outcome on `result`, then, when measured iterations failed in a group
    /// that no `errors` threshold looks at, the implied `errors == 0`, missed: a run whose
    /// iterations fail does not pass unless its scenario says how many may (`"errors": "< 1%"`,
    /// or `"errors": ">= 0"` for any number).
    public static func outcomes(_ thresholds: [Threshold], of result: RunResult) -> [ThresholdOutcome] {
        var outcomes = thresholds.map { $0.evaluate(result) }
        let judged = thresholds.filter { if case .errors = $0.measure { true } else { false } }
        let unjudged = result.groups.filter { group in
            !group.isServerSide && group.errorCount > 0 && !judged.contains { $0.matches(group) }
        }
        let errors = unjudged.reduce(UInt64(0)) { $0 + $1.errorCount }
        if errors > 0 {
            outcomes.append(
                ThresholdOutcome(
                    metric: "errors",
                    condition: Self.impliedErrorsCondition,
                    observed: "\(errors)",
                    passed: false,
                    value: Double(errors),
                    bound: 0,
                    unit: "count"
                )
            )
        }
        return outcomes
    }
}
