public import Foundation
public import Histogram
public import LabCore

/// A run's measurements over time: for each group, one histogram per step and a count of
/// failed iterations per interval of `width` (`report.interval`, 1 s by default).
///
/// An iteration belongs to the interval in which it started (in the open model, in which it
/// was due to start: the time its latency is measured from), wherever it ends; a server stall
/// from second 3 to 4 therefore shows in interval 3, as the exchanges it held, and not in
/// interval 4, when they came back. Interval `i` spans `origin + i × width` to the next, on
/// the wall clock; `origin` is the start of the measured part of the run. Counts add up to
/// the run's: every measured sample is in exactly one interval.
///
/// Interval histograms keep two significant digits (1% resolution): enough for a time series,
/// a tenth of the buckets of the run's own three-digit histograms.
public struct RunIntervals: Sendable, Equatable {
    /// The interval histograms' precision.
    public static let significantDigits = SignificantDigits.two
    /// The widths a run may keep (`report.interval`), in nanoseconds.
    public static let widths: ClosedRange<UInt64> = 100_000_000...3_600_000_000_000
    /// The last interval index kept: a year of 100 ms intervals (a document claiming more is
    /// refused, rather than made into a time line of that many rows).
    public static let maximumIndex = 315_360_000

    /// Each interval's width, in nanoseconds.
    public var width: UInt64
    /// The wall-clock instant interval 0 starts at.
    public var origin: Date
    /// Per group, the intervals that had samples or failures, by index.
    public var groups: [GroupKey: [Int: Slice]]

    /// One group's measurements in one interval.
    public struct Slice: Sendable, Equatable {
        /// A histogram of nanoseconds per step, in the interval layout (`RunIntervals.histogram()`).
        public var steps: [Step: SparseHistogram]
        /// Failed iterations that started in the interval.
        public var errors: UInt64
        /// Iterations that ended, successfully, in the interval, wherever they started: the
        /// throughput the server delivered then (0 in documents written before runs kept it).
        public var completed: UInt64

        /// A slice given directly.
        public init(steps: [Step: SparseHistogram] = [:], errors: UInt64 = 0, completed: UInt64 = 0) {
            self.steps = steps
            self.errors = errors
            self.completed = completed
        }

        /// Iterations that started in the interval: the `exchange` step's samples and the failures.
        public var iterations: UInt64 { (self.steps[.exchange].map(Self.total) ?? 0) + self.errors }

        static func total(_ histogram: SparseHistogram) -> UInt64 { histogram.counts.reduce(0) { $0 + $1.count } }

        /// Adds `other`'s samples and failures; throws if a histogram is not in the interval layout.
        public mutating func add(_ other: Slice) throws {
            self.errors += other.errors
            self.completed += other.completed
            for (step, sparse) in other.steps {
                guard let existing = self.steps[step] else {
                    self.steps[step] = sparse
                    continue
                }
                var histogram = try RunIntervals.rebuild(existing, path: step.name)
                histogram.addWidening(try RunIntervals.rebuild(sparse, path: step.name))
                self.steps[step] = SparseHistogram(histogram)
            }
        }
    }

    /// Intervals given directly.
    public init(width: UInt64, origin: Date, groups: [GroupKey: [Int: Slice]] = [:]) {
        self.width = width
        self.origin = origin
        self.groups = groups
    }

    /// An empty interval histogram: 1 ns and up, two significant digits, growing as needed.
    public static func histogram() -> Histogram<UInt64> {
        Histograms.empty(digits: Self.significantDigits, spanning: 1 << 20)
    }

    /// `sparse` as a histogram, checked to be in the interval layout (histograms of another
    /// layout do not add up); `path` names it in errors.
    public static func rebuild(_ sparse: SparseHistogram, path: String) throws -> Histogram<UInt64> {
        guard sparse.significantDigits == Int(Self.significantDigits.rawValue), sparse.lowestDiscernibleValue == 1
        else {
            throw LabError(
                .invalidScenario,
                "\(path): an interval histogram has \(Self.significantDigits.rawValue) significant digits and a lowest discernible value of 1, not \(sparse.significantDigits) and \(sparse.lowestDiscernibleValue)"
            )
        }
        return try sparse.histogram(path: path)
    }

    /// Adds `slice` to `group`'s interval `index`.
    public mutating func add(_ slice: Slice, group: GroupKey, index: Int) throws {
        if self.groups[group]?[index] == nil {
            self.groups[group, default: [:]][index] = slice
        } else {
            try self.groups[group]![index]!.add(slice)
        }
    }

    /// The wall-clock start of interval `index`.
    public func start(of index: Int) -> Date {
        self.origin.addingTimeInterval(Double(index) * Double(self.width) / 1e9)
    }

    /// The interval indices that have data in any group, in order, from the first to the last
    /// with none left out (an interval without samples is a gap the reader should see).
    public var indices: ClosedRange<Int>? {
        let all = self.groups.values.flatMap(\.keys)
        guard let first = all.min(), let last = all.max() else { return nil }
        return first...last
    }

    /// One step's figures in one interval of one group.
    public struct Point: Sendable, Equatable {
        /// The interval.
        public var index: Int
        /// Samples that started in it.
        public var count: UInt64
        /// The median, in nanoseconds (0 without samples, as the others).
        public var p50: Double
        /// The 90th percentile.
        public var p90: Double
        /// The 99th percentile.
        public var p99: Double
        /// The slowest sample.
        public var max: Double
        /// Samples per second of the interval.
        public var perSecond: Double
    }

    /// `group`'s figures for `step` in every interval of `indices` (zero counts where it had none).
    public func points(_ group: GroupKey, _ step: Step, over indices: ClosedRange<Int>) -> [Point] {
        let seconds = Double(self.width) / 1e9
        return indices.map { index in
            guard let sparse = self.groups[group]?[index]?.steps[step],
                let histogram = try? Self.rebuild(sparse, path: step.name), histogram.totalCount > 0
            else { return Point(index: index, count: 0, p50: 0, p90: 0, p99: 0, max: 0, perSecond: 0) }
            return Point(
                index: index,
                count: histogram.totalCount,
                p50: Double(histogram.valueAtPercentile(50)),
                p90: Double(histogram.valueAtPercentile(90)),
                p99: Double(histogram.valueAtPercentile(99)),
                max: Double(histogram.maxRecorded),
                perSecond: Double(histogram.totalCount) / seconds
            )
        }
    }

    /// The steps `group` recorded in any interval, in report order.
    public func steps(of group: GroupKey) -> [Step] {
        let steps = Set((self.groups[group] ?? [:]).values.flatMap(\.steps.keys))
        return steps.sorted(by: Step.reportOrdering)
    }

    /// Several runs' intervals on one time line: each run's intervals are moved by the whole
    /// number of intervals nearest to the gap between its origin and the earliest run's, then
    /// added. Shards started together (`lab run --start-at`) have origins milliseconds apart
    /// and move by none. Returns the merge and the largest distance, in seconds, between a
    /// run's interval grid and the merge's (what the rounding moved a run's samples by at most).
    public static func merged(
        _ runs: [RunIntervals],
        sources: [String]
    ) throws -> (intervals: RunIntervals, offset: Double) {
        guard let first = runs.first else { throw LabError(.invalidScenario, "No intervals to merge") }
        for (run, source) in zip(runs, sources) where run.width != first.width {
            throw LabError(
                .invalidScenario,
                "\(source) has intervals of \(TimeSpan(nanoseconds: run.width)), \(sources[0]) of \(TimeSpan(nanoseconds: first.width)): only intervals of one width merge (give every run the same report.interval)"
            )
        }
        let origin = runs.map(\.origin).min()!
        let width = Double(first.width) / 1e9
        var merged = RunIntervals(width: first.width, origin: origin)
        var largest = 0.0
        for (run, source) in zip(runs, sources) {
            let gap = run.origin.timeIntervalSince(origin)
            guard let shift = Int(exactly: (gap / width).rounded()), shift <= Self.maximumIndex else {
                throw LabError(
                    .invalidScenario,
                    "\(source) began \(TimeSpan.format(nanoseconds: gap * 1e9)) after \(sources[0]): too far apart to put their intervals on one time line"
                )
            }
            largest = Swift.max(largest, abs(gap - Double(shift) * width))
            for (group, slices) in run.groups {
                for (index, slice) in slices {
                    guard index + shift <= Self.maximumIndex else {
                        throw LabError(
                            .invalidScenario,
                            "\(source): interval \(index + shift) is past the last one kept"
                        )
                    }
                    do {
                        try merged.add(slice, group: group, index: index + shift)
                    } catch let error as LabError {
                        throw LabError(.invalidScenario, "\(source): \(error.message)")
                    }
                }
            }
        }
        return (merged, largest)
    }
}

extension RunIntervals: Codable {
    private enum CodingKeys: String, CodingKey {
        case widthNanoseconds
        case origin
        case groups
    }

    /// One group's intervals, as `results.json` holds them.
    private struct GroupEntry: Codable {
        var key: GroupKey
        var intervals: [IntervalEntry]
    }

    /// One interval: its index, its start (for readers; recomputed from the origin on load),
    /// the failures and each step's histogram.
    private struct IntervalEntry: Codable {
        var index: Int
        var start: Date
        var errors: UInt64
        var completed: UInt64?
        var steps: [StepEntry]
    }

    private struct StepEntry: Codable {
        var step: String
        var histogram: SparseHistogram
    }

    /// Encodes groups by key, intervals by index, steps in report order.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.width, forKey: .widthNanoseconds)
        try container.encode(self.origin, forKey: .origin)
        let groups = self.groups.sorted { $0.key < $1.key }.map { key, slices in
            GroupEntry(
                key: key,
                intervals: slices.sorted { $0.key < $1.key }.map { index, slice in
                    IntervalEntry(
                        index: index,
                        start: self.start(of: index),
                        errors: slice.errors,
                        completed: slice.completed > 0 ? slice.completed : nil,
                        steps: slice.steps.sorted { Step.reportOrdering($0.key, $1.key) }.map {
                            StepEntry(step: $0.key.name, histogram: $0.value)
                        }
                    )
                }
            )
        }
        try container.encode(groups, forKey: .groups)
    }

    /// Decodes, checking every histogram's layout, that no group, interval or step appears
    /// twice, and that the width is not zero; problems name their JSON path.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.width = try container.decode(UInt64.self, forKey: .widthNanoseconds)
        self.origin = try container.decode(Date.self, forKey: .origin)
        let entries = try container.decode([GroupEntry].self, forKey: .groups)
        func corrupt(_ message: String) -> DecodingError {
            DecodingError.dataCorruptedError(forKey: .groups, in: container, debugDescription: message)
        }
        guard Self.widths.contains(self.width) else {
            throw DecodingError.dataCorruptedError(
                forKey: .widthNanoseconds,
                in: container,
                debugDescription: "expected an interval width from 100 ms to 1 h, found \(self.width) ns"
            )
        }
        self.groups = [:]
        for (groupIndex, entry) in entries.enumerated() {
            guard self.groups[entry.key] == nil else {
                throw corrupt("[\(groupIndex)]: group '\(entry.key)' appears twice")
            }
            var slices: [Int: Slice] = [:]
            for (position, interval) in entry.intervals.enumerated() {
                let path = "[\(groupIndex)].intervals[\(position)]"
                guard (0...Self.maximumIndex).contains(interval.index) else {
                    throw corrupt("\(path).index: expected 0 to \(Self.maximumIndex), found \(interval.index)")
                }
                guard slices[interval.index] == nil else {
                    throw corrupt("\(path): interval \(interval.index) appears twice")
                }
                var slice = Slice(errors: interval.errors, completed: interval.completed ?? 0)
                for (stepIndex, step) in interval.steps.enumerated() {
                    guard slice.steps[Step(step.step)] == nil else {
                        throw corrupt("\(path).steps[\(stepIndex)]: step '\(step.step)' appears twice")
                    }
                    do {
                        _ = try Self.rebuild(step.histogram, path: "steps[\(stepIndex)].histogram")
                    } catch let error as LabError {
                        throw corrupt("\(path).\(error.message)")
                    }
                    slice.steps[Step(step.step)] = step.histogram
                }
                slices[interval.index] = slice
            }
            self.groups[entry.key] = slices
        }
    }
}
