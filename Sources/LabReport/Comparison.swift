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
    /// One run in the comparison.
    public struct Run: Sendable {
        /// Its name in the report (a folder name, or `--label`).
        public var label: String
        /// Its results.
        public var result: RunResult
        /// What a verdict's sentence calls it, when not its label: the values its selection
        /// set differently from the other side's (`openssl` for `R#{provider=openssl}`).
        public var name: String?

        /// A run.
        public init(label: String, result: RunResult, name: String? = nil) {
            self.label = label
            self.result = result
            self.name = name
        }

        /// Its name in a verdict's sentence.
        public var sentenceName: String { self.name ?? self.label }
    }

    /// What the verdicts compare (docs/reports.md, "What a verdict compares").
    public enum Basis: String, Sendable, Codable {
        /// Each step's wall time, and the exchange's: what a client waits.
        case time
        /// The steps' CPU time on their threads, and each exchange's work (`Step.work`):
        /// what the suite and provider cost, whatever the queue did. Used when a run was
        /// saturated or its exchanges were mostly waiting, and every run read its steps'
        /// usage (`report.stepUsage`).
        case work
    }

    /// Which of a step's measurements a row compares.
    public enum Measure: String, Sendable, Codable {
        /// Wall time.
        case time
        /// The thread's CPU time (`StepDetail.cpu`), or the exchange's work.
        case cpu
    }

    /// What the runs' conditions allow a comparison to judge.
    public struct Conditions: Sendable {
        /// What the verdicts compare.
        public var basis: Basis
        /// Why: one sentence per cause (a saturated run, an exchange mostly waiting), with
        /// its figures; empty for the time basis on unsaturated runs.
        public var reasons: [String]
        /// Whether the exchange's time is left unjudged: the queue, not the code, made it.
        public var exchangeUnjudged: Bool
        /// What to change for a comparison of the exchange's own time; nil when judged.
        public var remedy: String?
    }

    /// What the comparison concludes about one step of one candidate.
    public enum Verdict: String, Sendable, Codable {
        case slower
        case faster
        case noChange = "no significant change"
        case tooFewSamples = "too few samples"
        case missing = "not in this run"
        /// The data cannot carry a verdict: the cell's `note` says why.
        case notJudged = "not judged"

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
        /// The shift of the whole distribution (Hodges–Lehmann, second ÷ first, against the
        /// common factor), when the p50 moved significantly beyond the floor: it must too.
        public var shiftRatio: Double?
        /// The figures that moved, in `Figure` order.
        public var moves: [Move] = []
        /// The conclusion.
        public var verdict: Verdict
        /// Why the cell is not judged (`notJudged`), or why its ops/s is not: the reader's
        /// one sentence.
        public var note: String?

        /// The figures that moved with their ratios, the verdict's way first: `p99 ×3.900,
        /// ops/s ×0.566`; empty when none did.
        public var movesText: String {
            let first = self.moves.filter { $0.slower == (self.verdict == .slower) }
            let others = self.moves.filter { $0.slower != (self.verdict == .slower) }
            return (first + others).map { move in
                "\(move.figure.rawValue) ×\(Numbers.fixed(self.columnRatio(move.figure) ?? move.ratio, 3))"
                    + (self.columnRatio(move.figure).map { abs($0 - move.ratio) > 0.0005 } == true
                        ? " (×\(Numbers.fixed(move.ratio, 3)) vs run)" : "")
                    + (move.slower == (self.verdict == .slower) ? "" : " (\(move.slower ? "slower" : "faster"))")
            }.joined(separator: ", ")
        }

        /// The ratio the table's column shows for `figure`: the one a sentence quotes.
        public func columnRatio(_ figure: Figure) -> Double? {
            switch figure {
            case .p50: self.p50Ratio
            case .p99: self.p99Ratio
            case .ops: self.opsRatio
            }
        }

        /// The move a sentence leads with: the verdict's way, the p50 first.
        public var leadingMove: Move? { self.moves.first { $0.slower == (self.verdict == .slower) } }
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
        /// What `together` and `steps` count: `steps`, or `groups' work` (each group's
        /// `exchange.work`, within half the floor of their median).
        public var unit: String = "steps"
    }

    /// One step of one group, across the runs.
    public struct Row: Sendable {
        /// The baseline's group key.
        public var key: GroupKey
        /// The step.
        public var step: Step
        /// The baseline's figures, of the measure compared.
        public var baseline: StepStatistics
        /// One cell per candidate, in order.
        public var cells: [Cell]
        /// What the row compares: wall time, or CPU time (`Basis.work`).
        public var measure: Measure = .time
        /// The flow plugin the group ran (`cx`).
        public var flowKind: String = ""
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
        self.conditions = Self.conditions(of: [baseline] + candidates, oneRun: commonShare > 1 && !judgesThroughput)
        // Groups of one run shared its machine, whatever it did: no change to speak of.
        let oneRun = commonShare > 1 && !judgesThroughput
        self.machineChanged = candidates.map { oneRun ? nil : Self.machineChange(baseline, $0) }
        let base = baseline.result
        // Per row and candidate, both histograms, for the verdicts once the common factor is known.
        var pairs: [[(Histogram<UInt64>, Histogram<UInt64>)?]] = []
        for group in base.groups {
            let matches = candidates.enumerated().map { index, candidate in
                self.match(group.key, in: candidate.result, candidate: index)
            }
            for (step, wall) in group.orderedSteps {
                let (measure, histogram, unjudged) = self.compared(step, of: group, wall: wall)
                let statistics = StepStatistics(histogram ?? wall, window: base.measuredNanoseconds)
                var cellPairs: [(Histogram<UInt64>, Histogram<UInt64>)?] = []
                let cells = matches.enumerated().map { index, match -> Cell in
                    guard let match, let otherWall = match.steps[step] else {
                        cellPairs.append(nil)
                        return Cell(verdict: .missing)
                    }
                    let other = measure == .cpu ? Self.cpuHistogram(step, of: match) : otherWall
                    var cell = self.cell(
                        histogram ?? wall,
                        statistics,
                        other ?? otherWall,
                        StepStatistics(other ?? otherWall, window: candidates[index].result.measuredNanoseconds)
                    )
                    if let reason = self.machineChanged[index], !despiteMachineChange {
                        cell.verdict = .notJudged
                        cell.note = reason
                    } else if let unjudged {
                        cell.verdict = .notJudged
                        cell.note = unjudged
                    } else if cell.verdict != .tooFewSamples, histogram == nil || other == nil {
                        cell.verdict = .notJudged
                        cell.note = "no CPU time read for this step: it is judged on work only where both runs read it"
                    }
                    cellPairs.append(cell.verdict == .notJudged ? nil : (histogram ?? wall, other ?? otherWall))
                    return cell
                }
                self.rows.append(
                    Row(
                        key: group.key,
                        step: step,
                        baseline: statistics,
                        cells: cells,
                        measure: measure,
                        flowKind: group.flowKind
                    )
                )
                pairs.append(cellPairs)
            }
        }
        for index in candidates.indices {
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

    /// What the runs' conditions let the verdicts compare (`Conditions`).
    static func conditions(of runs: [Run], oneRun: Bool = false) -> Conditions {
        // Groups of one run share its CPU block: one run to speak of.
        let runs = oneRun ? Array(runs.prefix(1)) : runs
        func subject(_ run: Run) -> String { oneRun ? "the run" : "'\(run.sentenceName)'" }
        var reasons: [String] = []
        for run in runs {
            if let cpu = run.result.cpu, cpu.saturated {
                let share = cpu.demand.map { " (its process wanted \(Self.percent($0)) of \(cpu.cores ?? 0) cores)" } ?? ""
                reasons.append("\(subject(run)) was saturated\(share): its exchanges waited in the machine's queue")
            }
        }
        for run in runs {
            guard let (share, group) = Self.waitingShare(run.result), share > Self.mostlyWaiting else { continue }
            if reasons.contains(where: { $0.hasPrefix(subject(run)) }) { continue }
            reasons.append(
                "\(subject(run))'s exchanges were \(Self.percent(share)) waiting (`\(group)`): their time is the queue's and the network's more than the code's"
            )
        }
        let hasWork = runs.allSatisfy { MarkdownReporter.hasWork($0.result) }
        guard !reasons.isEmpty else { return Conditions(basis: .time, reasons: [], exchangeUnjudged: false, remedy: nil) }
        let queued = runs.contains { $0.result.cpu?.saturated == true }
        guard queued else {
            // Waiting that is not a queue (the network, the peer): the exchange's time is still
            // what a client waits, and judged; its work is judged beside it.
            return Conditions(
                basis: hasWork ? .work : .time,
                reasons: reasons,
                exchangeUnjudged: false,
                remedy: hasWork ? nil : "read the steps' CPU time (`\"report\": { \"stepUsage\": true }`) to judge the work apart from the waiting"
            )
        }
        let carried = runs.compactMap { run -> Double? in
            guard run.result.measuredNanoseconds > 0 else { return nil }
            return Double(run.result.completedIterations) / (Double(run.result.measuredNanoseconds) / 1e9)
        }.min()
        var remedy =
            "for the exchange's own time, run an open model (`\"load\": { \"model\": \"open\" }`)"
            + (carried.map { " at about \(Numbers.fixed(0.7 * $0, 0, grouped: true))/s (70% of the \(Numbers.fixed($0, 0, grouped: true))/s carried)" } ?? "")
            + ", or fewer clients, or shards (`lab run --shard K/N`)"
        if !hasWork {
            remedy = "read the steps' CPU time (`\"report\": { \"stepUsage\": true }`) to judge the work; " + remedy
        }
        return Conditions(basis: hasWork ? .work : .time, reasons: reasons, exchangeUnjudged: true, remedy: remedy)
    }

    /// The largest share of an exchange's mean time a client group of `result` spent waiting,
    /// and that group: 1 − work ÷ exchange where the run read its steps' usage, else
    /// 1 − (its timed steps' mean times per exchange) ÷ exchange, an upper bound on the work.
    static func waitingShare(_ result: RunResult) -> (Double, GroupKey)? {
        var largest: (Double, GroupKey)? = nil
        for group in result.groups where !group.isServerSide {
            guard let exchange = group.steps[.exchange], exchange.totalCount > 0 else { continue }
            let mean = exchange.specialisedMean
            guard mean > 0 else { continue }
            var work = 0.0
            if let measured = group.steps[.work], measured.totalCount > 0 {
                work = measured.specialisedMean
            } else {
                for (step, histogram) in group.steps where !Self.outsideWork(step) {
                    work += histogram.specialisedMean * Double(histogram.totalCount) / Double(exchange.totalCount)
                }
            }
            let share = max(0, 1 - work / mean)
            if share > (largest?.0 ?? -1) { largest = (share, group.key) }
        }
        return largest
    }

    /// Steps that are not a part of an exchange's work: the exchange and what is made of
    /// it, and steps with no thread of their own.
    static func outsideWork(_ step: Step) -> Bool {
        step == .exchange || step.name.hasPrefix(Step.exchange.name + ".") || step == .connect
            || step == .handshake || step == .discover
    }

    /// The sentence that says `candidate` ran with other CPU to spare than `baseline`, with
    /// the figures; nil when alike. Other cores, another machine, or their threads' wait for
    /// a core (`ProcessCPU.waitingNanoseconds`) `waitingChange` apart.
    static func machineChange(_ baseline: Run, _ candidate: Run) -> String? {
        let one = baseline.result.metadata.machine
        let other = candidate.result.metadata.machine
        if one.cores != other.cores || one.cpu != other.cpu {
            return "the machine changed: '\(baseline.sentenceName)' ran on \(one.cores) cores of \(one.cpu), "
                + "'\(candidate.sentenceName)' on \(other.cores) of \(other.cpu)"
        }
        if let speed = Self.calibrationChange(baseline, candidate) { return speed }
        guard let first = Self.waitingFraction(baseline.result), let second = Self.waitingFraction(candidate.result),
            abs(first - second) > Self.waitingChange
        else { return nil }
        return "the machine changed: the threads of '\(baseline.sentenceName)' waited for a core \(Self.percent(first)) "
            + "of the cores' time, those of '\(candidate.sentenceName)' \(Self.percent(second)) (something else ran "
            + "beside one of them), so their times and rates differ by what the machine had to spare"
    }

    /// The sentence that says the machine ran at another speed, by the runs' reference
    /// operations (the calibration unit: RSA-2048 sign × AES-128-CBC 16 KiB, geometric
    /// mean); nil when it did not, or a run has none.
    ///
    /// One sample is a moment of the host, not its speed over a run: within one run the two
    /// samples moved by up to 9%, and between runs 10 s apart the first samples by ×0.89
    /// while every group's work over the runs held within 1% (2026-11-28). So two runs of
    /// one or two samples changed speed when their first samples and their last samples were
    /// each more than `calibrationChange` apart, the same way (not the first against the last
    /// of one run: after a second of both cores busy this host runs the same operations up to
    /// 18% slower than before, in every run alike). Runs merged from parts (four samples or
    /// more each, spread over all the time they ran) changed speed when their medians are
    /// more than `calibrationChange` apart and the rank-sum test tells the samples apart
    /// (one-sided p < `calibrationSignificance`).
    static func calibrationChange(_ baseline: Run, _ candidate: Run) -> String? {
        func units(_ run: Run) -> [Double]? {
            let units = run.result.calibration?.samples.map(\.unit).filter { $0 > 0 } ?? []
            return units.isEmpty ? nil : units
        }
        guard let one = units(baseline), let other = units(candidate) else { return nil }
        func microseconds(_ value: Double) -> String { Numbers.fixed(value / 1_000, 1) + " µs" }
        let limit = log1p(Self.calibrationChange)
        let (a, b) = (baseline.sentenceName, candidate.sentenceName)
        if one.count >= 4, other.count >= 4 {
            let (first, second) = (Statistics.median(one)!, Statistics.median(other)!)
            let ratio = second / first
            guard abs(log(ratio)) > limit,
                RankSumTest(one, other).oneSidedPValue(greater: ratio > 1) < Self.calibrationSignificance
            else { return nil }
            return "the machine ran at another speed: its reference operations (the calibration unit) took"
                + " \(microseconds(first)) in '\(a)' and \(microseconds(second)) in '\(b)' (medians of"
                + " \(one.count) and \(other.count) samples), ×\(Numbers.fixed(ratio, 2))"
        }
        let first = other.first! / one.first!
        let last = other.last! / one.last!
        guard abs(log(first)) > limit, abs(log(last)) > limit, (first > 1) == (last > 1) else { return nil }
        return "the machine ran at another speed: its reference operations (the calibration unit) took"
            + " \(microseconds(one.first!)) in '\(a)' and \(microseconds(other.first!)) in '\(b)' at their start"
            + " (×\(Numbers.fixed(first, 2))), \(microseconds(one.last!)) and \(microseconds(other.last!)) at their"
            + " end (×\(Numbers.fixed(last, 2)))"
    }

    /// The share of its cores' time a run's threads spent waiting for one; nil if unknown.
    static func waitingFraction(_ result: RunResult) -> Double? {
        guard let cpu = result.cpu, let cores = cpu.cores, cores > 0, cpu.wallNanoseconds > 0,
            let waiting = cpu.process.waitingNanoseconds
        else { return nil }
        return Double(waiting) / (Double(cpu.wallNanoseconds) * Double(cores))
    }

    static func percent(_ fraction: Double) -> String {
        let value = fraction * 100
        return (value < 10 ? Numbers.fixed(value, 1) : Numbers.fixed(value, 0)) + "%"
    }

    /// Why candidate `index`'s ops/s is not judged, or nil when it is: it needs the time
    /// basis, the same CPU to spare, and `rateIntervals` whole intervals in each run.
    private func rateNote(candidate index: Int) -> String? {
        guard self.judgesThroughput else {
            return "ops/s not judged: a group's ops/s in a run is its share of the run's rate, which follows the flows' weights"
        }
        if let changed = self.machineChanged[index] {
            return "ops/s not judged: \(changed)"
        }
        if self.conditions.exchangeUnjudged { return "ops/s not judged: the queue set it" }
        let runs = [self.baseline.result, self.candidates[index].result]
        guard runs.allSatisfy({ ($0.intervals.map { Self.wholeIntervals($0).count } ?? 0) >= Self.rateIntervals }) else {
            return "ops/s not judged: a run's rate is one figure, not a sample; it needs \(Self.rateIntervals) or more whole intervals in each run (`report.interval`, a longer run)"
        }
        return nil
    }

    /// The interval indices that lie wholly inside the measured window: all but the first and last.
    static func wholeIntervals(_ intervals: RunIntervals) -> [Int] {
        guard let indices = intervals.indices, indices.count > 2 else { return [] }
        return Array((indices.lowerBound + 1)..<indices.upperBound)
    }

    /// Per interval, exchanges/s of `key` in the baseline and in candidate `index`: the
    /// samples the ops/s verdict tests.
    private func rateSamples(_ key: GroupKey, candidate index: Int) -> ([Double], [Double])? {
        func rates(_ result: RunResult, _ key: GroupKey) -> [Double]? {
            guard let intervals = result.intervals, let slices = intervals.groups[key] else { return nil }
            let seconds = Double(intervals.width) / 1e9
            return Self.wholeIntervals(intervals).map { Double(slices[$0]?.iterations ?? 0) / seconds }
        }
        let otherKey = self.crossTransport[index][key] ?? key
        guard let first = rates(self.baseline.result, key), let second = rates(self.candidates[index].result, otherKey),
            first.count >= Self.rateIntervals, second.count >= Self.rateIntervals
        else { return nil }
        return (first, second)
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
        // With three groups or more that have their work (`Step.work`): the groups, each as
        // one figure. A slower provider moves its groups' work and leaves the others', so
        // steps each within a wide floor of a median between the two would read as moving
        // together (the quickstart with openssl 15% slower: a factor ×1.06 that left the
        // slowed x25519 work ×1.12 against it, 2026-11-28).
        let works = self.rows.filter { $0.step == .work }.compactMap { row -> Double? in
            let cell = row.cells[index]
            guard cell.verdict == .noChange, let ratio = cell.p50Ratio, ratio > 0 else { return nil }
            return ratio
        }
        if works.count >= 3 {
            let median = Statistics.median(works) ?? 1
            let together = works.filter { !Self.beyond($0 / median, self.threshold / 2) }.count
            let applies = Double(together) >= self.commonShare * Double(works.count)
            var verdict = Verdict.noChange
            if applies, Self.beyond(median, self.threshold) { verdict = median > 1 ? .slower : .faster }
            return Common(
                median: median,
                together: together,
                steps: works.count,
                applies: applies,
                verdict: verdict,
                unit: "groups' work"
            )
        }
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

    /// The verdict on one step, against the candidate's common factor. A row compared on CPU
    /// time is judged on its p50 alone: the tail of a thread's CPU time holds what the
    /// machine did to it (caches refilled after a switch), not only the code.
    private func judge(
        _ cell: inout Cell,
        _ row: Row,
        _ base: Histogram<UInt64>,
        _ other: Histogram<UInt64>,
        factor: Double,
        rates: ([Double], [Double])?
    ) {
        guard let ratio = cell.p50Ratio else { return }
        cell.relativeRatio = ratio / factor
        guard cell.verdict != .tooFewSamples else { return }
        let test = RankSumTest(base, other, scale: 1 / factor)
        cell.pValue = test.twoSidedPValue
        cell.superiority = test.superiority
        if test.twoSidedPValue < self.alpha, Self.beyond(ratio / factor, cell.floor) {
            // The shift of the whole distribution (Hodges–Lehmann) must be beyond the floor
            // too, the same way: the p50 of a step of several modes (ML-DSA signing's
            // rejection loop) jumps between them: pq's work p50 ×1.107 between two interleaved
            // sides of one build whose shift as a whole stayed inside the floor (2026-11-28).
            let shift = (RatioEstimate.of(base, other)?.ratio ?? ratio) / factor
            cell.shiftRatio = shift
            if Self.beyond(shift, cell.floor), (shift > 1) == (ratio / factor > 1) {
                cell.moves.append(Move(figure: .p50, ratio: ratio / factor, slower: ratio / factor > 1))
            }
        }
        if row.measure == .time, let p99 = cell.p99Ratio, min(base.totalCount, other.totalCount) >= self.tailSamples {
            let tail = test.tailPValue()
            // The tail test and the ratio must agree on the direction.
            if tail.pValue < self.alpha, tail.secondHasMore == (p99 / factor > 1),
                Self.beyond(p99 / factor, 2 * cell.floor)
            {
                cell.moves.append(Move(figure: .p99, ratio: p99 / factor, slower: p99 / factor > 1))
            }
        }
        if row.step == .exchange, let (first, second) = rates, let ops = cell.opsRatio {
            // Per-interval rates, tested as samples: a run's one rate is not.
            let test = RankSumTest(first, second)
            if test.twoSidedPValue < self.alpha, Self.beyond(ops, self.threshold) {
                cell.moves.append(Move(figure: .ops, ratio: ops, slower: ops < 1))
            }
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

    /// Whether nothing of candidate `index` could be judged: the machine changed.
    public func isUnjudged(candidate index: Int) -> Bool {
        self.machineChanged[index] != nil && !self.judgesDespiteMachineChange
    }

    /// Whether candidate `index` got slower: a step, or the run as a whole.
    public func isSlower(candidate index: Int) -> Bool {
        self.common[index].verdict == .slower || self.rows.contains { $0.cells[index].verdict == .slower }
    }

    /// Keeps the rows `isIncluded` accepts, in order.
    public mutating func keepRows(_ isIncluded: (Row) -> Bool) {
        self.rows = self.rows.filter(isIncluded)
    }

    /// The fields the two sides differ in by selection (`lab compare R#{provider=a}
    /// R#{provider=b}`): row labels leave them out, since each side has its own value, and
    /// sentences name the sides by those values.
    public var across: [String] = []

    /// `cx x25519 swift-crypto · sign`, or with fields `across`, only what both sides share:
    /// `cx x25519 · sign`.
    public func rowLabel(_ row: Row) -> String {
        let key = row.key
        guard !self.across.isEmpty else {
            return "\(key.flow) \(key.suite) \(key.provider) · \(row.step.name)"
        }
        var parts = [row.flowKind.isEmpty ? key.flow : row.flowKind]
        if !self.across.contains("suite"), key.suite != "-" { parts.append(key.suite) }
        if !self.across.contains("provider") { parts.append(key.provider) }
        if !self.across.contains("transport") { parts.append(key.transport) }
        return parts.joined(separator: " ") + " · \(row.step.name)"
    }

    /// The verdict of candidate `index` on `row` in words, the slower side first:
    /// `openssl ×1.77 slower than swift-crypto: cx x25519 · exchange.work (p50)`; nil when
    /// the row is not a change.
    public func sentence(_ row: Row, candidate index: Int) -> String? {
        let cell = row.cells[index]
        guard cell.verdict.isChange, let move = cell.leadingMove else { return nil }
        let candidateSlower = cell.verdict == .slower
        let (slower, faster) =
            candidateSlower
            ? (self.candidates[index].sentenceName, self.baseline.sentenceName)
            : (self.baseline.sentenceName, self.candidates[index].sentenceName)
        let ratio = cell.columnRatio(move.figure) ?? move.ratio
        // Times grow when slower, rates shrink.
        let factor = (move.figure == .ops) == candidateSlower ? 1 / ratio : ratio
        let measure = row.measure == .cpu ? ", CPU time" : ""
        var text = "\(slower) ×\(Numbers.fixed(factor, 2)) slower than \(faster): \(self.rowLabel(row)) (\(move.figure.rawValue)\(measure))"
        if abs(move.ratio - ratio) > 0.0005 {
            let relative = (move.figure == .ops) == candidateSlower ? 1 / move.ratio : move.ratio
            text += ", ×\(Numbers.fixed(relative, 2)) against the run's common factor"
        }
        return text
    }

    /// What candidate `index`'s run differs in from the baseline's besides the code:
    /// `transport: in-process vs tcp`; empty when alike. Any of these can explain a verdict.
    public func differences(candidate index: Int) -> [String] {
        let one = self.baseline.result.metadata
        let other = self.candidates[index].result.metadata
        var found: [String] = []
        func note(_ what: String, _ first: String, _ second: String) {
            if first != second { found.append("\(what): \(first) vs \(second)") }
        }
        note("scenario", one.scenario, other.scenario)
        note("transport", one.transport, other.transport)
        note("load model", String(one.load.prefix { $0 != "," }), String(other.load.prefix { $0 != "," }))
        note("clients", String(one.clients), String(other.clients))
        note("host", one.machine.hostname, other.machine.hostname)
        note("cores", String(one.machine.cores), String(other.machine.cores))
        note("build", one.build, other.build)
        return found
    }

    /// Per candidate, the rows it calls slower or faster.
    public func changes(candidate: Int) -> [Row] {
        self.rows.filter { $0.cells[candidate].verdict.isChange }
    }
}
