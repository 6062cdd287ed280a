import Histogram
public import LabCore

/// A pass/fail condition on a run, parsed from a scenario's `"thresholds"`.
///
/// Metrics: `efficiency` (the run's share of its primitive bound, `PrimitiveBound`, as a
/// percentage), `errors` (all flows), `<flow>.errors`, `<flow>.<step>.<stat>`, `outcomes.<name>`
/// (all flows) or `<flow>.outcomes.<name>`, where `<flow>` is an entry's label or a flow
/// plugin's name (matching all its entries), optionally narrowed with
/// `{suite=…,provider=…,transport=…}`. Stats: `count`, `min`, `p50`, `p90`, `p99`, `p99.9`,
/// `max`, `mean`, `stddev`, `ops` (per second). An outcome is a count a flow records with
/// `StepRecorder.count` (letters, digits, `_`, `-`, `.`), summed over the matching groups;
/// one never counted is 0, since flows need not declare them. Conditions: an operator
/// (`<`, `<=`, `>`, `>=`, `==`, `!=`), a number and, for times, a unit (`"< 50 ms"`);
/// `errors` also takes a percentage of iterations (`"< 1%"`).
public struct Threshold: Sendable, Equatable {
    /// A figure thresholds can test.
    public enum Stat: String, Sendable, CaseIterable {
        case count, min, p50, p90, p99
        case p999 = "p99.9"
        case max, mean, stddev, ops

        /// Whether the figure is a time (its condition needs a unit).
        public var isTime: Bool { ![.count, .ops].contains(self) }
    }

    /// What is measured.
    public enum Measure: Sendable, Equatable {
        /// Failed iterations (count, or share of iterations when `percent`).
        case errors(percent: Bool)
        /// A figure of one step's merged histogram.
        case step(Step, Stat)
        /// The summed count of one outcome (`StepRecorder.count`).
        case outcome(String)
        /// The run's exchanges per second as a share of its primitive bound (`PrimitiveBound`).
        case efficiency
    }

    /// A comparison operator.
    public enum Comparison: String, Sendable, CaseIterable {
        case lessOrEqual = "<="
        case greaterOrEqual = ">="
        case equal = "=="
        case notEqual = "!="
        case less = "<"
        case greater = ">"

        func holds(_ lhs: Double, _ rhs: Double) -> Bool {
            switch self {
            case .less: return lhs < rhs
            case .lessOrEqual: return lhs <= rhs
            case .greater: return lhs > rhs
            case .greaterOrEqual: return lhs >= rhs
            case .equal: return lhs == rhs
            case .notEqual: return lhs != rhs
            }
        }
    }

    /// The metric as written.
    public var metric: String
    /// The condition as written.
    public var condition: String
    /// The flow label or flow name, or nil for all flows.
    public var flow: String?
    /// Group filters: `suite`, `provider`, `transport`.
    public var filters: [String: String]
    /// What is measured.
    public var measure: Measure
    /// The operator.
    public var comparison: Comparison
    /// The bound, in nanoseconds for times, per second for `ops`, a fraction for error shares.
    public var bound: Double

    /// The filter keys a metric may use.
    public static let filterKeys = ["suite", "provider", "transport"]

    /// The word that introduces an outcome in a metric: `outcomes.<name>`, `<flow>.outcomes.<name>`.
    static let outcomesPrefix = "outcomes"

    /// Parses a metric and condition; `flows` maps each label and flow name to the steps it records.
    ///
    /// Returns the problems (one message each) when it does not parse.
    public static func parse(
        metric: String,
        condition: String,
        flows: [String: [Step]]
    ) -> Result<Threshold, ThresholdProblem> {
        var rest = Substring(metric)
        var flow: String? = nil
        var filters: [String: String] = [:]
        // `outcomes.<name>` is every flow's, unless a flow is labelled `outcomes` (then it is that flow's metric).
        if rest == "efficiency", flows["efficiency"] == nil {
            return Self.parseCondition(condition).flatMap { comparison, number, unit in
                guard unit == "%" else {
                    return .failure(
                        ThresholdProblem(
                            inMetric: false,
                            "expected a share of the primitive bound such as \">= 90%\", found \"\(condition)\""
                        )
                    )
                }
                return .success(
                    Threshold(
                        metric: metric,
                        condition: condition,
                        flow: nil,
                        filters: [:],
                        measure: .efficiency,
                        comparison: comparison,
                        bound: number / 100
                    )
                )
            }
        }
        if rest.hasPrefix(Self.outcomesPrefix + "."), flows[Self.outcomesPrefix] == nil {
            return Self.parseOutcome(
                rest.dropFirst(Self.outcomesPrefix.count + 1),
                metric: metric,
                condition: condition,
                flow: nil,
                filters: [:]
            )
        }
        if rest != "errors" {
            let label = rest.prefix { $0 != "." && $0 != "{" }
            rest = rest.dropFirst(label.count)
            guard let steps = flows[String(label)] else {
                let known = flows.keys.sorted().joined(separator: ", ")
                return .failure(
                    ThresholdProblem(
                        inMetric: true,
                        "expected a metric '<flow>.<step>.<stat>', 'errors' or 'outcomes.<name>'; no flow labelled '\(label)'\(suggestion(for: String(label), in: Array(flows.keys))) (flows: \(known))"
                    )
                )
            }
            flow = String(label)
            if rest.first == "{" {
                guard let close = rest.firstIndex(of: "}") else {
                    return .failure(ThresholdProblem(inMetric: true, "expected '}' closing the filter in '\(metric)'"))
                }
                for pair in rest[rest.index(after: rest.startIndex)..<close].split(separator: ",") {
                    let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: " ") }
                    guard parts.count == 2, Self.filterKeys.contains(parts[0]), !parts[1].isEmpty else {
                        return .failure(
                            ThresholdProblem(
                                inMetric: true,
                                "expected filters 'key=value' with keys \(Self.filterKeys.joined(separator: ", ")), found '\(pair)'"
                            )
                        )
                    }
                    filters[parts[0]] = parts[1]
                }
                rest = rest[rest.index(after: close)...]
            }
            guard rest.first == "." else {
                return .failure(
                    ThresholdProblem(
                        inMetric: true,
                        "expected '.<step>.<stat>', '.errors' or '.outcomes.<name>' after '\(label)'"
                    )
                )
            }
            rest = rest.dropFirst()
            // `<flow>.outcomes.<name>`, unless the flow has a step of that name.
            if rest.hasPrefix(Self.outcomesPrefix + "."), !steps.contains(where: { rest.hasPrefix($0.name + ".") }) {
                return Self.parseOutcome(
                    rest.dropFirst(Self.outcomesPrefix.count + 1),
                    metric: metric,
                    condition: condition,
                    flow: flow,
                    filters: filters
                )
            }
            if rest != "errors" {
                guard
                    let stat = Stat.allCases.sorted(by: { $0.rawValue.count > $1.rawValue.count }).first(where: {
                        rest.hasSuffix("." + $0.rawValue)
                    })
                else {
                    let stats = Stat.allCases.map(\.rawValue).joined(separator: ", ")
                    return .failure(
                        ThresholdProblem(inMetric: true, "expected a stat at the end (\(stats)), found '\(rest)'")
                    )
                }
                let stepName = String(rest.dropLast(stat.rawValue.count + 1))
                guard steps.contains(Step(stepName)) else {
                    let names = steps.map(\.name)
                    return .failure(
                        ThresholdProblem(
                            inMetric: true,
                            "no step '\(stepName)' in flow '\(label)'\(suggestion(for: stepName, in: names)) (steps: \(names.joined(separator: ", ")))"
                        )
                    )
                }
                return Self.parseCondition(condition).flatMap { comparison, number, unit in
                    Self.bound(number, unit: unit, stat: stat).map {
                        Threshold(
                            metric: metric,
                            condition: condition,
                            flow: flow,
                            filters: filters,
                            measure: .step(Step(stepName), stat),
                            comparison: comparison,
                            bound: $0
                        )
                    }
                }
            }
        }
        return Self.parseCondition(condition).flatMap { comparison, number, unit in
            switch unit {
            case "":
                return .success(
                    Threshold(
                        metric: metric,
                        condition: condition,
                        flow: flow,
                        filters: filters,
                        measure: .errors(percent: false),
                        comparison: comparison,
                        bound: number
                    )
                )
            case "%":
                return .success(
                    Threshold(
                        metric: metric,
                        condition: condition,
                        flow: flow,
                        filters: filters,
                        measure: .errors(percent: true),
                        comparison: comparison,
                        bound: number / 100
                    )
                )
            default:
                return .failure(
                    ThresholdProblem(
                        inMetric: false,
                        "expected a count such as \"== 0\" or a share such as \"< 1%\", found \"\(condition)\""
                    )
                )
            }
        }
    }

    /// Whether `name` can be an outcome in a metric: letters, digits, `_` and `-`, in parts joined by single dots.
    static func isValidOutcomeName(_ name: some StringProtocol) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return !parts.isEmpty
            && parts.allSatisfy { part in
                !part.isEmpty
                    && part.allSatisfy { ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "_" || $0 == "-" }
            }
    }

    /// The rest of an outcome metric: `name` (after `outcomes.`) and a plain count as the condition.
    private static func parseOutcome(
        _ name: Substring,
        metric: String,
        condition: String,
        flow: String?,
        filters: [String: String]
    ) -> Result<Threshold, ThresholdProblem> {
        guard Self.isValidOutcomeName(name) else {
            return .failure(
                ThresholdProblem(
                    inMetric: true,
                    "expected an outcome name of letters, digits, '_', '-' or '.' after '\(Self.outcomesPrefix).', found '\(name)'"
                )
            )
        }
        return Self.parseCondition(condition).flatMap { comparison, number, unit in
            guard unit.isEmpty else {
                return .failure(
                    ThresholdProblem(
                        inMetric: false,
                        "expected a plain count for an outcome, such as \">= 1\", found unit '\(unit)'"
                    )
                )
            }
            return .success(
                Threshold(
                    metric: metric,
                    condition: condition,
                    flow: flow,
                    filters: filters,
                    measure: .outcome(String(name)),
                    comparison: comparison,
                    bound: number
                )
            )
        }
    }

    private static func parseCondition(_ condition: String) -> Result<(Comparison, Double, String), ThresholdProblem> {
        let text = condition.trimmingCharacters(in: " ")
        guard let comparison = Comparison.allCases.first(where: { text.hasPrefix($0.rawValue) }) else {
            return .failure(
                ThresholdProblem(
                    inMetric: false,
                    "expected an operator (<, <=, >, >=, ==, !=) then a value, such as \"< 50 ms\", found \"\(condition)\""
                )
            )
        }
        let value = text.dropFirst(comparison.rawValue.count).trimmingCharacters(in: " ")
        let numberPart = value.prefix { $0.isNumber || $0 == "." }
        guard let number = Double(numberPart) else {
            return .failure(
                ThresholdProblem(
                    inMetric: false,
                    "expected a number after '\(comparison.rawValue)', found \"\(condition)\""
                )
            )
        }
        return .success((comparison, number, value.dropFirst(numberPart.count).trimmingCharacters(in: " ")))
    }

    private static func bound(_ number: Double, unit: String, stat: Stat) -> Result<Double, ThresholdProblem> {
        if stat.isTime {
            guard let scale = TimeSpan.units.first(where: { $0.names.contains(unit) }) else {
                return .failure(
                    ThresholdProblem(
                        inMetric: false,
                        "expected a time with a unit (ns, us, ms, s, min, h), such as \"< 50 ms\", found unit '\(unit)'"
                    )
                )
            }
            return .success(number * scale.nanoseconds)
        }
        if unit.isEmpty || (stat == .ops && unit == "/s") { return .success(number) }
        return .failure(
            ThresholdProblem(
                inMetric: false,
                "expected a plain number for '\(stat.rawValue)'\(stat == .ops ? " (or \"/s\")" : ""), found unit '\(unit)'"
            )
        )
    }

    /// Whether `group` is one this threshold looks at.
    public func matches(_ group: GroupResult) -> Bool {
        if let flow = self.flow, group.key.flow != flow, group.flowKind != flow { return false }
        for (key, value) in self.filters {
            let actual: String
            switch key {
            case "suite": actual = group.key.suite
            case "provider": actual = group.key.provider
            default: actual = group.key.transport
            }
            if actual != value { return false }
        }
        return true
    }

    /// Tests the threshold against a run.
    public func evaluate(_ result: RunResult) -> ThresholdOutcome {
        let groups = result.groups.filter { !$0.isServerSide && self.matches($0) }
        switch self.measure {
        case .errors(let percent):
            let errors = Double(groups.reduce(0) { $0 + $1.errorCount })
            if percent {
                let iterations = Double(groups.reduce(0) { $0 + $1.iterations })
                guard iterations > 0 else { return self.outcome("no data", false) }
                let share = errors / iterations
                return self.outcome("\(TimeSpan.trimmed(share * 100))%", self.comparison.holds(share, self.bound))
            }
            return self.outcome("\(Int(errors))", self.comparison.holds(errors, self.bound))
        case .step(let step, let stat):
            var merged: Histogram<UInt64>? = nil
            for group in groups {
                guard let histogram = group.steps[step] else { continue }
                if merged == nil { merged = histogram } else { merged!.add(histogram) }
            }
            guard let histogram = merged, histogram.totalCount > 0 else { return self.outcome("no data", false) }
            let statistics = StepStatistics(histogram, window: result.measuredNanoseconds)
            let value: Double
            switch stat {
            case .count: value = Double(statistics.count)
            case .min: value = statistics.min
            case .p50: value = statistics.p50
            case .p90: value = statistics.p90
            case .p99: value = statistics.p99
            case .p999: value = statistics.p999
            case .max: value = statistics.max
            case .mean: value = statistics.mean
            case .stddev: value = statistics.stddev
            case .ops: value = statistics.opsPerSecond
            }
            let observed =
                stat.isTime
                ? TimeSpan.format(nanoseconds: value) : stat == .ops ? "\(TimeSpan.trimmed(value))/s" : "\(Int(value))"
            return self.outcome(observed, self.comparison.holds(value, self.bound))
        case .outcome(let name):
            // Flows count an outcome only when it happens: a matching group without it counted 0.
            guard !groups.isEmpty else { return self.outcome("no data", false) }
            let count = groups.reduce(UInt64(0)) { $0 &+ ($1.outcomes[name] ?? 0) }
            return self.outcome("\(count)", self.comparison.holds(Double(count), self.bound))
        case .efficiency:
            guard let bound = PrimitiveBound(result) else { return self.outcome("no data", false) }
            return self.outcome(
                "\(TimeSpan.trimmed((bound.efficiency * 1000).rounded() / 10))%",
                self.comparison.holds(bound.efficiency, self.bound)
            )
        }
    }

    private func outcome(_ observed: String, _ passed: Bool) -> ThresholdOutcome {
        ThresholdOutcome(metric: self.metric, condition: self.condition, observed: observed, passed: passed)
    }
}

/// Why a threshold does not parse, and whether the metric (key) or the condition (value) is at fault.
public struct ThresholdProblem: Error, Sendable, Equatable {
    /// True if the metric name is wrong, false if the condition is.
    public var inMetric: Bool
    /// What was expected.
    public var message: String

    /// A problem.
    public init(inMetric: Bool, _ message: String) {
        self.inMetric = inMetric
        self.message = message
    }
}
