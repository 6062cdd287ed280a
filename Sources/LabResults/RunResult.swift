import Foundation
public import Histogram
public import LabCore

/// What a report row is about: one flow entry, run with one suite, provider and transport.
public struct GroupKey: Hashable, Sendable, Codable, Comparable, CustomStringConvertible {
    /// The flow entry's label (its `name`, or the flow's).
    public package(set) var flow: String
    /// The suite, or `-` for flows without one.
    public package(set) var suite: String
    /// The provider, or `client→server` when the two sides differ.
    public package(set) var provider: String
    /// The transport.
    public package(set) var transport: String

    /// A key.
    public init(flow: String, suite: String, provider: String, transport: String) {
        self.flow = flow
        self.suite = suite
        self.provider = provider
        self.transport = transport
    }

    /// `cx x25519 swift-crypto in-process`.
    public var description: String { "\(self.flow) \(self.suite) \(self.provider) \(self.transport)" }

    /// Orders by flow, suite, provider, transport.
    public static func < (lhs: GroupKey, rhs: GroupKey) -> Bool {
        (lhs.flow, lhs.suite, lhs.provider, lhs.transport) < (rhs.flow, rhs.suite, rhs.provider, rhs.transport)
    }
}

/// The measurements of one group: a histogram per step, error counts by kind and outcome counts.
public struct GroupResult: Sendable {
    /// Which group.
    public package(set) var key: GroupKey
    /// The flow plugin that ran, e.g. `cx`.
    public package(set) var flowKind: String
    /// Whether the suite is insecure (kept for fidelity only); reports say so.
    public package(set) var insecure: Bool
    /// One histogram of nanoseconds per step.
    public package(set) var steps: [Step: Histogram<UInt64>]
    /// Failed iterations by kind (a `LabError` code, e.g. `signatureInvalid`).
    public package(set) var errors: [String: UInt64]
    /// Each error kind's first message, as the failed iteration saw it (the server's reason
    /// included when its answer gave one); empty in documents written before runs kept them.
    public package(set) var errorMessages: [String: String] = [:]
    /// Measured iterations, failed ones included.
    public package(set) var iterations: UInt64
    /// Outcome counts by name (`StepRecorder.count`, e.g. `locked`): measured iterations' and set-up's.
    public package(set) var outcomes: [String: UInt64]
    /// What each step's samples show beside their times (`StepDetail`); empty for groups a
    /// server elsewhere reported and for documents written before runs kept it.
    public package(set) var details: [Step: StepDetail] = [:]
    /// Bytes on the wire by the step that sent them (`StepTraffic`), over the measured
    /// iterations, failed ones included; empty where nothing was counted (a server's own
    /// report, documents written before runs counted bytes).
    public package(set) var traffic: [Step: StepTraffic] = [:]
    /// Bytes on the wire during set-up: connections opened before the first iteration (a TLS
    /// `handshake`'s records) and each client's `prepare` (msg/1's `register`).
    public package(set) var setupTraffic: [Step: StepTraffic] = [:]
    /// What TCP did by step (`StepPackets`, read with `report.packets`, or by a server run
    /// with `--packets`), over the measured iterations; empty where nothing was read.
    public package(set) var packets: [Step: StepPackets] = [:]
    /// What TCP did during set-up: the connections' SYNs and TLS handshakes.
    public package(set) var setupPackets: [Step: StepPackets] = [:]
    /// For a group made from a matrix (`"matrix"` in a flow entry), its combination's values
    /// by key (`suite`, `options.payloadBytes`), as text; empty otherwise.
    public package(set) var parameters: [String: String] = [:]

    /// A group with no measurements yet.
    public init(
        key: GroupKey,
        flowKind: String,
        insecure: Bool,
        steps: [Step: Histogram<UInt64>] = [:],
        errors: [String: UInt64] = [:],
        iterations: UInt64 = 0,
        outcomes: [String: UInt64] = [:]
    ) {
        self.key = key
        self.flowKind = flowKind
        self.insecure = insecure
        self.steps = steps
        self.errors = errors
        self.iterations = iterations
        self.outcomes = outcomes
    }

    /// The steps in report order (`Step.reportOrder`, unknown steps last by name).
    public var orderedSteps: [(step: Step, histogram: Histogram<UInt64>)] {
        self.steps.sorted { Step.reportOrdering($0.key, $1.key) }.map { ($0.key, $0.value) }
    }

    /// Total failed iterations.
    public var errorCount: UInt64 { self.errors.values.reduce(0, +) }

    /// The statistics of `histogram`, this group's `step`, over `window` nanoseconds of
    /// measured time; failed iterations are counted on the `exchange` row.
    func statistics(_ step: Step, _ histogram: Histogram<UInt64>, window: UInt64) -> StepStatistics {
        StepStatistics(histogram, errors: step == .exchange ? self.errorCount : 0, window: window)
    }

    /// The `flowKind` of the groups a server elsewhere reported about its own work.
    public static let serverSideKind = "server"

    /// Whether the group is the server's own report of its work (a server elsewhere), not
    /// the clients' measurements: its error answers are the clients' failures seen from the
    /// other side, so run totals and thresholds leave it out.
    public var isServerSide: Bool { self.flowKind == Self.serverSideKind }

    /// Adds `other`'s measurements (same key) to these: histograms merge exactly, counts add up.
    public mutating func merge(_ other: GroupResult) {
        for (step, histogram) in other.steps {
            if var existing = self.steps[step] {
                existing.add(histogram)
                self.steps[step] = existing
            } else {
                self.steps[step] = histogram
            }
        }
        for (kind, count) in other.errors { self.errors[kind, default: 0] += count }
        for (kind, message) in other.errorMessages where self.errorMessages[kind] == nil {
            self.errorMessages[kind] = message
        }
        self.iterations += other.iterations
        for (outcome, count) in other.outcomes { self.outcomes[outcome, default: 0] += count }
        for (step, detail) in other.details {
            if self.details[step] == nil {
                self.details[step] = detail
            } else {
                self.details[step]!.merge(detail)
            }
        }
        if self.parameters.isEmpty { self.parameters = other.parameters }
        for (step, traffic) in other.traffic { self.traffic[step, default: StepTraffic()].add(traffic) }
        for (step, traffic) in other.setupTraffic { self.setupTraffic[step, default: StepTraffic()].add(traffic) }
        for (step, packets) in other.packets { self.packets[step, default: StepPackets()].add(packets) }
        for (step, packets) in other.setupPackets { self.setupPackets[step, default: StepPackets()].add(packets) }
    }

    /// Every step's measured traffic added up: the measured iterations' bytes.
    public var measuredTraffic: StepTraffic {
        self.traffic.values.reduce(into: StepTraffic()) { $0.add($1) }
    }

    /// The bytes each way of one measured iteration, on average (every sending step's, failed
    /// iterations included); nil when nothing was counted.
    public var bytesPerIteration: (sent: Double, received: Double)? {
        guard self.iterations > 0, !self.traffic.isEmpty else { return nil }
        let total = self.measuredTraffic
        return (Double(total.sent) / Double(self.iterations), Double(total.received) / Double(self.iterations))
    }
}

/// Whether one threshold held.
public struct ThresholdOutcome: Sendable, Codable, Equatable {
    /// The metric, as written: `cx.exchange.p99`.
    public package(set) var metric: String
    /// The condition, as written: `< 50 ms`.
    public package(set) var condition: String
    /// The measured value, formatted with its unit; `no data` if nothing was measured.
    public package(set) var observed: String
    /// Whether the condition held.
    public package(set) var passed: Bool
    /// The measured value as a number, in `unit`; nil if nothing was measured (and in
    /// documents from before outcomes carried numbers).
    public package(set) var value: Double?
    /// The condition's bound as a number, in `unit`.
    public package(set) var bound: Double?
    /// The unit of `value` and `bound`: `ns` (times), `1/s` (rates), `count`, or `fraction`
    /// (shares: error rates, efficiency; 0.01 is 1%).
    public package(set) var unit: String?

    /// An outcome.
    public init(
        metric: String,
        condition: String,
        observed: String,
        passed: Bool,
        value: Double? = nil,
        bound: Double? = nil,
        unit: String? = nil
    ) {
        self.metric = metric
        self.condition = condition
        self.observed = observed
        self.passed = passed
        self.value = value
        self.bound = bound
        self.unit = unit
    }
}

/// Everything a run produced: what reporters write and `lab merge`/`lab compare` read.
public struct RunResult: Sendable {
    /// The format tag written in `results.json`.
    public static let format = "crypto-lab/results/1"

    /// Facts about the run.
    public package(set) var metadata: RunMetadata
    /// The scenario file's text, as run.
    public package(set) var scenarioText: String
    /// One entry per group, sorted by key.
    public package(set) var groups: [GroupResult]
    /// Wall time of the measured part of the run (after warm-up), in nanoseconds; rates divide by it.
    public package(set) var measuredNanoseconds: UInt64
    /// Wall time of the whole run, ramp-up and warm-up included.
    public package(set) var totalNanoseconds: UInt64
    /// Measured iterations planned: clients × iterations, or the open model's due exchanges after warm-up.
    public package(set) var plannedIterations: Int?
    /// Measured iterations done, failed ones included.
    public package(set) var completedIterations: Int
    /// Warm-up iterations done and left out.
    public package(set) var warmupIterations: Int
    /// Whether the deadline stopped the run early.
    public package(set) var stoppedByDeadline: Bool
    /// Each threshold and whether it held.
    public package(set) var thresholds: [ThresholdOutcome]
    /// Reference operations timed in the run's process (`Calibration`); nil in results
    /// written before runs calibrated.
    public package(set) var calibration: Calibration? = nil
    /// One entry per round when the load has `rounds` > 1; empty otherwise.
    public package(set) var rounds: [RoundResult] = []
    /// The heap at the run's moments (`RunMemory`); nil when jemalloc is not the process's
    /// allocator, and in results written before runs measured it.
    public package(set) var memory: RunMemory? = nil
    /// The run over time (`RunIntervals`); nil when `report.interval` is 0, in a counted run,
    /// and in results written before runs kept intervals.
    public package(set) var intervals: RunIntervals? = nil
    /// Where the run's CPU time went (`RunCPU`); nil in results written before runs measured it.
    public package(set) var cpu: RunCPU? = nil
    /// An open load's stages (`load.stages`), for the capacity report; nil without.
    public package(set) var stages: LoadStages? = nil
    /// The figure the matrix chart draws against its parameter (`report.matrixMetric`, e.g.
    /// `exchange.p50`); nil when no flow has a matrix.
    public package(set) var matrixMetric: String? = nil

    /// A result given directly.
    public init(
        metadata: RunMetadata,
        scenarioText: String,
        groups: [GroupResult],
        measuredNanoseconds: UInt64,
        totalNanoseconds: UInt64,
        plannedIterations: Int?,
        completedIterations: Int,
        warmupIterations: Int,
        stoppedByDeadline: Bool,
        thresholds: [ThresholdOutcome] = []
    ) {
        self.metadata = metadata
        self.scenarioText = scenarioText
        self.groups = groups.sorted { $0.key < $1.key }
        self.measuredNanoseconds = measuredNanoseconds
        self.totalNanoseconds = totalNanoseconds
        self.plannedIterations = plannedIterations
        self.completedIterations = completedIterations
        self.warmupIterations = warmupIterations
        self.stoppedByDeadline = stoppedByDeadline
        self.thresholds = thresholds
    }

    /// Total failed iterations.
    public var errorCount: UInt64 { self.groups.filter { !$0.isServerSide }.reduce(0) { $0 + $1.errorCount } }

    /// Errors summed by kind over every group of the clients' (not the server's own).
    public var errorsByKind: [String: UInt64] {
        self.groups.filter { !$0.isServerSide }.reduce(into: [:]) { totals, group in
            for (kind, count) in group.errors { totals[kind, default: 0] += count }
        }
    }

    /// Each error kind's first message over the clients' groups (the first group's, in key order).
    public var errorMessagesByKind: [String: String] {
        self.groups.filter { !$0.isServerSide }.reduce(into: [:]) { messages, group in
            for (kind, message) in group.errorMessages where messages[kind] == nil { messages[kind] = message }
        }
    }

    /// Whether every client group recorded its exchanges' work (`Step.work`).
    package var hasWork: Bool {
        let clients = self.groups.filter { !$0.isServerSide }
        return !clients.isEmpty && clients.allSatisfy { ($0.steps[.work]?.totalCount ?? 0) > 0 }
    }

    /// Whether every threshold held, the run was not cut short and, for a merge, no shard failed.
    public var passed: Bool {
        self.thresholds.allSatisfy(\.passed) && !self.stoppedByDeadline && (self.metadata.failedShards ?? []).isEmpty
    }

    /// The statistics of one group's step; failed iterations are counted on the `exchange` row.
    public func statistics(_ group: GroupResult, _ step: Step) -> StepStatistics? {
        group.steps[step].map { group.statistics(step, $0, window: self.measuredNanoseconds) }
    }
}

/// The figures of one histogram, as every report shows them; times in nanoseconds.
public struct StepStatistics: Sendable, Codable, Equatable {
    /// Samples recorded.
    public package(set) var count: UInt64
    /// Failed iterations counted against this row.
    public package(set) var errors: UInt64
    /// The fastest sample.
    public package(set) var min: Double
    /// The median.
    public package(set) var p50: Double
    /// The 90th percentile.
    public package(set) var p90: Double
    /// The 95th percentile; nil in documents written before it was kept.
    public package(set) var p95: Double?
    /// The 99th percentile.
    public package(set) var p99: Double
    /// The 99.9th percentile.
    public package(set) var p999: Double
    /// The slowest sample.
    public package(set) var max: Double
    /// The mean.
    public package(set) var mean: Double
    /// The standard deviation.
    public package(set) var stddev: Double
    /// Samples per second of measured wall time.
    public package(set) var opsPerSecond: Double

    /// Reads the figures off a histogram; `window` is the measured wall time in nanoseconds.
    public init(_ histogram: Histogram<UInt64>, errors: UInt64 = 0, window: UInt64) {
        let empty = histogram.totalCount == 0
        self.count = histogram.totalCount
        self.errors = errors
        self.min = empty ? 0 : Double(histogram.min)
        self.p50 = empty ? 0 : Double(histogram.valueAtPercentile(50))
        self.p90 = empty ? 0 : Double(histogram.valueAtPercentile(90))
        self.p95 = empty ? 0 : Double(histogram.valueAtPercentile(95))
        self.p99 = empty ? 0 : Double(histogram.valueAtPercentile(99))
        self.p999 = empty ? 0 : Double(histogram.valueAtPercentile(99.9))
        self.max = empty ? 0 : Double(histogram.maxRecorded)
        let moments = empty ? (mean: 0, deviation: 0) : histogram.specialisedMeanAndDeviation
        self.mean = moments.mean
        self.stddev = moments.deviation
        self.opsPerSecond = window == 0 ? 0 : Double(histogram.totalCount) / (Double(window) / 1e9)
    }
}

extension Step {
    /// The order steps appear in within a group: set-up, then an exchange's path, then the whole.
    public static let reportOrder: [Step] = [
        .discover, .connect, .handshake, .keygenClient, .keygenServer, .keygenSession, .encode, .decode, .wrap, .unwrap,
        .encrypt, .decrypt, .sign, .verify, .exchange, .work, .waiting,
    ]

    /// Report order, with steps not in `reportOrder` after those, by name.
    public static func reportOrdering(_ lhs: Step, _ rhs: Step) -> Bool {
        let left = Self.reportOrder.firstIndex(of: lhs) ?? Int.max
        let right = Self.reportOrder.firstIndex(of: rhs) ?? Int.max
        return left == right ? lhs.name < rhs.name : left < right
    }
}

extension Histogram where Count == UInt64 {
    /// `mean`, computed as the package computes it (the same sum, in the same order, so the
    /// figure is the same to the bit) but here, where the package's inlinable iterator is
    /// specialised, and then kept within the exact `min` and `maxRecorded`. The package sums
    /// each bucket's middle value: a bucket can hold samples on one side of its middle only,
    /// and one sample of 248,873,754 ns had a mean of 248,840,192, below its min. Here a single
    /// sample's mean is that sample, and a mean lies between the min and the max; with samples
    /// in more than a bucket or two it is the package's. (The package's own `mean` and
    /// `stdDeviation` walk every bucket through unspecialised generic code, three times for the
    /// pair: with a report's few dozen histograms that was a third of `lab run
    /// Scenarios/quickstart.json`'s CPU time.)
    public var specialisedMean: Double {
        self.withinSamples(self.bucketMean)
    }

    /// The mean as `specialisedMean` gives it, and `stdDeviation` as the package computes it
    /// (about the bucket middles' mean: 0 for a single sample).
    public var specialisedMeanAndDeviation: (mean: Double, deviation: Double) {
        guard self.totalCount > 0 else { return (0, 0) }
        let mean = self.bucketMean
        var geometricDeviationTotal = 0.0
        for iv in self.recordedValues() {
            let deviation = Double(self.medianEquivalentForValue(iv.value)) - mean
            geometricDeviationTotal += (deviation * deviation) * Double(iv.count)
        }
        return (self.withinSamples(mean), (geometricDeviationTotal / Double(self.totalCount)).squareRoot())
    }

    /// The package's `mean`: each bucket's middle value times its count, over the count.
    private var bucketMean: Double {
        guard self.totalCount > 0 else { return 0 }
        var totalValue = 0.0
        for iv in self.recordedValues() {
            totalValue += Double(self.medianEquivalentForValue(iv.value)) * Double(iv.count)
        }
        return totalValue / Double(self.totalCount)
    }

    /// `value` within the samples recorded: at least the min, at most the max.
    private func withinSamples(_ value: Double) -> Double {
        guard self.totalCount > 0 else { return value }
        return Swift.min(Swift.max(value, Double(self.min)), Double(self.maxRecorded))
    }
}
