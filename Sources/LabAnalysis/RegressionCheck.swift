import Foundation
import LabCore
public import LabResults

/// `lab check`: a run against a baseline, step by step, over repeated samples.
///
/// Both runs have rounds (`load.rounds`): each round gives every step one median, divided by
/// the calibration unit timed just before that round in the same process (`RoundResult`).
/// A step **regressed** only when the run's calibrated medians are significantly above the
/// baseline's (one-sided Mann–Whitney U over the rounds, p < `alpha`) *and* the shift —
/// the Hodges–Lehmann estimate, the median of every run÷baseline ratio of rounds — exceeds
/// `1 + threshold`. Machine-wide slowness moves a round's calibration with its steps and
/// cancels; a slowdown of the lab's own code does not.
///
/// Short steps (a baseline median under `shortStep` calibration units, about 50 µs) need
/// the wider `shortThreshold`: two builds of the same code moved them by 9–15% in CI (code
/// layout and caches weigh more in 10 µs than in a millisecond), so 8% would cry wolf there.
public struct RegressionCheck: RegressionGate {
    /// What the check decided about one step.
    public enum Verdict: String, GateVerdict {
        /// Significantly slower, beyond the threshold: a regression.
        case slower
        /// Significantly faster, beyond the threshold.
        case faster
        /// Significantly slower or faster, but by less than the step's threshold: a change
        /// the test found, inside the allowance for this machine's noise.
        case withinAllowance = "significant, within the allowance"
        /// No significant change (p ≥ α).
        case unchanged = "no significant change"
        /// Fewer rounds than `minimumRounds` on either side.
        case tooFewRounds = "too few rounds"

        /// Whether the step regressed: `slower`.
        public var isRegression: Bool { self == .slower }
        /// Whether the step got faster beyond its threshold.
        public var isImprovement: Bool { self == .faster }
        /// Whether both sides had enough rounds.
        public var isJudged: Bool { self != .tooFewRounds }
    }

    /// What the check measures of a step besides its two medians and their ratio.
    public struct Figures: Sendable {
        /// The one-sided p-value in the direction of the change (slower if ratio ≥ 1).
        public var pValue: Double
        /// Rounds on each side.
        public var rounds: (baseline: Int, run: Int)
        /// The smallest slowdown that counted for this step (the threshold, the short-step
        /// threshold, or twice the baselines' spread between processes, whichever is largest).
        public var threshold: Double
    }

    /// One step of one group: the medians over rounds, in calibration units, and the
    /// Hodges–Lehmann estimate of run ÷ baseline.
    public typealias Row = GateRow<Verdict, Figures>

    /// Rounds each side needs before a step gets a verdict.
    public static let minimumRounds = 5

    /// Every step both runs measured in their rounds, in group then report order.
    public var rows: [Row]
    /// Groups or steps only one side has, and other facts a reader should know.
    public var notes: [String]
    /// The smallest shift called a change, e.g. 0.08 for 8%.
    public var threshold: Double
    /// Steps whose baseline median is below this many calibration units are short.
    public var shortStep: Double
    /// The smallest shift called a change in a short step, e.g. 0.25.
    public var shortThreshold: Double
    /// The significance level of the one-sided test.
    public var alpha: Double

    /// How far each step's median moved between the baselines' processes: the largest
    /// |ln(process median ÷ pooled median)|, by group and step; empty with one baseline.
    private var processSpread: [GroupKey: [String: Double]] = [:]

    /// Checks `run` against one baseline run.
    public init(
        run: RunResult,
        baseline: RunResult,
        threshold: Double,
        alpha: Double,
        shortStep: Double = 0.5,
        shortThreshold: Double = 0.25
    ) throws {
        try self.init(
            run: run,
            baselines: [baseline],
            threshold: threshold,
            alpha: alpha,
            shortStep: shortStep,
            shortThreshold: shortThreshold
        )
    }

    /// Checks `run` against the pooled rounds of `baselines`, runs of one build in separate
    /// processes. A process adds an offset of its own to a step (code placement, the heap's
    /// layout: up to 20% for an allocation-heavy step of a debug build), which one process's
    /// rounds cannot show; several baselines show it, and a step is then held to at least
    /// twice the largest offset a baseline process had from the pooled median. Throws
    /// `.invalidScenario` (exit 1) when they cannot be compared: no rounds, or different
    /// build configurations.
    public init(
        run: RunResult,
        baselines: [RunResult],
        threshold: Double,
        alpha: Double,
        shortStep: Double = 0.5,
        shortThreshold: Double = 0.25
    ) throws {
        let baseline = try Self.pooled(baselines)
        try Self.requireComparable(run: run, baseline: baseline)
        self.threshold = threshold
        self.shortStep = shortStep
        self.shortThreshold = max(threshold, shortThreshold)
        self.alpha = alpha
        self.notes = Self.differences(run: run, baseline: baseline)
        self.rows = []
        if baselines.count > 1 { self.processSpread = Self.processSpread(baselines, pooled: baseline) }
        self.compare(run: run, baseline: baseline)
    }

    /// The baselines' rounds as one baseline; throws if they came from different builds.
    static func pooled(_ baselines: [RunResult]) throws -> RunResult {
        guard var baseline = baselines.first else {
            throw LabError(.invalidScenario, "`lab check` needs a baseline")
        }
        for other in baselines.dropFirst() {
            guard other.metadata.build == baseline.metadata.build else {
                throw LabError(.invalidScenario, "The baselines were measured by different build configurations")
            }
            baseline.rounds += other.rounds
        }
        return baseline
    }

    /// Throws unless both have rounds and come from the same build configuration.
    static func requireComparable(run: RunResult, baseline: RunResult) throws {
        for (name, result) in [("The baseline", baseline), ("The run", run)] where result.rounds.isEmpty {
            throw LabError(
                .invalidScenario,
                "\(name) (\(result.metadata.scenario)) has no rounds; `lab check` tests over repeated samples: give its scenario \"load\": {\"rounds\": 10} or more"
            )
        }
        guard run.metadata.build == baseline.metadata.build else {
            throw LabError(
                .invalidScenario,
                "The baseline was measured by a \(baseline.metadata.build) build and the run by a \(run.metadata.build) build; their timings do not compare. Record the baseline with the same build configuration"
            )
        }
    }

    /// Notes on what differs between the two runs beyond their timings: the CPU, the scenario.
    static func differences(run: RunResult, baseline: RunResult) -> [String] {
        var notes: [String] = []
        if run.metadata.machine.cpu != baseline.metadata.machine.cpu {
            notes.append(
                "The baseline ran on \(baseline.metadata.machine.cpu), this run on \(run.metadata.machine.cpu): the calibration unit absorbs most of a CPU's speed, not all of it."
            )
        }
        if run.metadata.scenario != baseline.metadata.scenario {
            notes.append(
                "The baseline's scenario is '\(baseline.metadata.scenario)', the run's '\(run.metadata.scenario)'."
            )
        }
        return notes
    }

    /// Each step's largest offset of one baseline process from the pooled median (log ratio).
    static func processSpread(_ baselines: [RunResult], pooled baseline: RunResult) -> [GroupKey: [String: Double]] {
        var spread: [GroupKey: [String: Double]] = [:]
        for key in Self.keys(baseline.rounds) {
            for step in Self.steps(baseline.rounds, key) {
                let pooled = Self.median(baseline.rounds.compactMap { $0.calibrated(key, step) })
                let offsets = baselines.compactMap { process -> Double? in
                    let values = process.rounds.compactMap { $0.calibrated(key, step) }
                    guard values.count >= Self.minimumRounds, pooled > 0 else { return nil }
                    return abs(log(Self.median(values) / pooled))
                }
                spread[key, default: [:]][step] = offsets.max() ?? 0
            }
        }
        return spread
    }

    /// A row per step both runs measured; a note for each group or step only one has.
    private mutating func compare(run: RunResult, baseline: RunResult) {
        let runKeys = Self.keys(run.rounds)
        let baseKeys = Self.keys(baseline.rounds)
        var rows: [Row] = []
        for key in baseKeys {
            guard runKeys.contains(key) else {
                self.notes.append("The run has no group '\(key)'.")
                continue
            }
            let baseSteps = Self.steps(baseline.rounds, key)
            let runSteps = Self.steps(run.rounds, key)
            for step in baseSteps where runSteps.contains(step) {
                let base = baseline.rounds.compactMap { $0.calibrated(key, step) }
                let now = run.rounds.compactMap { $0.calibrated(key, step) }
                rows.append(self.row(key, step, base: base, run: now))
            }
            for step in runSteps where !baseSteps.contains(step) {
                self.notes.append("Only the run measured '\(step)' in '\(key)'.")
            }
        }
        for key in runKeys where !baseKeys.contains(key) {
            self.notes.append("Only the run has the group '\(key)'.")
        }
        self.rows = rows
    }

    private func row(_ key: GroupKey, _ step: String, base: [Double], run: [Double]) -> Row {
        let baseline = Self.median(base)
        let median = Self.median(run)
        let spread = self.processSpread[key]?[step] ?? 0
        let threshold = max(self.threshold(forBaseline: baseline), exp(2 * spread) - 1)
        guard base.count >= Self.minimumRounds, run.count >= Self.minimumRounds else {
            return Row(
                key: key,
                step: step,
                baseline: baseline,
                run: median,
                ratio: baseline > 0 ? median / baseline : 1,
                figures: Figures(pValue: 1, rounds: (base.count, run.count), threshold: threshold),
                verdict: .tooFewRounds
            )
        }
        let ratio = Self.hodgesLehmannRatio(base, run)
        let slower = ratio >= 1
        let p = RankSumTest(base, run).oneSidedPValue(greater: slower)
        let beyond = slower ? ratio > 1 + threshold : ratio < 1 / (1 + threshold)
        let verdict: Verdict =
            p >= self.alpha ? .unchanged : beyond ? (slower ? .slower : .faster) : .withinAllowance
        return Row(
            key: key,
            step: step,
            baseline: baseline,
            run: median,
            ratio: ratio,
            figures: Figures(pValue: p, rounds: (base.count, run.count), threshold: threshold),
            verdict: verdict
        )
    }

    /// The threshold for a step whose baseline median is `baseline` calibration units.
    public func threshold(forBaseline baseline: Double) -> Double {
        baseline < self.shortStep ? self.shortThreshold : self.threshold
    }

    /// The groups measured in rounds, in order of first appearance.
    static func keys(_ rounds: [RoundResult]) -> [GroupKey] {
        var keys: [GroupKey] = []
        for round in rounds { for group in round.groups where !keys.contains(group.key) { keys.append(group.key) } }
        return keys.sorted()
    }

    /// A group's steps measured in rounds, in report order.
    static func steps(_ rounds: [RoundResult], _ key: GroupKey) -> [String] {
        var steps: [Step] = []
        for round in rounds {
            for group in round.groups where group.key == key {
                for entry in group.steps where entry.count > 0 && !steps.contains(Step(entry.step)) {
                    steps.append(Step(entry.step))
                }
            }
        }
        return steps.sorted(by: Step.reportOrdering).map(\.name)
    }

    /// The median of every `run[j] ÷ baseline[i]`: the shift estimate that goes with the rank-sum test.
    static func hodgesLehmannRatio(_ baseline: [Double], _ run: [Double]) -> Double {
        var logs: [Double] = []
        logs.reserveCapacity(baseline.count * run.count)
        for b in baseline where b > 0 { for r in run where r > 0 { logs.append(log(r / b)) } }
        return exp(Self.median(logs))
    }

    /// The median (`Statistics.median`); 0 for no values.
    static func median(_ values: [Double]) -> Double {
        Statistics.median(values) ?? 0
    }
}
