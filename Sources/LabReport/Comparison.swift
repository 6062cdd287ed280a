import Foundation
import Histogram
import LabCharts
public import LabCore
public import LabResults

/// Runs side by side (`lab compare`): per group and step, each candidate's p50, p99 and ops/s
/// as a ratio to the baseline's, and a verdict that takes noise into account.
///
/// Three figures are judged, the ones a reader acts on; each *moves* only when both its
/// change is statistically significant and larger than its noise floor:
/// - **p50**: a two-sided Mann–Whitney U test over the two runs' whole histograms (every
///   sample, ties by bucket, `RankSumTest`) gives p < `alpha`, and the p50 moved by more than
///   the step's floor either way — `threshold`, or `shortThreshold` for a step whose baseline
///   p50 is under `shortStep` (a 20 µs step moves by 10% between two processes of one binary;
///   a 500 µs one by 3%). Samples within one run are not independent of the machine's mood
///   during that run, so significance alone would flag the drift two identical runs show.
/// - **p99**: a two-proportion test on the samples above the two runs' pooled p99
///   (`RankSumTest.tailPValue`) gives p < `alpha`, and the p99 moved by more than twice the
///   step's floor (a tail is noisier than a median). Judged only when each run has at least
///   `tailSamples` samples of the step (5 expected above the p99).
/// - **ops/s**, on each group's `exchange` row: the run's throughput moved by more than
///   `threshold`. A run has one throughput, not a sample of them, so no test applies: the
///   floor alone guards against noise.
///
/// A step is **slower** when any of its figures moved the slow way (a p50 up, a p99 up,
/// ops/s down), **faster** when some moved the fast way and none the slow way; the verdict
/// names the figures that moved (`Cell.moves`).
///
/// **The run as a whole.** A shared machine sometimes runs a whole process 10–30% slower
/// (a neighbour on the same physical core). When at least `commonShare` of a candidate's
/// steps moved together — each within its floor of their median p50 ratio — that median is
/// the run's *common factor*: the report states it as a verdict of its own, and each step is
/// judged against it (its p50 ratio ÷ the factor, its samples scaled by it), so the step
/// that moved differently stands out. A change that touches only some steps (one provider,
/// one group) does not move three quarters of them alike and is judged as measured.
/// `commonShare` > 1 turns this off.
///
/// Steps with fewer than `minimumSamples` samples on either side (keys made once per run)
/// get no verdict.
public struct Comparison: Sendable {
    /// One run in the comparison.
    public struct Run: Sendable {
        /// Its name in the report (a folder name, or `--label`).
        public var label: String
        /// Its results.
        public var result: RunResult

        /// A run.
        public init(label: String, result: RunResult) {
            self.label = label
            self.result = result
        }
    }

    /// What the comparison concludes about one step of one candidate.
    public enum Verdict: String, Sendable, Codable {
        case slower
        case faster
        case noChange = "no significant change"
        case tooFewSamples = "too few samples"
        case missing = "not in this run"

        /// Whether the verdict is a change.
        public var isChange: Bool { self == .slower || self == .faster }
    }

    /// A figure the verdicts judge.
    public enum Figure: String, Sendable, CaseIterable {
        case p50
        case p99
        case ops = "ops/s"
    }

    /// A figure that moved: significantly and beyond its floor.
    public struct Move: Sendable, Equatable {
        /// Which figure.
        public var figure: Figure
        /// Candidate ÷ baseline, against the candidate's common factor when it applies.
        public var ratio: Double
        /// Whether the move is the slow way (a time up, a rate down).
        public var slower: Bool
    }

    /// One candidate's figures for a step, against the baseline.
    public struct Cell: Sendable {
        /// The candidate's figures, nil when the step is not in this run.
        public var statistics: StepStatistics?
        /// Candidate ÷ baseline.
        public var p50Ratio: Double?
        public var p99Ratio: Double?
        public var opsRatio: Double?
        /// The U test's two-sided p-value.
        public var pValue: Double?
        /// P(candidate sample > baseline sample), ties counted half: 0.5 means no shift.
        public var superiority: Double?
        /// The p50 ratio ÷ the candidate's common factor: the step against the run as a whole.
        public var relativeRatio: Double?
        /// The noise floor this step was held to (`threshold` or `shortThreshold`).
        public var floor: Double = 0
        /// The figures that moved, in `Figure` order.
        public var moves: [Move] = []
        /// The conclusion.
        public var verdict: Verdict

        /// The figures that moved with their ratios, the verdict's way first: `p99 ×3.900,
        /// ops/s ×0.566`; empty when none did.
        public var movesText: String {
            let first = self.moves.filter { $0.slower == (self.verdict == .slower) }
            let others = self.moves.filter { $0.slower != (self.verdict == .slower) }
            return (first + others).map { move in
                "\(move.figure.rawValue) ×\(Numbers.fixed(move.ratio, 3))"
                    + (move.slower == (self.verdict == .slower) ? "" : " (\(move.slower ? "slower" : "faster"))")
            }.joined(separator: ", ")
        }
    }

    /// How a candidate moved as a whole (see the type's documentation).
    public struct Common: Sendable {
        /// The median p50 ratio over the steps with enough samples (1 without any).
        public var median: Double
        /// How many of those steps lie within their floor of the median, and of how many.
        public var together: Int
        public var steps: Int
        /// Whether the steps moved together enough for the median to be the common factor.
        public var applies: Bool
        /// The factor each step is judged against: the median when it applies, else 1.
        public var factor: Double { self.applies ? self.median : 1 }
        /// Slower or faster beyond the noise floor, or no significant change.
        public var verdict: Verdict
    }

    /// One step of one group, across the runs.
    public struct Row: Sendable {
        /// The baseline's group key.
        public var key: GroupKey
        /// The step.
        public var step: Step
        /// The baseline's figures.
        public var baseline: StepStatistics
        /// One cell per candidate, in order.
        public var cells: [Cell]
    }

    /// The baseline, first on the command line.
    public var baseline: Run
    /// The runs compared with it.
    public var candidates: [Run]
    /// The noise floor: the smallest p50 change (as a fraction) called a change.
    public var threshold: Double
    /// The floor of a short step.
    public var shortThreshold: Double
    /// A step whose baseline p50 is under this many nanoseconds is short.
    public var shortStep: Double
    /// The share of steps that must move together for a common factor.
    public var commonShare: Double
    /// The significance level of the U test.
    public var alpha: Double
    /// Fewer samples than this on either side: no verdict.
    public var minimumSamples: UInt64
    /// Fewer samples than this on either side: no verdict on the p99.
    public var tailSamples: UInt64 = 500
    /// Whether ops/s is judged. Off for groups of one run (`InRunComparison`): a group's ops/s
    /// is its share of the run's throughput, which follows the flows' weights, not its speed.
    public var judgesThroughput: Bool
    /// Every baseline step, in report order; groups as the baseline orders them.
    public private(set) var rows: [Row] = []
    /// Per candidate, groups matched by flow, suite and provider when the transport differs.
    public private(set) var crossTransport: [[GroupKey: GroupKey]] = []
    /// Per candidate, how it moved as a whole.
    public private(set) var common: [Common] = []

    /// Compares `candidates` with `baseline`.
    public init(
        baseline: Run,
        candidates: [Run],
        threshold: Double = 0.10,
        shortThreshold: Double = 0.25,
        shortStep: Double = 100_000,
        commonShare: Double = 0.75,
        alpha: Double = 0.001,
        minimumSamples: UInt64 = 10,
        judgesThroughput: Bool = true
    ) {
        self.judgesThroughput = judgesThroughput
        self.baseline = baseline
        self.candidates = candidates
        self.threshold = threshold
        self.shortThreshold = max(shortThreshold, threshold)
        self.shortStep = shortStep
        self.commonShare = commonShare
        self.alpha = alpha
        self.minimumSamples = minimumSamples
        self.crossTransport = candidates.map { _ in [:] }
        let base = baseline.result
        // Per row and candidate, both histograms, for the verdicts once the common factor is known.
        var pairs: [[(Histogram<UInt64>, Histogram<UInt64>)?]] = []
        for group in base.groups {
            let matches = candidates.enumerated().map { index, candidate in
                self.match(group.key, in: candidate.result, candidate: index)
            }
            for (step, histogram) in group.orderedSteps {
                let statistics = StepStatistics(histogram, window: base.measuredNanoseconds)
                let others = matches.map { $0?.steps[step] }
                let cells = zip(candidates, others).map { candidate, other in
                    guard let other else { return Cell(verdict: .missing) }
                    return self.cell(
                        histogram,
                        statistics,
                        other,
                        StepStatistics(other, window: candidate.result.measuredNanoseconds)
                    )
                }
                self.rows.append(Row(key: group.key, step: step, baseline: statistics, cells: cells))
                pairs.append(others.map { other in other.map { (histogram, $0) } })
            }
        }
        for index in candidates.indices {
            let common = self.commonMove(candidate: index)
            self.common.append(common)
            for row in self.rows.indices {
                guard let (base, other) = pairs[row][index] else { continue }
                self.judge(&self.rows[row].cells[index], self.rows[row].step, base, other, factor: common.factor)
            }
        }
    }

    /// The candidate's group for `key`: the same key, else the only group with the same flow,
    /// suite and provider (a run over another transport).
    private mutating func match(_ key: GroupKey, in result: RunResult, candidate: Int) -> GroupResult? {
        if let exact = result.groups.first(where: { $0.key == key }) { return exact }
        let similar = result.groups.filter {
            $0.key.flow == key.flow && $0.key.suite == key.suite && $0.key.provider == key.provider
        }
        guard similar.count == 1 else { return nil }
        self.crossTransport[candidate][key] = similar[0].key
        return similar[0]
    }

    private func cell(
        _ base: Histogram<UInt64>,
        _ baseStatistics: StepStatistics,
        _ other: Histogram<UInt64>,
        _ statistics: StepStatistics
    ) -> Cell {
        func ratio(_ new: Double, _ old: Double) -> Double? { old > 0 ? new / old : nil }
        var cell = Cell(
            statistics: statistics,
            p50Ratio: ratio(statistics.p50, baseStatistics.p50),
            p99Ratio: ratio(statistics.p99, baseStatistics.p99),
            opsRatio: ratio(statistics.opsPerSecond, baseStatistics.opsPerSecond),
            floor: baseStatistics.p50 < self.shortStep ? self.shortThreshold : self.threshold,
            verdict: .noChange
        )
        if base.totalCount < self.minimumSamples || other.totalCount < self.minimumSamples {
            cell.verdict = .tooFewSamples
        }
        return cell
    }

    /// Whether `ratio` lies beyond `floor`, which is symmetric on a log scale: ×1.1 slower and
    /// ×1/1.1 faster are alike.
    private static func beyond(_ ratio: Double, _ floor: Double) -> Bool {
        ratio > 0 && abs(log(ratio)) > log1p(floor)
    }

    /// The median p50 ratio of candidate `index` and whether its steps moved together.
    private func commonMove(candidate index: Int) -> Common {
        let judged = self.rows.compactMap { row -> (ratio: Double, floor: Double)? in
            let cell = row.cells[index]
            guard cell.verdict == .noChange, let ratio = cell.p50Ratio, ratio > 0 else { return nil }
            return (ratio, cell.floor)
        }
        guard !judged.isEmpty else {
            return Common(median: 1, together: 0, steps: 0, applies: false, verdict: .noChange)
        }
        let median = Statistics.median(judged.map(\.ratio)) ?? 1
        let together = judged.filter { !Self.beyond($0.ratio / median, $0.floor) }.count
        // Two steps that agree are no evidence about the run as a whole.
        let applies = judged.count >= 3 && Double(together) >= self.commonShare * Double(judged.count)
        var verdict = Verdict.noChange
        if applies, Self.beyond(median, self.threshold) { verdict = median > 1 ? .slower : .faster }
        return Common(median: median, together: together, steps: judged.count, applies: applies, verdict: verdict)
    }

    /// The verdict on one step, against the candidate's common factor.
    private func judge(
        _ cell: inout Cell,
        _ step: Step,
        _ base: Histogram<UInt64>,
        _ other: Histogram<UInt64>,
        factor: Double
    ) {
        guard let ratio = cell.p50Ratio else { return }
        cell.relativeRatio = ratio / factor
        guard cell.verdict != .tooFewSamples else { return }
        let test = RankSumTest(base, other, scale: 1 / factor)
        cell.pValue = test.twoSidedPValue
        cell.superiority = test.superiority
        if test.twoSidedPValue < self.alpha, Self.beyond(ratio / factor, cell.floor) {
            cell.moves.append(Move(figure: .p50, ratio: ratio / factor, slower: ratio / factor > 1))
        }
        if let p99 = cell.p99Ratio, min(base.totalCount, other.totalCount) >= self.tailSamples {
            let tail = test.tailPValue()
            // The tail test and the ratio must agree on the direction.
            if tail.pValue < self.alpha, tail.secondHasMore == (p99 / factor > 1),
                Self.beyond(p99 / factor, 2 * cell.floor)
            {
                cell.moves.append(Move(figure: .p99, ratio: p99 / factor, slower: p99 / factor > 1))
            }
        }
        if self.judgesThroughput, step == .exchange, let ops = cell.opsRatio, Self.beyond(ops * factor, self.threshold)
        {
            cell.moves.append(Move(figure: .ops, ratio: ops * factor, slower: ops * factor < 1))
        }
        if cell.moves.contains(where: \.slower) {
            cell.verdict = .slower
        } else if !cell.moves.isEmpty {
            cell.verdict = .faster
        }
    }

    /// Whether candidate `index` shares no step with the baseline: no group matched, so
    /// nothing was compared.
    public func comparesNothing(candidate index: Int) -> Bool {
        self.rows.allSatisfy { $0.cells[index].verdict == .missing }
    }

    /// Whether candidate `index` got slower: a step, or the run as a whole.
    public func isSlower(candidate index: Int) -> Bool {
        self.common[index].verdict == .slower || self.rows.contains { $0.cells[index].verdict == .slower }
    }

    /// Keeps the rows `isIncluded` accepts, in order.
    public mutating func keepRows(_ isIncluded: (Row) -> Bool) {
        self.rows = self.rows.filter(isIncluded)
    }

    /// Per candidate, the rows it calls slower or faster.
    public func changes(candidate: Int) -> [Row] {
        self.rows.filter { $0.cells[candidate].verdict.isChange }
    }
}
