public import LabCharts
import LabCore

/// What a two-host loss sweep's report (`two-host sweep`, sweep.md) says first and draws:
/// its verdict in one sentence, and each suite's p50 and p95 as a pair of lines.
public enum SweepReport {
    /// One suite's figures at one loss.
    public struct Row: Sendable, Equatable {
        /// The suite (`x25519`, `tls X25519MLKEM768`).
        public var suite: String
        /// The share of packets lost on each end, 0 to 1.
        public var loss: Double
        /// The exchange's (or handshake's) p50, in nanoseconds.
        public var p50: Double
        /// The share of answers (or handshakes) the server sent a segment of again, 0 to 1; nil unmeasured.
        public var resent: Double?

        /// A suite's figures at a loss.
        public init(suite: String, loss: Double, p50: Double, resent: Double?) {
            self.suite = suite
            self.loss = loss
            self.p50 = p50
            self.resent = resent
        }
    }

    /// The sweep's verdict in one sentence, from its own figures: how far each suite's p50
    /// moved from the least loss swept to the most, and the largest share of answers the server
    /// sent again (and where). `condition`, when given, says which of the sweep's points the
    /// rows are (`at an RTT of 20 ms`).
    public static func verdict(_ rows: [Row], condition: String? = nil) -> String {
        let start = "Verdict" + (condition.map { " (\($0))" } ?? "") + ": "
        let suites = rows.map(\.suite).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        guard let low = rows.map(\.loss).min(), let high = rows.map(\.loss).max() else {
            return start + "the sweep measured nothing."
        }
        func row(_ suite: String, _ loss: Double) -> Row? { rows.first { $0.suite == suite && $0.loss == loss } }
        var sentence: String
        if high > low {
            let moves = suites.compactMap { suite -> String? in
                guard let first = row(suite, low), let last = row(suite, high), first.p50 > 0 else { return nil }
                let times = "\(TimeSpan.format(nanoseconds: first.p50)) → \(TimeSpan.format(nanoseconds: last.p50))"
                return "×\(Numbers.fixed(last.p50 / first.p50, 1)) for \(suite) (\(times))"
            }
            sentence = start + "from \(Self.percent(low)) to \(Self.percent(high)) loss on each end, the p50 went "
                + Self.list(moves)
        } else {
            let figures = suites.compactMap { suite in
                row(suite, low).map { "\(TimeSpan.format(nanoseconds: $0.p50)) for \(suite)" }
            }
            sentence = start + "one loss swept (\(Self.percent(low)) on each end), no trend to read; the p50 was "
                + Self.list(figures)
        }
        if let most = rows.filter({ $0.resent != nil }).max(by: { $0.resent! < $1.resent! }), let share = most.resent {
            sentence += share > 0
                ? "; the server sent a segment again for up to \(Self.percent(share)) of answers"
                    + " (\(most.suite) at \(Self.percent(most.loss)) loss)"
                : "; the server sent no segment again"
        }
        return sentence + "."
    }

    /// Each suite's p50 (solid) and p95 (dashed) lines in one colour, a colour per suite:
    /// `values(suite, p95)` gives a line's values, `label(suite, p95)` its legend's label.
    public static func pairedSeries(
        _ suites: [String],
        label: (String, Bool) -> String,
        values: (String, Bool) -> [Double?]
    ) -> [MatrixChart.Series] {
        suites.enumerated().flatMap { index, suite in
            [false, true].map { p95 in
                MatrixChart.Series(
                    label: label(suite, p95),
                    values: values(suite, p95),
                    colour: index,
                    dash: p95 ? "6 3" : nil
                )
            }
        }
    }

    /// `5%`, `0.5%`: a share as a percentage, to at most three decimals.
    static func percent(_ share: Double) -> String { TimeSpan.trimmed(share * 100) + "%" }

    /// `a`, `a and b`, `a, b and c`.
    static func list(_ items: [String]) -> String {
        guard items.count > 1, let last = items.last else { return items.first ?? "unmeasured" }
        return items.dropLast().joined(separator: ", ") + " and " + last
    }
}
