import Histogram
import LabCharts
import LabCore
import LabResults
import LabScenario

// report.md's charts: what each one draws, taken from the run (LabCharts draws it).
extension MarkdownReporter {
    /// The chart files beside `report.md`, by name: a latency chart per group (named by
    /// `latencyCharts`), the throughput chart, and the timeline, capacity and matrix charts
    /// when the run has what they show.
    static func chartFiles(_ result: RunResult, latencyCharts: [String]) -> [(name: String, text: String)] {
        var files: [(name: String, text: String)] = []
        for (group, name) in zip(result.groups, latencyCharts) {
            files.append((name, Self.latencyChart(result, group)?.render() ?? ""))
            if let rest = Self.latencyChart(result, group, part: .rest) {
                files.append((Self.restChartName(name), rest.render()))
            }
        }
        files.append((Self.throughputChartName, Self.throughputChart(result).render()))
        if let timeline = Self.timelineChart(result) { files.append((Self.timelineChartName, timeline.render())) }
        if let capacity = Self.capacityChart(Capacity.of(result)) {
            files.append((Self.capacityChartName, capacity.render()))
        }
        if let figures = MatrixFigures.of(result) {
            files.append((Self.matrixChartName, Self.matrixChart(figures).render()))
        }
        return files
    }

    /// Which of a group's steps a latency chart draws (`latencySteps`).
    enum LatencyPart {
        /// The exchange and its costliest steps: the chart shown first.
        case lead
        /// The others, shown on demand.
        case rest
    }

    /// How many of the costliest steps beside the exchange the first latency chart draws.
    static let costliestSteps = 3

    /// `group`'s steps with a curve (20 samples or more: one-off steps, keys made once per
    /// client or per run, have too few), split in two: the exchange and the three steps that
    /// took the most time in all (mean × count) first, in the group's order; the rest after.
    /// Five steps or fewer stay together, in the first. Each step has a colour of its own
    /// across both charts: the palette's first for the first chart, the next ones for the rest.
    static func latencySteps(_ group: GroupResult) -> (lead: [LatencyStep], rest: [LatencyStep]) {
        let steps = group.orderedSteps.filter { $0.histogram.totalCount >= 20 }
        var lead = steps
        if steps.count > Self.costliestSteps + 2 {
            // The time each step took in all: its mean × its count.
            let others = steps.filter { $0.step != .exchange }.map {
                (step: $0.step, cost: $0.histogram.specialisedMean * Double($0.histogram.totalCount))
            }
            let costliest = others.sorted { $0.cost > $1.cost }.prefix(Self.costliestSteps).map(\.step)
            lead = steps.filter { $0.step == .exchange || costliest.contains($0.step) }
        }
        let rest = steps.filter { step in !lead.contains { $0.step == step.step } }
        return (
            lead.enumerated().map { LatencyStep(step: $1.step, histogram: $1.histogram, colour: $0) },
            rest.enumerated().map { LatencyStep(step: $1.step, histogram: $1.histogram, colour: lead.count + $0) }
        )
    }

    /// A step on a latency chart, and its place in the palette.
    struct LatencyStep {
        let step: Step
        let histogram: Histogram<UInt64>
        let colour: Int
    }

    /// `group`'s latency chart of `part` of its steps (`latencySteps`): a curve per step, the
    /// thresholds on its steps' percentiles; with `tips`, each point's value for the pointer
    /// (report.html). Nil for the rest when there is none.
    static func latencyChart(
        _ result: RunResult,
        _ group: GroupResult,
        part: LatencyPart = .lead,
        tips: Bool = false
    ) -> LatencyChart? {
        let split = Self.latencySteps(group)
        let steps = part == .lead ? split.lead : split.rest
        guard part == .lead || !steps.isEmpty else { return nil }
        let label = Self.label(group.key) + (group.insecure ? " (insecure)" : "")
        var chart = LatencyChart(
            title: part == .lead ? "Latency by percentile: \(label)" : "Latency by percentile, other steps: \(label)",
            curves: steps.map {
                LatencyChart.Curve(name: $0.step.name, points: Self.latencyCurve($0.histogram), colour: $0.colour)
            },
            latencyLabel: { TimeSpan.format(nanoseconds: $0) }
        )
        chart.limits = Self.limits(result, group, steps: Set(steps.map(\.step)))
        chart.tips = tips
        return chart
    }

    /// The file of a group's chart of its other steps, beside its first one `name`.
    static func restChartName(_ name: String) -> String {
        String(name.dropLast(".svg".count)) + "-other-steps.svg"
    }

    /// report.md's lines for `group`'s latency charts, the first one in file `name`: it, and the
    /// other steps' one folded under it when there is one.
    static func latencyChartLines(_ result: RunResult, _ group: GroupResult, name: String) -> [String] {
        let label = Self.cell(Self.label(group.key))
        var lines = ["![Latency by percentile: \(label)](\(name))", ""]
        let rest = Self.latencySteps(group).rest
        if !rest.isEmpty {
            lines += [
                "<details>", "<summary>Its other \(rest.count) steps</summary>", "",
                "![Latency by percentile, other steps: \(label)](\(Self.restChartName(name)))", "", "</details>", "",
            ]
        }
        return lines
    }

    /// The thresholds on a percentile of one of `group`'s steps (`cx{suite=x25519}.exchange.p99
    /// < 50 ms`) among `steps`, as the group's latency chart draws them: at the bound, marked at
    /// the percentile.
    static func limits(_ result: RunResult, _ group: GroupResult, steps: Set<Step>) -> [LatencyChart.Limit] {
        var flows: [String: [Step]] = [:]
        for other in result.groups {
            flows[other.key.flow, default: []] += other.orderedSteps.map(\.step)
            flows[other.flowKind, default: []] += other.orderedSteps.map(\.step)
        }
        let percentiles: [Threshold.Stat: Double] = [.min: 0, .p50: 50, .p90: 90, .p95: 95, .p99: 99, .p999: 99.9, .max: 100]
        return result.thresholds.compactMap { outcome in
            guard case .success(let threshold) = Threshold.parse(metric: outcome.metric, condition: outcome.condition, flows: flows),
                !group.isServerSide, threshold.matches(group), case .step(let step, let stat) = threshold.measure,
                let percentile = percentiles[stat], steps.contains(step)
            else { return nil }
            return LatencyChart.Limit(
                label: "\(step.name) \(stat.rawValue) \(outcome.condition)",
                x: LatencyChart.x(percentile: percentile),
                nanoseconds: threshold.bound,
                met: outcome.passed
            )
        }
    }

    /// A step's latency curve: a point per percentile HdrHistogram iterates to, the latency
    /// at least 1 ns and at most the largest recorded, one point (the highest) per x.
    static func latencyCurve(_ histogram: Histogram<UInt64>) -> [LatencyChart.Point] {
        var points: [LatencyChart.Point] = []
        let maximum = histogram.maxRecorded
        for step in histogram.percentiles(ticksPerHalfDistance: 5) {
            let x = LatencyChart.x(percentile: step.percentileLevelIteratedTo)
            let value = Double(Swift.max(Swift.min(step.value, maximum), 1))
            if let last = points.last, last.x == x {
                points[points.count - 1].nanoseconds = Swift.max(last.nanoseconds, value)
            } else {
                points.append(LatencyChart.Point(x: x, nanoseconds: value))
            }
        }
        return points
    }

    /// Bars of each group's speed, which the flows' weights do not set: exchanges per
    /// CPU-second (1 ÷ its mean work per exchange, `Step.work`) when every group read its
    /// steps' usage, else exchanges per second of one client's time (1 ÷ its mean exchange
    /// time). Not the tables' ops/s: in the closed model every client picks its flow by
    /// weight, so a group's share of the run's exchanges follows its weight, not its speed
    /// (the quickstart's pq, weight 2 and ×7 slower, had twice the others' ops/s).
    static func throughputChart(_ result: RunResult) -> ThroughputChart {
        let onWork = result.hasWork
        let pairs = result.groups.map { Self.suiteAndProvider($0.key).joined(separator: " / ") }
        let bars = result.groups.enumerated().compactMap { index, group -> ThroughputChart.Bar? in
            // The server's own groups have no exchange: they are not a client's throughput.
            guard !group.isServerSide, let rate = Self.speed(group, onWork: onWork) else { return nil }
            var label = pairs[index]
            if pairs.filter({ $0 == pairs[index] }).count > 1 { label = "\(group.key.flow): " + label }
            if group.insecure { label += " (insecure)" }
            return ThroughputChart.Bar(label: label, value: rate, insecure: group.insecure)
        }
        return ThroughputChart(
            title: onWork ? "Exchanges per CPU-second" : "Exchanges per second of one client's time",
            subtitle: onWork
                ? "1 ÷ the mean work per exchange (client and server CPU), whatever the weights."
                : "1 ÷ the mean exchange time (service time in the open model), whatever the weights.",
            bars: bars
        )
    }

    /// A group's speed for the chart (`throughputChart`); nil without samples.
    static func speed(_ group: GroupResult, onWork: Bool) -> Double? {
        let service = Step(Step.exchange.name + ".service")
        let step: Step =
            onWork
            ? .work
            : group.steps[service] != nil ? service
            : group.steps[.exchange] != nil ? .exchange : group.orderedSteps.last?.step ?? .exchange
        guard let histogram = group.steps[step], histogram.totalCount > 0 else { return nil }
        let mean = histogram.specialisedMean
        return mean > 0 ? 1e9 / mean : nil
    }

    /// The over-time chart: each group's exchanges per interval; nil when the run kept no intervals.
    static func timelineChart(_ result: RunResult) -> TimelineChart? {
        guard let intervals = result.intervals, let indices = intervals.indices else { return nil }
        return TimelineChart(
            title: "Over time: exchanges per \(TimeSpan(nanoseconds: intervals.width))",
            width: Double(intervals.width) / 1e9,
            series: intervals.groups.keys.sorted().map { key in
                TimelineChart.Series(
                    label: Self.label(key),
                    slug: Self.groupSlug(key),
                    points: intervals.points(key, .exchange, over: indices).map {
                        TimelineChart.Point(
                            index: $0.index,
                            count: $0.count,
                            p50: $0.p50,
                            p99: $0.p99,
                            perSecond: $0.perSecond
                        )
                    }
                )
            },
            latencyLabel: { TimeSpan.format(nanoseconds: $0) },
            secondsLabel: { TimeSpan.trimmed($0) + " s" }
        )
    }

    /// The capacity chart of a run with stages: each group's stages, bound and knee; nil without any.
    static func capacityChart(_ capacities: [Capacity]) -> CapacityChart? {
        guard let first = capacities.first else { return nil }
        return CapacityChart(
            title: "Capacity: throughput and latency against offered load",
            clients: first.offered == .clients,
            groups: capacities.map { capacity in
                CapacityChart.Group(
                    label: Self.label(capacity.key),
                    slug: Self.groupSlug(capacity.key),
                    points: capacity.points.map {
                        CapacityChart.Point(offered: $0.offered, throughput: $0.throughput, p50: $0.p50, p99: $0.p99)
                    },
                    bound: capacity.bound,
                    knee: capacity.knee?.rate
                )
            },
            latencyLabel: { TimeSpan.format(nanoseconds: $0) }
        )
    }

    /// The matrix chart: each series' metric against the parameter.
    static func matrixChart(_ figures: MatrixFigures) -> MatrixChart {
        MatrixChart(
            title: "\(figures.metric) against \(MatrixFigures.short(figures.parameter))",
            parameter: MatrixFigures.short(figures.parameter),
            numeric: figures.numeric,
            xs: figures.xs,
            series: figures.series.map { MatrixChart.Series(label: $0.label, values: $0.points.map(\.value)) },
            valueLabel: { Self.matrixValue($0, unit: figures.unit) }
        )
    }

    /// A matrix cell's value, or a tick of its chart, in the metric's unit.
    static func matrixValue(_ value: Double, unit: String) -> String {
        switch unit {
        case "ns": TimeSpan.format(nanoseconds: value)
        case "bytes": ByteSize.format(value)
        case "1/s": "\(Numbers.fixed(value, 1, grouped: true))/s"
        case "fraction": "\(Numbers.fixed(value * 100, 1))%"
        default: Numbers.fixed(value, value == value.rounded() ? 0 : 2, grouped: true)
        }
    }

    /// `cx-x25519-swift-crypto-tcp`: a group's key as the charts' element ids write it.
    static func groupSlug(_ key: GroupKey) -> String { SVG.slug([key.flow, key.suite, key.provider, key.transport]) }
}
