public import LabCore

/// Reading a threshold's metric and condition as scenarios write them (docs/scenarios.md).
extension Threshold {
    /// Why a step the runner adds on request is missing: `exchange.work` and
    /// `exchange.waiting` are recorded with `report.stepUsage` only.
    package static func usageHint(_ step: String) -> String {
        step == Step.work.name || step == Step.waiting.name ? " ('\(step)' is recorded with report.stepUsage: true)" : ""
    }

    /// Parses a metric and condition; `flows` maps each label and flow name to the steps it records.
    ///
    /// Returns the problems (one message each) when it does not parse.
    public static func parse(
        metric: String,
        condition: String,
        flows: [String: [Step]]
    ) -> Result<Threshold, ThresholdProblem> {
        var rest = Substring(metric)
        // `outcomes.<name>` is every flow's, unless a flow is labelled `outcomes` (then it is that flow's metric).
        if rest == "efficiency", flows["efficiency"] == nil {
            return Self.parseEfficiency(Target(metric: metric, condition: condition, flow: nil, filters: [:]))
        }
        if rest.hasPrefix(Self.outcomesPrefix + "."), flows[Self.outcomesPrefix] == nil {
            return Self.parseOutcome(
                rest.dropFirst(Self.outcomesPrefix.count + 1),
                Target(metric: metric, condition: condition, flow: nil, filters: [:])
            )
        }
        if rest == "errors" {
            return Self.parseErrors(Target(metric: metric, condition: condition, flow: nil, filters: [:]))
        }
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
        var filters: [String: String] = [:]
        if rest.first == "{" {
            switch Self.parseFilters(&rest, metric: metric) {
            case .success(let parsed): filters = parsed
            case .failure(let problem): return .failure(problem)
            }
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
        let target = Target(metric: metric, condition: condition, flow: String(label), filters: filters)
        // `<flow>.outcomes.<name>`, unless the flow has a step of that name.
        if rest.hasPrefix(Self.outcomesPrefix + "."), !steps.contains(where: { rest.hasPrefix($0.name + ".") }) {
            return Self.parseOutcome(rest.dropFirst(Self.outcomesPrefix.count + 1), target)
        }
        if rest == "errors" {
            return Self.parseErrors(target)
        }
        if let bytes = Self.parseBytes(rest, steps: steps, target) { return bytes }
        return Self.parseStep(rest, steps: steps, target)
    }

    /// `bytes.<direction>` or `<step>.bytes.<direction>` of `target`'s flow, or nil when `rest`
    /// is not a bytes metric (`<step>.bytes.…` of a step the flow does not have is one, with
    /// its problem).
    private static func parseBytes(
        _ rest: Substring,
        steps: [Step],
        _ target: Target
    ) -> Result<Threshold, ThresholdProblem>? {
        let parts = rest.split(separator: ".", omittingEmptySubsequences: false)
        guard let word = parts.lastIndex(of: Substring(Self.bytesWord)), word >= parts.count - 2 else {
            return nil
        }
        // A step may have dots in its name (`keygen.client`): everything before `bytes` is it.
        let stepName = parts[..<word].joined(separator: ".")
        let directions = Direction.allCases.map(\.rawValue).joined(separator: ", ")
        guard word == parts.count - 2, let direction = Direction(rawValue: String(parts[word + 1])) else {
            return .failure(
                ThresholdProblem(
                    inMetric: true,
                    "expected a direction after '\(Self.bytesWord).' (\(directions)), found '\(parts.count > word + 1 ? String(parts[word + 1]) : "")'"
                )
            )
        }
        var step: Step? = nil
        if !stepName.isEmpty {
            guard steps.contains(Step(stepName)) else {
                let names = steps.map(\.name)
                return .failure(
                    ThresholdProblem(
                        inMetric: true,
                        "no step '\(stepName)' in flow '\(target.flow ?? "")'\(suggestion(for: stepName, in: names))\(Self.usageHint(stepName)) (steps: \(names.joined(separator: ", ")))"
                    )
                )
            }
            step = Step(stepName)
        }
        let condition = target.condition
        return Self.parseCondition(condition).flatMap { comparison, number, unit in
            guard let scale = ByteSize.scale(of: unit) else {
                return .failure(
                    ThresholdProblem(
                        inMetric: false,
                        "expected a size in bytes such as \"< 4 KiB\" (units B, kB, KiB, MB, MiB; none: bytes), found unit '\(unit)'"
                    )
                )
            }
            return .success(target.threshold(.bytes(step, direction), comparison, bound: number * scale))
        }
    }

    /// A metric alone, to read a figure with (`evaluate`'s `value`) rather than to judge it:
    /// the condition is whichever `>= 0` the metric's unit takes.
    public static func parse(metric: String, flows: [String: [Step]]) -> Result<Threshold, ThresholdProblem> {
        var last = Threshold.parse(metric: metric, condition: ">= 0", flows: flows)
        for condition in [">= 0 ns", ">= 0%"] {
            guard case .failure(let problem) = last, !problem.inMetric else { return last }
            last = Threshold.parse(metric: metric, condition: condition, flows: flows)
        }
        return last
    }

    /// `efficiency`, against a share such as `>= 90%`.
    private static func parseEfficiency(_ target: Target) -> Result<Threshold, ThresholdProblem> {
        let condition = target.condition
        return Self.parseCondition(condition).flatMap { comparison, number, unit in
            guard unit == "%" else {
                return .failure(
                    ThresholdProblem(
                        inMetric: false,
                        "expected a share of the primitive bound such as \">= 90%\", found \"\(condition)\""
                    )
                )
            }
            return .success(target.threshold(.efficiency, comparison, bound: number / 100))
        }
    }

    /// `{key=value,…}` at the start of `rest`, which is left after the closing brace.
    private static func parseFilters(
        _ rest: inout Substring,
        metric: String
    ) -> Result<[String: String], ThresholdProblem> {
        guard let close = rest.firstIndex(of: "}") else {
            return .failure(ThresholdProblem(inMetric: true, "expected '}' closing the filter in '\(metric)'"))
        }
        var filters: [String: String] = [:]
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
        return .success(filters)
    }

    /// `<step>.<stat>` of `flow`, whose steps are `steps`.
    private static func parseStep(_ rest: Substring, steps: [Step], _ target: Target) -> Result<Threshold, ThresholdProblem> {
        let flow = target.flow ?? ""
        guard
            let stat = Stat.allCases.sorted(by: { $0.rawValue.count > $1.rawValue.count }).first(where: {
                rest.hasSuffix("." + $0.rawValue)
            })
        else {
            let stats = Stat.allCases.map(\.rawValue).joined(separator: ", ")
            return .failure(ThresholdProblem(inMetric: true, "expected a stat at the end (\(stats)), found '\(rest)'"))
        }
        let stepName = String(rest.dropLast(stat.rawValue.count + 1))
        guard steps.contains(Step(stepName)) else {
            let names = steps.map(\.name)
            return .failure(
                ThresholdProblem(
                    inMetric: true,
                    "no step '\(stepName)' in flow '\(flow)'\(suggestion(for: stepName, in: names))\(Self.usageHint(stepName)) (steps: \(names.joined(separator: ", ")))"
                )
            )
        }
        return Self.parseCondition(target.condition).flatMap { comparison, number, unit in
            Self.bound(number, unit: unit, stat: stat).map {
                target.threshold(.step(Step(stepName), stat), comparison, bound: $0)
            }
        }
    }

    /// `errors` or `<flow>.errors`, against a count (`== 0`) or a share (`< 1%`).
    private static func parseErrors(_ target: Target) -> Result<Threshold, ThresholdProblem> {
        let condition = target.condition
        return Self.parseCondition(condition).flatMap { comparison, number, unit in
            guard unit == "" || unit == "%" else {
                return .failure(
                    ThresholdProblem(
                        inMetric: false,
                        "expected a count such as \"== 0\" or a share such as \"< 1%\", found \"\(condition)\""
                    )
                )
            }
            return .success(
                target.threshold(.errors(percent: unit == "%"), comparison, bound: unit == "%" ? number / 100 : number)
            )
        }
    }

    /// Whether `name` can be an outcome in a metric: letters, digits, `_` and `-`, in parts joined by single dots.
    package static func isValidOutcomeName(_ name: some StringProtocol) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return !parts.isEmpty
            && parts.allSatisfy { part in
                !part.isEmpty
                    && part.allSatisfy { ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "_" || $0 == "-" }
            }
    }

    /// The rest of an outcome metric: `name` (after `outcomes.`) and a plain count as the condition.
    private static func parseOutcome(_ name: Substring, _ target: Target) -> Result<Threshold, ThresholdProblem> {
        guard Self.isValidOutcomeName(name) else {
            return .failure(
                ThresholdProblem(
                    inMetric: true,
                    "expected an outcome name of letters, digits, '_', '-' or '.' after '\(Self.outcomesPrefix).', found '\(name)'"
                )
            )
        }
        return Self.parseCondition(target.condition).flatMap { comparison, number, unit in
            guard unit.isEmpty else {
                return .failure(
                    ThresholdProblem(
                        inMetric: false,
                        "expected a plain count for an outcome, such as \">= 1\", found unit '\(unit)'"
                    )
                )
            }
            return .success(target.threshold(.outcome(String(name)), comparison, bound: number))
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

    /// What a threshold's parts share once its metric names them: the text as written, the
    /// flow it is about (nil: every flow) and its filters.
    private struct Target {
        let metric: String
        let condition: String
        let flow: String?
        let filters: [String: String]

        /// The threshold on `measure`.
        func threshold(_ measure: Measure, _ comparison: Comparison, bound: Double) -> Threshold {
            Threshold(
                metric: self.metric,
                condition: self.condition,
                flow: self.flow,
                filters: self.filters,
                measure: measure,
                comparison: comparison,
                bound: bound
            )
        }
    }
}
