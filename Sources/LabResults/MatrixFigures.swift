import LabCore
import LabScenario

/// A matrix's figures: one value of the run's `matrixMetric` per group made from a matrix
/// cell, arranged for a chart against one parameter.
///
/// The parameter on the x axis is the first (by key) whose values are all numbers and that
/// takes two or more of them (e.g. `options.payloadBytes`); without one, the first that
/// varies. Each line is the groups alike in everything else (flow, the other parameters,
/// provider, transport): `cx · suite=pq`.
public struct MatrixFigures: Sendable, Equatable {
    /// One line of the chart.
    public struct Series: Sendable, Equatable {
        /// The legend's label: the flow and the other parameters' values.
        public var label: String
        /// Each cell's x value (its text) and figure, in the parameter's order; nil where the
        /// cell measured nothing.
        public var points: [(x: String, value: Double?)]

        public static func == (lhs: Series, rhs: Series) -> Bool {
            lhs.label == rhs.label && lhs.points.map(\.x) == rhs.points.map(\.x)
                && lhs.points.map(\.value) == rhs.points.map(\.value)
        }
    }

    /// The metric, as written (`exchange.p50`).
    public var metric: String
    /// Its unit: `ns`, `1/s`, `count`, `bytes` or `fraction` (as thresholds give it).
    public var unit: String
    /// The parameter on the x axis.
    public var parameter: String
    /// Whether every value of the parameter is a number (the axis is then numeric).
    public var numeric: Bool
    /// The parameter's values, in order (numbers ascending; names as first met).
    public var xs: [String]
    /// The lines.
    public var series: [Series]

    /// The figures of `result`'s matrix, or nil without one (or without a parameter that varies).
    public static func of(_ result: RunResult) -> MatrixFigures? {
        guard let metric = result.matrixMetric else { return nil }
        let groups = result.groups.filter { !$0.parameters.isEmpty && !$0.isServerSide }
        let keys = Set(groups.flatMap(\.parameters.keys)).sorted()
        func values(_ key: String) -> [String] {
            var seen: [String] = []
            for group in groups { if let value = group.parameters[key], !seen.contains(value) { seen.append(value) } }
            return seen
        }
        let varying = keys.filter { values($0).count > 1 }
        guard
            let parameter = varying.first(where: { key in values(key).allSatisfy { Double($0) != nil } })
                ?? varying.first
        else { return nil }
        let numeric = values(parameter).allSatisfy { Double($0) != nil }
        let xs = numeric ? values(parameter).sorted { Double($0)! < Double($1)! } : values(parameter)
        var unit = "count"
        var lines: [(label: String, cells: [String: Double?])] = []
        for group in groups {
            let rest = group.parameters.filter { $0.key != parameter }.sorted { $0.key < $1.key }
            let label =
                ([group.flowKind] + rest.map { "\(Self.short($0.key))=\($0.value)" }
                + [group.key.provider, group.key.transport]).joined(separator: " · ")
            let outcome = Self.evaluate(metric, group, in: result)
            if let outcome, let known = outcome.unit { unit = known }
            let x = group.parameters[parameter] ?? ""
            if let index = lines.firstIndex(where: { $0.label == label }) {
                lines[index].cells[x] = outcome?.value
            } else {
                lines.append((label, [x: outcome?.value]))
            }
        }
        let series = lines.map { line in
            Series(label: line.label, points: xs.map { x in (x, line.cells[x] ?? nil) })
        }
        return MatrixFigures(metric: metric, unit: unit, parameter: parameter, numeric: numeric, xs: xs, series: series)
    }

    /// `payloadBytes` for `options.payloadBytes`.
    public static func short(_ key: String) -> String {
        key.hasPrefix("options.") ? String(key.dropFirst("options.".count)) : key
    }

    /// `metric` of `group` alone, read as a threshold on it.
    static func evaluate(_ metric: String, _ group: GroupResult, in result: RunResult) -> ThresholdOutcome? {
        let label = group.key.flow
        let steps = Array(Set(group.steps.keys).union(group.traffic.keys).union(group.setupTraffic.keys))
        guard case .success(let threshold) = Threshold.parse(metric: "\(label).\(metric)", flows: [label: steps])
        else { return nil }
        var alone = result
        alone.groups = [group]
        let outcome = threshold.evaluate(alone)
        return outcome.value == nil ? nil : outcome
    }
}
