import Foundation
import Histogram
import LabAnalysis
import LabCharts
import LabCore
import LabReport
import LabResults
import LabTestSupport
import Testing

/// Every SVG chart the reports draw, rendered from fixed runs and compared byte for byte with
/// the files under `Snapshots/charts/`: users diff their charts between runs, so a chart
/// changes only on purpose (`UPDATE_SNAPSHOTS=1` records them again).
@Suite(.tier(.unit)) struct ChartSnapshotTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Snapshots/charts")

    static let x25519 = GroupKey(flow: "cx", suite: "x25519", provider: "swift-crypto", transport: "in-process")
    static let classic = GroupKey(flow: "cx", suite: "classic", provider: "openssl", transport: "in-process")

    /// The chart files `report.md` comes with that are named in `names` (all of them when nil),
    /// each compared with its snapshot `<prefix>-<file name>`.
    static func expectCharts(_ result: RunResult, prefix: String, names: [String]? = nil) throws {
        let files = MarkdownReporter(options: ReportOptions(charts: true)).render(result).filter {
            $0.name.hasSuffix(".svg") && names?.contains($0.name) != false
        }
        #expect(files.map(\.name).sorted() == (names ?? files.map(\.name)).sorted(), "\(files.map(\.name))")
        for file in files { try expectSnapshot(file.text, named: "\(prefix)-\(file.name)", in: Self.folder) }
    }

    @Test("The latency and throughput charts of the report fixture, a group of twelve steps added")
    func latencyAndThroughput() throws {
        var result = Fixture.result()
        var random = LCG(seed: 7)
        var steps: [Step: Histogram<UInt64>] = [:]
        for index in 0..<12 { steps[Step("step\(index)")] = random.histogram(count: 40, around: UInt64(3_000 << index)) }
        result.groups.append(
            GroupResult(
                key: GroupKey(flow: "many", suite: "-", provider: "openssl", transport: "tcp"),
                flowKind: "many",
                insecure: false,
                steps: steps,
                iterations: 40
            )
        )
        try Self.expectCharts(result, prefix: "fixture")
    }

    @Test("A run without groups: the throughput chart says there is no data")
    func empty() throws {
        var result = Fixture.result(thresholds: false)
        result.groups = []
        try Self.expectCharts(result, prefix: "empty")
    }

    @Test("Two groups over quarter-second intervals, with gaps and a lone interval")
    func timeline() throws {
        var intervals = RunIntervals(width: 250_000_000, origin: Fixture.startedAt)
        for index in [0, 1, 2, 3, 6, 8, 9] {
            let nanoseconds = UInt64(400_000 + 90_000 * index * index)
            intervals.groups[Self.x25519, default: [:]][index] = IntervalReportTests.slice(
                count: 4 + 3 * index,
                nanoseconds: nanoseconds
            )
        }
        for index in 2...11 {
            intervals.groups[Self.classic, default: [:]][index] = IntervalReportTests.slice(
                count: 30 - index,
                nanoseconds: UInt64(2_000_000 + 1_500_000 * (index % 4))
            )
        }
        var result = Fixture.result(thresholds: false)
        result.intervals = intervals
        try Self.expectCharts(result, prefix: "timeline", names: [MarkdownReporter.timelineChartName])
    }

    /// Stages of 2 s over 1 s intervals offering `offered`; in stage `s` group `g` answers in
    /// `latency(g, s)` milliseconds and completes `served(g, s)` exchanges a second.
    static func staged(
        _ offered: [Double],
        kind: LoadStages.Offered,
        bound: UInt64?,
        latency: (Int, Int) -> Double,
        served: (Int, Int) -> UInt64
    ) -> RunResult {
        var intervals = RunIntervals(width: 1_000_000_000, origin: Fixture.startedAt)
        for (group, key) in [Self.x25519, Self.classic].enumerated() {
            for stage in offered.indices {
                var histogram = RunIntervals.histogram()
                histogram.record(UInt64(latency(group, stage) * 1e6), count: UInt64(offered[stage]) * 5)
                let slice = RunIntervals.Slice(
                    steps: [.exchange: SparseHistogram(histogram)],
                    completed: served(group, stage)
                )
                intervals.groups[key, default: [:]][2 * stage] = slice
                intervals.groups[key, default: [:]][2 * stage + 1] = slice
            }
        }
        var result = Fixture.result(thresholds: false)
        result.intervals = intervals
        result.stages = LoadStages(
            stages: offered.enumerated().map { stage, rate in
                LoadStages.Stage(
                    rate: rate,
                    startNanoseconds: 2_000_000_000 * UInt64(stage),
                    durationNanoseconds: 2_000_000_000
                )
            },
            kneeP99Nanoseconds: bound,
            offered: kind
        )
        return result
    }

    @Test("An open load's stages: two groups, the bound and each group's knee")
    func capacityOpen() throws {
        let result = Self.staged(
            [100, 200, 400, 800],
            kind: .rate,
            bound: 50_000_000,
            latency: { group, stage in [[2, 3, 9, 120], [4, 30, 300, 900]][group][stage] },
            served: { group, stage in [[100, 200, 400, 610], [100, 190, 240, 250]][group][stage] }
        )
        try Self.expectCharts(result, prefix: "capacity-open", names: [MarkdownReporter.capacityChartName])
    }

    @Test("A closed load's stages of clients: no bound, no knee, no diagonal")
    func capacityClients() throws {
        let result = Self.staged(
            [1, 2, 4, 8],
            kind: .clients,
            bound: nil,
            latency: { group, stage in Double(group + 1) * [0.4, 0.5, 0.9, 1.7][stage] },
            served: { group, stage in UInt64(2_000 * (stage + 1) / (group + 1)) }
        )
        try Self.expectCharts(result, prefix: "capacity-clients", names: [MarkdownReporter.capacityChartName])
    }

    /// A run whose groups are the cells of a matrix over `suites` × `values` of `parameter`,
    /// each cell's exchanges taking `median(suite, value)` nanoseconds (nil: the cell is absent).
    static func matrix(
        _ parameter: String,
        _ values: [String],
        median: (Int, Int) -> UInt64?
    ) -> RunResult {
        var result = Fixture.result(thresholds: false)
        var random = LCG(seed: 11)
        result.groups = []
        for (row, suite) in ["x25519", "pq"].enumerated() {
            for (column, value) in values.enumerated() {
                guard let around = median(row, column) else { continue }
                var group = GroupResult(
                    key: GroupKey(flow: "cx-\(suite)-\(value)", suite: suite, provider: "swift-crypto", transport: "tcp"),
                    flowKind: "cx",
                    insecure: false,
                    steps: [.exchange: random.histogram(count: 60, around: around)],
                    iterations: 60
                )
                group.parameters = ["suite": suite, parameter: value]
                result.groups.append(group)
            }
        }
        result.matrixMetric = "exchange.p50"
        return result
    }

    @Test("A matrix over payload sizes: both axes logarithmic")
    func matrixNumeric() throws {
        let result = Self.matrix("options.payloadBytes", ["427", "4096", "65536", "1048576"]) { row, column in
            UInt64(200_000 * (row + 1)) << (3 * column)
        }
        try Self.expectCharts(result, prefix: "matrix-payload", names: [MarkdownReporter.matrixChartName])
    }

    @Test("A matrix over names: the x axis by position, the y axis linear, a cell missing")
    func matrixNamed() throws {
        let result = Self.matrix("options.kdf", ["argon2id", "scrypt", "pbkdf2"]) { row, column in
            row == 1 && column == 2 ? nil : UInt64(3_000_000 + 1_000_000 * (row + 2 * column))
        }
        try Self.expectCharts(result, prefix: "matrix-kdf", names: [MarkdownReporter.matrixChartName])
    }

    @Test("comparison.md's charts: a run that moved as a whole, half the steps slower, no step in common")
    func comparison() throws {
        let base = ComparisonTests.eightSteps("base", seed: 60)
        let busy = ComparisonTests.eightSteps("busy", seed: 70, scales: [1.2, 1.16, 1.18, 1.21, 1.15, 1.5, 1.19, 1.17])
        let half = ComparisonTests.eightSteps("half", seed: 100, scales: [1, 1, 1, 1, 1.3, 1.3, 0.6, 1.3])
        let apart = ComparisonTests.run("apart", [.discover: ComparisonTests.timings(500, median: 9_000, seed: 5)])
        let report = ComparisonReport(Comparison(baseline: base, candidates: [busy, half, apart]))
        for (index, name) in ["busy", "half", "apart"].enumerated() {
            try expectSnapshot(report.chart(index).render(), named: "comparison-\(name).svg", in: Self.folder)
        }
    }
}
