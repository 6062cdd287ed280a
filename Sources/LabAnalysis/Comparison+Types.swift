import Foundation
import LabCharts
public import LabCore
public import LabResults

/// The parts of a comparison: its runs, rows, cells and verdicts.
extension Comparison {
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
}
