import Foundation
import Histogram
import LabCore

/// Runs side by side (`lab compare`): per group and step, each candidate's p50, p99 and ops/s
/// as a ratio to the baseline's, and a verdict that takes noise into account.
///
/// A step is called slower or faster only when both hold:
/// - the difference is statistically significant: a two-sided Mann–Whitney U test over the
///   two runs' whole histograms (every sample, ties by bucket) gives p < `alpha`; and
/// - it is larger than the noise floor: the p50 moved by more than `threshold` either way.
///   Samples within one run are not independent of the machine's mood during that run, so
///   significance alone would flag the few-percent drift two identical runs show; the floor
///   is the smallest change worth a verdict on a shared machine (×(1 + threshold) slower or
///   ×1/(1 + threshold) faster).
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
        /// The conclusion.
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
    /// The significance level of the U test.
    public var alpha: Double
    /// Fewer samples than this on either side: no verdict.
    public var minimumSamples: UInt64
    /// Every baseline step, in report order; groups as the baseline orders them.
    public private(set) var rows: [Row] = []
    /// Per candidate, groups matched by flow, suite and provider when the transport differs.
    public private(set) var crossTransport: [[GroupKey: GroupKey]] = []

    /// Compares `candidates` with `baseline`.
    public init(
        baseline: Run,
        candidates: [Run],
        threshold: Double = 0.10,
        alpha: Double = 0.001,
        minimumSamples: UInt64 = 10
    ) {
        self.baseline = baseline
        self.candidates = candidates
        self.threshold = threshold
        self.alpha = alpha
        self.minimumSamples = minimumSamples
        self.crossTransport = candidates.map { _ in [:] }
        let base = baseline.result
        for group in base.groups {
            let matches = candidates.enumerated().map { index, candidate in
                self.match(group.key, in: candidate.result, candidate: index)
            }
            for (step, histogram) in group.orderedSteps {
                let statistics = StepStatistics(histogram, window: base.measuredNanoseconds)
                let cells = zip(candidates, matches).map { candidate, match in
                    guard let match, let other = match.steps[step] else {
                        return Cell(verdict: .missing)
                    }
                    return self.cell(
                        histogram,
                        statistics,
                        other,
                        StepStatistics(other, window: candidate.result.measuredNanoseconds)
                    )
                }
                self.rows.append(Row(key: group.key, step: step, baseline: statistics, cells: cells))
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
            verdict: .noChange
        )
        guard base.totalCount >= self.minimumSamples, other.totalCount >= self.minimumSamples else {
            cell.verdict = .tooFewSamples
            return cell
        }
        let test = MannWhitney(base, other)
        cell.pValue = test.pValue
        cell.superiority = test.superiority
        // The floor is symmetric on a log scale: ×1.1 slower and ×1/1.1 faster are alike.
        if test.pValue < self.alpha, let shift = cell.p50Ratio, shift > 0, abs(log(shift)) > log1p(self.threshold) {
            cell.verdict = shift > 1 ? .slower : .faster
        }
        return cell
    }

    /// Per candidate, the rows it calls slower or faster.
    public func changes(candidate: Int) -> [Row] {
        self.rows.filter { $0.cells[candidate].verdict.isChange }
    }
}

/// The Mann–Whitney U test between two histograms, treating every sample in one bucket as a
/// tie (normal approximation with the tie correction; exact enough for the ≥ 10 samples a
/// verdict needs).
public struct MannWhitney: Sendable {
    /// U for the second histogram: pairs where its sample is larger, ties counted half.
    public var u: Double
    /// The two-sided p-value.
    public var pValue: Double
    /// U ÷ (n₁ n₂): the probability that a sample of the second exceeds one of the first.
    public var superiority: Double

    /// Tests `first` against `second`.
    public init(_ first: Histogram<UInt64>, _ second: Histogram<UInt64>) {
        // Both histograms bucket alike (3 significant digits), so equal values are one bucket.
        var counts: [UInt64: (first: Double, second: Double)] = [:]
        for bucket in first.recordedValues() {
            counts[first.highestEquivalentForValue(bucket.value), default: (0, 0)].first += Double(bucket.count)
        }
        for bucket in second.recordedValues() {
            counts[second.highestEquivalentForValue(bucket.value), default: (0, 0)].second += Double(bucket.count)
        }
        let n1 = Double(first.totalCount)
        let n2 = Double(second.totalCount)
        var below = 0.0
        var u = 0.0
        var ties = 0.0
        for value in counts.keys.sorted() {
            let (a, b) = counts[value]!
            u += b * (below + a / 2)
            below += a
            let t = a + b
            ties += t * t * t - t
        }
        self.u = u
        let n = n1 + n2
        guard n1 > 0, n2 > 0, n > 1 else {
            self.pValue = 1
            self.superiority = 0.5
            return
        }
        self.superiority = u / (n1 * n2)
        let variance = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1)))
        guard variance > 0 else {
            // Every sample in one bucket: no evidence of a difference.
            self.pValue = 1
            return
        }
        let z = (u - n1 * n2 / 2) / variance.squareRoot()
        self.pValue = erfc(abs(z) / 2.0.squareRoot())
    }
}
