public import LabResults

/// What the verdicts of a regression gate (`RegressionCheck`, `CountedCheck`) have in
/// common, whatever the gate measures: one is a regression, one a change the other way, and
/// some leave a step unjudged.
public protocol GateVerdict: RawRepresentable<String>, Sendable, Equatable, Codable {
    /// Whether the step regressed: the gate fails on it.
    var isRegression: Bool { get }
    /// Whether the step changed the other way, beyond what the gate allows.
    var isImprovement: Bool { get }
    /// Whether the step was judged: it had enough rounds or samples on both sides.
    var isJudged: Bool { get }
}

/// One step of one group as a regression gate judged it: the baseline's figure and the run's,
/// their ratio and the verdict, which every gate has, and the figures only its gate has
/// (`Figures`: a p-value and rounds, or a spread and samples), read as the row's own
/// (`row.pValue`).
@dynamicMemberLookup
public struct GateRow<Verdict: GateVerdict, Figures: Sendable>: Sendable {
    /// The group.
    public var key: GroupKey
    /// The step's name.
    public var step: String
    /// The baseline's figure, in the gate's unit (calibration units, instructions).
    public var baseline: Double
    /// The run's figure, in the same unit.
    public var run: Double
    /// The run against the baseline: run ÷ baseline, or the gate's estimate of it.
    public var ratio: Double
    /// What only this gate measures of the step.
    public var figures: Figures
    /// The decision.
    public var verdict: Verdict

    /// One of the gate's own figures, as the row's.
    public subscript<Value>(dynamicMember path: KeyPath<Figures, Value>) -> Value {
        self.figures[keyPath: path]
    }

    /// `cx x25519 swift-crypto · sign`: the row as reports and CI name it.
    public var label: String {
        "\(self.key.flow) \(self.key.suite) \(self.key.provider) · \(self.step)"
    }
}

/// A regression gate (`lab check`): a row per step both sides measured, and notes on what
/// else a reader should know. Each gate measures and judges a row its own way; what it found
/// is written by one set of writers (LabReport's `GateReport`, `VerdictSuite(gate:)`).
public protocol RegressionGate: Sendable {
    /// The gate's verdicts.
    associatedtype Verdict: GateVerdict
    /// What the gate measures of a step besides its two figures and their ratio.
    associatedtype Figures: Sendable

    /// Every step both sides measured, in group then report order.
    var rows: [GateRow<Verdict, Figures>] { get }
    /// Groups or steps only one side has, and other facts a reader should know.
    var notes: [String] { get }
}

extension RegressionGate {
    /// The steps that regressed.
    public var regressions: [GateRow<Verdict, Figures>] { self.rows.filter { $0.verdict.isRegression } }

    /// How many steps got a verdict.
    public var judgedCount: Int { self.rows.filter { $0.verdict.isJudged }.count }
}
