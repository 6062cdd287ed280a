import Foundation
import Histogram
public import LabCore
public import LabResults

/// Groups of one run that differ in one thing (provider, suite, transport, a matrix parameter,
/// or only their flow entry's name), compared as `lab compare` compares runs: per step the p50
/// ratio, the U test and the verdict (`Comparison`), and the ratio's estimate with its 95%
/// confidence interval from the same test (`RatioEstimate`).
///
/// The baseline of a pair is the faster group (the lower p50 of the exchange, or of the last
/// step both have), so that a ratio reads as hyperfine's do: "openssl ×1.58 slower than
/// swift-crypto"; on a tie, the group that comes first in the run. The run's common factor
/// is off (`commonShare` > 1): both groups ran in one process at the same moments, so no
/// whole-process slowdown stands between them to be factored out, and a provider slower at
/// every step is the finding, not noise. `lab compare RUN#{provider=a} RUN#{provider=b}` of the
/// same run judges alike (it turns the factor off for two selections of one run).
public struct InRunComparison: Sendable {
    /// What two groups may differ in besides their matrix parameters; `flow`, the flow
    /// entry's label, counts only when nothing else differs (a label is made of the suite and
    /// providers unless the entry names itself).
    public static let keyFields = ["suite", "provider", "transport"]

    /// One pair of groups.
    public struct Pair: Sendable {
        /// What differs: `provider`, `suite`, `transport`, a matrix parameter
        /// (`options.payloadBytes`) or `flow`.
        public var dimension: String
        public var baseline: GroupKey
        public var candidate: GroupKey
        /// The baseline's and the candidate's value of `dimension`.
        public var baselineValue: String
        public var candidateValue: String
        /// The flow kind both ran (`cx`).
        public var flowKind: String
        /// The steps both groups have, in the baseline's order: lab compare's figures and verdict.
        public var comparison: Comparison
        /// Per step (in the rows' order), the ratio's estimate and interval; nil for a step
        /// with too few samples on either side.
        public var estimates: [RatioEstimate?]

        /// The row and estimate of `step`, when both groups have it.
        public func row(_ step: Step) -> (row: Comparison.Row, estimate: RatioEstimate?)? {
            guard let index = self.comparison.rows.firstIndex(where: { $0.step == step }) else { return nil }
            return (self.comparison.rows[index], self.estimates[index])
        }

        /// The exchange as a whole: the `exchange` row, or its work's when the queue made the
        /// exchange's time (`Comparison.Conditions`), or the last shared step.
        public var whole: (row: Comparison.Row, estimate: RatioEstimate?)? {
            if self.comparison.conditions.basis == .work, let work = self.row(.work) {
                return work
            }
            return self.row(.exchange)
                ?? self.comparison.rows.indices.last.map { (self.comparison.rows[$0], self.estimates[$0]) }
        }
    }

    /// `group`'s value of `field`: a key field, a matrix parameter, or `flow`.
    static func value(of group: GroupResult, _ field: String) -> String {
        switch field {
        case "flow": group.key.flow
        case "suite": group.key.suite
        case "provider": group.key.provider
        case "transport": group.key.transport
        default: group.parameters[field] ?? ""
        }
    }

    /// The significance level and floors of `lab compare`'s defaults.
    public static let alpha = 0.001

    /// Every pair of the run's client groups that differ in exactly one field: those that
    /// differ in provider first, then transport, a matrix parameter, the flow entry, and suite
    /// last (two suites differ in what their steps do, not only in how fast); in run order
    /// within each.
    public static func pairs(_ result: RunResult) -> [Pair] {
        func rank(_ dimension: String) -> Int {
            switch dimension {
            case "provider": 0
            case "transport": 1
            case "flow": 3
            case "suite": 4
            default: 2
            }
        }
        return self.unordered(result).enumerated().sorted {
            (rank($0.element.dimension), $0.offset) < (rank($1.element.dimension), $1.offset)
        }.map(\.element)
    }

    private static func unordered(_ result: RunResult) -> [Pair] {
        let groups = result.groups.filter { !$0.isServerSide }
        let onWork = Comparison.conditions(of: [Comparison.Run(label: "", result: result)], oneRun: true).basis == .work
        var pairs: [Pair] = []
        for (index, first) in groups.enumerated() {
            for second in groups[(index + 1)...] where first.flowKind == second.flowKind {
                let parameters = Set(first.parameters.keys).union(second.parameters.keys).subtracting(Self.keyFields)
                var differing = (Self.keyFields + parameters.sorted()).filter {
                    Self.value(of: first, $0) != Self.value(of: second, $0)
                }
                if differing.isEmpty, first.key.flow != second.key.flow { differing = ["flow"] }
                guard differing.count == 1 else { continue }
                let (baseline, candidate) =
                    Self.faster(first, second, onWork: onWork) ? (first, second) : (second, first)
                guard let pair = self.pair(result, baseline, candidate, differing[0]) else { continue }
                pairs.append(pair)
            }
        }
        return pairs
    }

    /// Whether `first` is at least as fast as `second`: its exchange p50 (its work's, `onWork`,
    /// when the queue made the exchange's time; or its last step's, of those both have) is
    /// not above the other's.
    static func faster(_ first: GroupResult, _ second: GroupResult, onWork: Bool = false) -> Bool {
        let shared = first.orderedSteps.map(\.step).filter { second.steps[$0] != nil }
        let whole: Step = onWork && shared.contains(.work) ? .work : .exchange
        guard let step = shared.contains(whole) ? whole : shared.last,
            let one = first.steps[step], let other = second.steps[step], one.totalCount > 0, other.totalCount > 0
        else { return true }
        return one.valueAtPercentile(50) <= other.valueAtPercentile(50)
    }

    /// `result` holding `group` alone, under `key`.
    static func narrowed(_ result: RunResult, to group: GroupResult, key: GroupKey) -> RunResult {
        var narrowed = result
        var renamed = group
        renamed.key = key
        narrowed.groups = [renamed]
        return narrowed
    }

    private static func pair(
        _ result: RunResult,
        _ baseline: GroupResult,
        _ candidate: GroupResult,
        _ dimension: String
    ) -> Pair? {
        let comparison = Comparison(
            baseline: Comparison.Run(
                label: Self.value(of: baseline, dimension),
                result: self.narrowed(result, to: baseline, key: baseline.key)
            ),
            candidates: [
                Comparison.Run(
                    label: Self.value(of: candidate, dimension),
                    result: self.narrowed(result, to: candidate, key: baseline.key)
                )
            ],
            commonShare: 2,
            alpha: self.alpha,
            judgesThroughput: false
        )
        // Only the steps both have.
        var shared = comparison
        shared.keepRows { $0.cells[0].verdict != .missing }
        guard !shared.rows.isEmpty else { return nil }
        let estimates = shared.rows.map { row -> RatioEstimate? in
            guard ![.tooFewSamples, .notJudged].contains(row.cells[0].verdict),
                let first = row.measure == .cpu ? Comparison.cpuHistogram(row.step, of: baseline) : baseline.steps[row.step],
                let second = row.measure == .cpu
                    ? Comparison.cpuHistogram(row.step, of: candidate) : candidate.steps[row.step]
            else { return nil }
            return RatioEstimate.of(first, second)
        }
        return Pair(
            dimension: dimension,
            baseline: baseline.key,
            candidate: candidate.key,
            baselineValue: Self.value(of: baseline, dimension),
            candidateValue: Self.value(of: candidate, dimension),
            flowKind: baseline.flowKind,
            comparison: shared,
            estimates: estimates
        )
    }
}

extension InRunComparison.Pair {
    /// `openssl ×1.58 slower than swift-crypto for cx x25519 exchange (95% CI 1.52–1.63)`: the
    /// exchange as a whole, in words, the slower side first; on its work when the queue made
    /// the exchange's time, which the sentence then says.
    public var sentence: String? {
        guard let (row, estimate) = self.whole else { return nil }
        let cell = row.cells[0]
        let subject = "\(self.candidateValue) against \(self.baselineValue)"
        let context = self.context
        let what = row.step == .work ? "work per exchange" : row.step.name
        guard let estimate else { return "\(subject) for \(context) \(what): \(cell.verdict.rawValue)" }
        let level = "\(Int((estimate.confidence * 100).rounded()))% CI"
        let interval = "\(level) \(Self.fixed(estimate.lower))–\(Self.fixed(estimate.upper))"
        switch cell.verdict {
        case .slower:
            return "\(self.candidateValue) ×\(Self.fixed(estimate.ratio)) slower than \(self.baselineValue)"
                + " for \(context) \(what) (\(interval))"
        case .faster:
            // The slower side first, with the factor and its interval the other way up.
            return "\(self.baselineValue) ×\(Self.fixed(1 / estimate.ratio)) slower than \(self.candidateValue)"
                + " for \(context) \(what) (\(level) \(Self.fixed(1 / estimate.upper))–\(Self.fixed(1 / estimate.lower)))"
        default:
            return "\(subject) for \(context) \(what): \(cell.verdict.rawValue)"
                + " (ratio \(Self.fixed(estimate.ratio)), \(interval))"
        }
    }

    /// Why the exchange's own time is not what the sentence judges, and what to change; nil
    /// when it is.
    public var basisNote: String? {
        let conditions = self.comparison.conditions
        guard !conditions.reasons.isEmpty else { return nil }
        let what =
            switch (conditions.basis, conditions.exchangeUnjudged) {
            case (.work, true): "this compares the work, not the exchange's time"
            case (.work, false): "this compares the work; the exchange's own time, waiting included, is judged in each pair's table in report.html"
            case (.time, true): "the exchange's time cannot tell them apart, and no CPU time was read to compare the work"
            case (.time, false): "this compares the exchange's time, waiting included"
            }
        return conditions.reasons.joined(separator: "; ") + ", so " + what + (conditions.remedy.map { "; \($0)" } ?? "")
    }

    /// What the two groups share: `cx x25519` for a pair that differs in provider, `cx on
    /// openssl` for one that differs in suite, `cx x25519 on swift-crypto` otherwise.
    public var context: String {
        var parts = [self.flowKind]
        if self.dimension != "suite", self.baseline.suite != "-" { parts.append(self.baseline.suite) }
        if self.dimension != "provider" { parts.append("on \(self.baseline.provider)") }
        return parts.joined(separator: " ")
    }

    package static func fixed(_ value: Double) -> String { String(format: "%.2f", value) }
}
