public import Foundation
import LabCharts
import LabCore
public import LabResults

/// Writes `results.csv`: one row per group and step, times in microseconds; when flows
/// counted outcomes, `outcomes.csv`: one row per group and outcome; and when the run kept
/// intervals, `timeseries.csv`: one row per interval, group and step; when bytes were
/// counted, `traffic.csv`: one row per group, phase and step that sent.
public struct CSVReporter: Reporter {
    /// `csv`.
    public static let name = "csv"
    /// The file this reporter always writes.
    public static let fileName = "results.csv"
    /// The file this reporter writes when any group counted outcomes.
    public static let outcomesFileName = "outcomes.csv"
    /// The file this reporter writes when the run kept intervals (`RunIntervals`).
    public static let timeseriesFileName = "timeseries.csv"

    /// The header, in order; times are in microseconds with three decimals, rates per second with one.
    public static let columns = [
        "flow", "suite", "provider", "transport", "step", "count", "errors", "min_us", "p50_us", "p90_us", "p99_us",
        "p99_9_us", "max_us", "mean_us", "stddev_us", "ops_per_s",
    ]

    /// The file this reporter writes when any group counted bytes on the wire.
    public static let trafficFileName = "traffic.csv"

    /// The header of `traffic.csv`, in order: the group, `measured` or `setup`, the step (an
    /// `iteration` row per measured group adds up its steps, per measured iteration), round trips
    /// (iterations, on the `iteration` row), total bytes each way and per round trip.
    public static let trafficColumns = [
        "flow", "suite", "provider", "transport", "phase", "step", "round_trips", "sent_bytes", "received_bytes",
        "sent_per_round_trip", "received_per_round_trip",
    ]

    /// The header of `outcomes.csv`, in order.
    public static let outcomeColumns = ["flow", "suite", "provider", "transport", "outcome", "count"]

    /// The header of `timeseries.csv`, in order: the interval's index, its start on the wall
    /// clock (ISO 8601, UTC) and in seconds from the run's measured start, the group, the step,
    /// the samples that started in the interval (failures on the `exchange` row), and their
    /// rate and times (microseconds, three decimals; 0 without samples).
    public static let timeseriesColumns = [
        "interval", "start", "t_s", "flow", "suite", "provider", "transport", "step", "count", "errors", "ops_per_s",
        "p50_us", "p90_us", "p99_us", "max_us",
    ]

    /// A CSV reporter; it has no options.
    public init(options: ReportOptions) {}

    /// Writes `results.csv` into `directory`, and `outcomes.csv` if any group counted outcomes.
    public func write(_ result: RunResult, to directory: URL) throws -> [URL] {
        let url = directory.appendingPathComponent(Self.fileName)
        try writeText(self.render(result), to: url)
        var written = [url]
        if let outcomes = self.renderOutcomes(result) {
            written.append(directory.appendingPathComponent(Self.outcomesFileName))
            try writeText(outcomes, to: written.last!)
        }
        if let traffic = self.renderTraffic(result) {
            written.append(directory.appendingPathComponent(Self.trafficFileName))
            try writeText(traffic, to: written.last!)
        }
        if let timeseries = self.renderTimeseries(result) {
            written.append(directory.appendingPathComponent(Self.timeseriesFileName))
            try writeText(timeseries, to: written.last!)
        }
        return written
    }

    /// The text of `timeseries.csv`: the header line, then for every interval from the first
    /// with samples to the last (empty ones included: a gap is a finding), each group in order
    /// and each step it recorded in any interval; nil when the run kept no intervals.
    public func renderTimeseries(_ result: RunResult) -> String? {
        guard let intervals = result.intervals, let indices = intervals.indices else { return nil }
        let width = Double(intervals.width) / 1e9
        let groups = intervals.groups.keys.sorted()
        var series: [(key: GroupKey, step: Step, points: [RunIntervals.Point])] = []
        for key in groups {
            var steps = intervals.steps(of: key)
            // A group whose every iteration failed has no histogram, but its failures have a row.
            if !steps.contains(.exchange), intervals.groups[key]?.values.contains(where: { $0.errors > 0 }) == true {
                steps.append(.exchange)
            }
            for step in steps {
                series.append((key, step, intervals.points(key, step, over: indices)))
            }
        }
        var lines = [Self.timeseriesColumns.joined(separator: ",")]
        for (position, index) in indices.enumerated() {
            let start = RunResult.iso8601(intervals.start(of: index))
            for (key, step, points) in series {
                let point = points[position]
                let errors = step == .exchange ? intervals.groups[key]?[index]?.errors ?? 0 : 0
                let fields =
                    [String(index), start, Numbers.fixed(Double(index) * width, 3)]
                    + [key.flow, key.suite, key.provider, key.transport, step.name].map(Self.quoted)
                    + [String(point.count), String(errors), Numbers.fixed(point.perSecond, 1)]
                    + [point.p50, point.p90, point.p99, point.max].map { Numbers.fixed($0 / 1000, 3) }
                lines.append(fields.joined(separator: ","))
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The file's text: the header line, then one line per row, each ending in a newline.
    public func render(_ result: RunResult) -> String {
        var lines = [Self.columns.joined(separator: ",")]
        for row in result.rows {
            let key = row.group.key
            let figures = row.statistics
            let micro = [
                figures.min, figures.p50, figures.p90, figures.p99, figures.p999, figures.max, figures.mean,
                figures.stddev,
            ].map { Numbers.fixed($0 / 1000, 3) }
            let fields =
                [key.flow, key.suite, key.provider, key.transport, row.step.name].map(Self.quoted)
                + [String(figures.count), String(figures.errors)] + micro + [Numbers.fixed(figures.opsPerSecond, 1)]
            lines.append(fields.joined(separator: ","))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The text of `outcomes.csv`: the header line, then one line per group (in order) and outcome
    /// (by name); nil when no group counted any outcome.
    public func renderOutcomes(_ result: RunResult) -> String? {
        guard result.groups.contains(where: { !$0.outcomes.isEmpty }) else { return nil }
        var lines = [Self.outcomeColumns.joined(separator: ",")]
        for group in result.groups {
            let key = group.key
            for (outcome, count) in group.outcomes.sorted(by: { $0.key < $1.key }) {
                let fields =
                    [key.flow, key.suite, key.provider, key.transport, outcome].map(Self.quoted) + [String(count)]
                lines.append(fields.joined(separator: ","))
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The text of `traffic.csv`: per group (in order), its measured iteration's sum, then each
    /// step that sent, measured then in set-up; nil when no group counted bytes.
    public func renderTraffic(_ result: RunResult) -> String? {
        guard result.groups.contains(where: { !$0.traffic.isEmpty || !$0.setupTraffic.isEmpty }) else { return nil }
        var lines = [Self.trafficColumns.joined(separator: ",")]
        func line(_ key: GroupKey, _ phase: String, _ step: String, _ traffic: StepTraffic) {
            let trips = Double(max(1, traffic.roundTrips))
            let fields =
                [key.flow, key.suite, key.provider, key.transport, phase, step].map(Self.quoted)
                + [String(traffic.roundTrips), String(traffic.sent), String(traffic.received)]
                + [Numbers.fixed(Double(traffic.sent) / trips, 1), Numbers.fixed(Double(traffic.received) / trips, 1)]
            lines.append(fields.joined(separator: ","))
        }
        for group in result.groups {
            if !group.traffic.isEmpty {
                var total = group.measuredTraffic
                total.roundTrips = group.iterations
                line(group.key, "measured", "iteration", total)
            }
            for (phase, traffic) in [("measured", group.traffic), ("setup", group.setupTraffic)] {
                for (step, counted) in traffic.sorted(by: { Step.reportOrdering($0.key, $1.key) }) {
                    line(group.key, phase, step.name, counted)
                }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `field`, in double quotes with inner quotes doubled if it holds a comma, quote or line break (RFC 4180).
    static func quoted(_ field: String) -> String {
        guard field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) else {
            return field
        }
        return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
