public import LabCore

/// A pass/fail condition on a run, parsed from a scenario's `"thresholds"`.
///
/// Metrics: `efficiency` (the run's share of its primitive bound, `PrimitiveBound`, as a
/// percentage), `errors` (all flows), `<flow>.errors`, `<flow>.<step>.<stat>`, `outcomes.<name>`
/// (all flows) or `<flow>.outcomes.<name>`, where `<flow>` is an entry's label or a flow
/// plugin's name (matching all its entries), optionally narrowed with
/// `{suite=…,provider=…,transport=…}`; `<flow>.bytes.<direction>` (bytes on the wire per
/// measured iteration) and `<flow>.<step>.bytes.<direction>` (per round trip of the step, set-up's
/// included), with directions `sent`, `received` and `total`, against a size (`"< 4 KiB"`; a
/// plain number is bytes). Stats: `count`, `min`, `p50`, `p90`, `p95`, `p99`, `p99.9`,
/// `max`, `mean`, `stddev`, `ops` (per second). An outcome is a count a flow records with
/// `StepRecorder.count` (letters, digits, `_`, `-`, `.`), summed over the matching groups;
/// one never counted is 0 (the planner checks the name against the flows' declared
/// outcomes, `Flow.outcomes`). Conditions: an operator
/// (`<`, `<=`, `>`, `>=`, `==`, `!=`), a number and, for times, a unit (`"< 50 ms"`);
/// `errors` also takes a percentage of iterations (`"< 1%"`).
public struct Threshold: Sendable, Equatable {
    /// A figure thresholds can test.
    public enum Stat: String, Sendable, CaseIterable {
        case count, min, p50, p90, p95, p99
        case p999 = "p99.9"
        case max, mean, stddev, ops

        /// Whether the figure is a time (its condition needs a unit).
        public var isTime: Bool { ![.count, .ops].contains(self) }
    }

    /// What is measured.
    public enum Measure: Sendable, Equatable {
        /// Failed iterations (count, or share of iterations when `percent`).
        case errors(percent: Bool)
        /// A figure of one step's merged histogram.
        case step(Step, Stat)
        /// The summed count of one outcome (`StepRecorder.count`).
        case outcome(String)
        /// The run's exchanges per second as a share of its primitive bound (`PrimitiveBound`).
        case efficiency
        /// Bytes on the wire (`StepTraffic`): per measured iteration when `step` is nil, per
        /// round trip of `step` otherwise.
        case bytes(Step?, Direction)
    }

    /// Which way bytes went, for `bytes` metrics.
    public enum Direction: String, Sendable, CaseIterable {
        case sent, received, total

        /// This direction's bytes of `traffic`.
        public func bytes(_ traffic: StepTraffic) -> UInt64 {
            switch self {
            case .sent: traffic.sent
            case .received: traffic.received
            case .total: traffic.total
            }
        }
    }

    /// The word that introduces bytes in a metric: `<flow>.bytes.sent`, `<flow>.<step>.bytes.sent`.
    package static let bytesWord = "bytes"

    /// A comparison operator.
    public enum Comparison: String, Sendable, CaseIterable {
        case lessOrEqual = "<="
        case greaterOrEqual = ">="
        case equal = "=="
        case notEqual = "!="
        case less = "<"
        case greater = ">"

        package func holds(_ lhs: Double, _ rhs: Double) -> Bool {
            switch self {
            case .less: return lhs < rhs
            case .lessOrEqual: return lhs <= rhs
            case .greater: return lhs > rhs
            case .greaterOrEqual: return lhs >= rhs
            case .equal: return lhs == rhs
            case .notEqual: return lhs != rhs
            }
        }
    }

    /// The metric as written.
    public var metric: String
    /// The condition as written.
    public var condition: String
    /// The flow label or flow name, or nil for all flows.
    public var flow: String?
    /// Group filters: `suite`, `provider`, `transport`.
    public var filters: [String: String]
    /// What is measured.
    public var measure: Measure
    /// The operator.
    public var comparison: Comparison
    /// The bound, in nanoseconds for times, per second for `ops`, a fraction for error shares.
    public var bound: Double

    /// The filter keys a metric may use.
    public static let filterKeys = ["suite", "provider", "transport"]

    /// The word that introduces an outcome in a metric: `outcomes.<name>`, `<flow>.outcomes.<name>`.
    package static let outcomesPrefix = "outcomes"
}

/// Why a threshold does not parse, and whether the metric (key) or the condition (value) is at fault.
public struct ThresholdProblem: Error, Sendable, Equatable {
    /// True if the metric name is wrong, false if the condition is.
    public var inMetric: Bool
    /// What was expected.
    public var message: String

    /// A problem.
    public init(inMetric: Bool, _ message: String) {
        self.inMetric = inMetric
        self.message = message
    }
}
