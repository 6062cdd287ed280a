import Foundation
import Histogram
import LabCharts
import LabCore
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
///   a 500 µs one by 3%), and the shift of the whole distribution (the Hodges–Lehmann
///   estimate, `RatioEstimate`) lies beyond that floor the same way: a p50 jumps between
///   the modes of a step that has several. Samples within one run are not independent of the
///   machine's mood during that run, so significance alone would flag the drift two
///   identical runs show.
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
    /// What the verdicts compare, and why.
    public private(set) var conditions = Conditions(basis: .time, reasons: [], exchangeUnjudged: false, remedy: nil)
    /// Per candidate, the machine's change against the baseline's (`machineChange`), with its
    /// figures: then nothing of that candidate is judged. Nil when the CPU was alike.
    public private(set) var machineChanged: [String?] = []
    /// A run whose exchanges are waiting for more than this share of their mean time has its
    /// exchanges judged on their work: 50%.
    public static let mostlyWaiting = 0.5
    /// Two runs whose threads waited for a core for shares of the cores' time this far apart
    /// ran on machines with different CPU to spare: 10 points (a same-priority busy loop on
    /// one of two cores moved the quickstart's from 0.3% to 37%; something else's 70 ms in a
    /// 0.9 s quickstart, to 8%).
    public static let waitingChange = 0.10
    /// Reference operations (`Calibration`) this much slower or faster in one run than in
    /// the other, at both ends (`calibrationChange(_:_:)`), mean the machine ran at another
    /// speed: 5%. This VM's host has speed states: in 20 pairs of quickstarts (2026-11-28)
    /// the one whose groups' work all moved by ×0.65–0.83 had the calibration ×0.90 apart.
    public static let calibrationChange = 0.05
    /// How sure the rank-sum test must be that merged runs' reference operations differ: p < 0.01.
    public static let calibrationSignificance = 0.01
    /// Whether rows are judged though the machine changed (`lab compare
    /// --despite-machine-change`): the verdict still says it changed.
    public var judgesDespiteMachineChange = false
    /// Intervals each run needs for its ops/s to be judged: 5.
    public static let rateIntervals = 5

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
        judgesThroughput: Bool = true,
        despiteMachineChange: Bool = false
    ) {
        self.judgesDespiteMachineChange = despiteMachineChange
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
        // Groups of one run shared its machine, whatever it did: no change to speak of.
        let oneRun = commonShare > 1 && !judgesThroughput
        self.conditions = Self.conditions(of: [baseline] + candidates, oneRun: oneRun)
        self.machineChanged = candidates.map { oneRun ? nil : Self.machineChange(baseline, $0) }
        self.judgeRows(self.makeRows())
    }

    /// The two histograms a cell's verdict tests: the baseline's and the candidate's.
    typealias Pair = (Histogram<UInt64>, Histogram<UInt64>)

    /// A row per baseline step with each candidate's figures; per row and candidate, both
    /// histograms, for the verdicts once the common factor is known (nil where not judged).
    private mutating func makeRows() -> [[Pair?]] {
        let base = self.baseline.result
        var pairs: [[Pair?]] = []
        for group in base.groups {
            let matches = self.candidates.indices.map { index in
                self.match(group.key, in: self.candidates[index].result, candidate: index)
            }
            for (step, wall) in group.orderedSteps {
                let (measure, histogram, unjudged) = self.compared(step, of: group, wall: wall)
                let statistics = StepStatistics(histogram ?? wall, window: base.measuredNanoseconds)
                let cells = matches.enumerated().map { index, match in
                    self.candidateCell(
                        step,
                        measure: measure,
                        base: (histogram ?? wall, statistics, histogram != nil),
                        match: match,
                        candidate: index,
                        unjudged: unjudged
                    )
                }
                self.rows.append(
                    Row(
                        key: group.key,
                        step: step,
                        baseline: statistics,
                        cells: cells.map(\.cell),
                        measure: measure,
                        flowKind: group.flowKind
                    )
                )
                pairs.append(cells.map(\.pair))
            }
        }
        return pairs
    }

    /// Candidate `index`'s cell of `step` against the baseline's (`base`: its histogram, its
    /// figures, and whether it has the measure compared), and the histograms its verdict
    /// tests; nil when not judged.
    private func candidateCell(
        _ step: Step,
        measure: Measure,
        base: (histogram: Histogram<UInt64>, statistics: StepStatistics, measured: Bool),
        match: GroupResult?,
        candidate index: Int,
        unjudged: String?
    ) -> (cell: Cell, pair: Pair?) {
        guard let match, let otherWall = match.steps[step] else { return (Cell(verdict: .missing), nil) }
        let other = measure == .cpu ? Self.cpuHistogram(step, of: match) : otherWall
        let window = self.candidates[index].result.measuredNanoseconds
        var cell = self.cell(
            base.histogram,
            base.statistics,
            other ?? otherWall,
            StepStatistics(other ?? otherWall, window: window)
        )
        if let reason = self.machineChanged[index], !self.judgesDespiteMachineChange {
            cell.verdict = .notJudged
            cell.note = reason
        } else if let unjudged {
            cell.verdict = .notJudged
            cell.note = unjudged
        } else if cell.verdict != .tooFewSamples, !base.measured || other == nil {
            cell.verdict = .notJudged
            cell.note = "no CPU time read for this step: it is judged on work only where both runs read it"
        }
        return (cell, cell.verdict == .notJudged ? nil : (base.histogram, other ?? otherWall))
    }

    /// Judges every cell, candidate by candidate, against the candidate's common factor.
    private mutating func judgeRows(_ pairs: [[Pair?]]) {
        for index in self.candidates.indices {
            let common = self.commonMove(candidate: index)
            self.common.append(common)
            let rates = self.rateNote(candidate: index)
            for row in self.rows.indices {
                let exchange = self.rows[row].step == .exchange
                if let (base, other) = pairs[row][index] {
                    self.judge(
                        &self.rows[row].cells[index],
                        self.rows[row],
                        base,
                        other,
                        factor: common.factor,
                        // Only the exchange row carries ops/s.
                        rates: exchange && rates == nil ? self.rateSamples(self.rows[row].key, candidate: index) : nil
                    )
                }
                // Why the exchange's ops/s was not judged, unless the row says why it was not judged at all.
                if exchange, self.rows[row].cells[index].note == nil { self.rows[row].cells[index].note = rates }
            }
        }
    }

    /// What the row of `step` compares, its baseline histogram of that (nil when the step
    /// has no CPU time to compare), and why it is not judged at all, if it is not.
    private func compared(
        _ step: Step,
        of group: GroupResult,
        wall: Histogram<UInt64>
    ) -> (Measure, Histogram<UInt64>?, String?) {
        if step == .waiting {
            return (.time, wall, "waiting is the queue's, the network's and the peer's time, not the code's")
        }
        if step.name.hasPrefix(Step.exchange.name + "."), step != .work {
            // The open model's service time: waiting too, when the queue is what the run measured.
            return (.time, wall, self.conditions.exchangeUnjudged ? self.conditions.reasons.first : nil)
        }
        if step == .exchange {
            guard self.conditions.exchangeUnjudged else { return (.time, wall, nil) }
            return (.time, wall, self.conditions.reasons.first)
        }
        if step == .work { return (.cpu, wall, nil) }
        guard self.conditions.basis == .work else { return (.time, wall, nil) }
        return (.cpu, Self.cpuHistogram(step, of: group), nil)
    }

    /// The CPU times of `step`'s samples in `group` (`StepDetail.cpu`); `work` is CPU time
    /// already.
    static func cpuHistogram(_ step: Step, of group: GroupResult) -> Histogram<UInt64>? {
        step == .work ? group.steps[.work] : group.details[step]?.cpu
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

    /// Keeps the rows `isIncluded` accepts, in order.
    public mutating func keepRows(_ isIncluded: (Row) -> Bool) {
        self.rows = self.rows.filter(isIncluded)
    }

    /// The fields the two sides differ in by selection (`lab compare R#{provider=a}
    /// R#{provider=b}`): row labels leave them out, since each side has its own value, and
    /// sentences name the sides by those values.
    public var across: [String] = []
}
