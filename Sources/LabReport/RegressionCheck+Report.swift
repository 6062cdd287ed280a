import Foundation
public import LabAnalysis
import LabCharts
import LabCore

/// How `lab check` of runs with rounds reads: calibration units, p-values, rounds.
extension RegressionCheck: GateFormat {
    public static let title = "Regression check"
    public static let unit = "calibration units"
    public static let stepsNoun = "steps"
    public static let terminalColumns: [(name: String, width: Int)] = [
        ("baseline", 11), ("run", 11), ("ratio", 9), ("p", 10),
    ]
    public static let markdownColumns = ["Baseline (cu)", "Run (cu)", "Ratio", "p", "Rounds", "Threshold"]
    public static let csvColumns = [
        "baseline_cu", "run_cu", "ratio", "p_value", "rounds_baseline", "rounds_run", "threshold",
    ]

    public var method: String {
        "Each round of a run gives every step one median, divided by the calibration unit the lab timed just before that round in the same process (the geometric mean of an RSA-2048 signature and an AES-128-CBC encryption of 16 KiB). A step **regressed** when its rounds are significantly slower than the baseline's (one-sided Mann–Whitney U, p < \(self.alpha)) *and* the estimated ratio (Hodges–Lehmann: the median of all run÷baseline ratios of rounds) exceeds ×\(Numbers.fixed(1 + self.threshold, 2)), or ×\(Numbers.fixed(1 + self.shortThreshold, 2)) for a step shorter than \(TimeSpan.trimmed(self.shortStep)) cu in the baseline (short steps move more between builds of the same code), or twice the largest offset one baseline process had from the pooled baselines, whichever is largest (the Threshold column)."
    }

    public var allowance: String {
        "threshold +\(Self.percent(self.threshold)); +\(Self.percent(self.shortThreshold)) under \(TimeSpan.trimmed(self.shortStep)) cu; wider where the baselines' processes spread; α = \(self.alpha)"
    }

    public func summaryFigure(_ row: Row) -> String {
        "×\(Numbers.fixed(row.ratio, 3))"
    }

    public func terminalCells(_ row: Row) -> [String] {
        [
            Numbers.fixed(row.baseline, 4), Numbers.fixed(row.run, 4), "×" + Numbers.fixed(row.ratio, 3),
            String(format: "%.2g", row.pValue),
        ]
    }

    public func markdownCells(_ row: Row) -> [String] {
        [
            Numbers.fixed(row.baseline, 4), Numbers.fixed(row.run, 4), "×\(Numbers.fixed(row.ratio, 3))",
            String(format: "%.2g", row.pValue), "\(row.rounds.baseline) / \(row.rounds.run)",
            "+\(Self.percent(row.threshold))",
        ]
    }

    public func csvFields(_ row: Row) -> [String] {
        [
            Numbers.fixed(row.baseline, 6), Numbers.fixed(row.run, 6), Numbers.fixed(row.ratio, 4),
            String(format: "%.3g", row.pValue), String(row.rounds.baseline), String(row.rounds.run),
            Numbers.fixed(row.threshold, 4),
        ]
    }

    /// A verdict that is not a change, in words that say what the test found: "×1.204,
    /// significant, within the noise allowance of ±25%" rather than "no significant change".
    public func plainVerdict(_ row: Row) -> String {
        switch row.verdict {
        case .withinAllowance:
            "×\(Numbers.fixed(row.ratio, 3)), significant, within the noise allowance of ±\(Self.percent(row.threshold))"
        default: row.verdict.rawValue
        }
    }

    public func failure(_ row: Row) -> (message: String, details: String) {
        let ratio =
            "×\(Numbers.fixed(row.ratio, 3)), p = \(String(format: "%.2g", row.pValue)) (threshold +\(Self.percent(row.threshold)))"
        return ("slower: \(ratio)", "\(row.label): slower, \(ratio)")
    }

    /// A share as a percentage, with a decimal only when it has one: `8%`, `12.5%`.
    static func percent(_ fraction: Double) -> String {
        Numbers.fixed(fraction * 100, fraction * 100 == (fraction * 100).rounded() ? 0 : 1) + "%"
    }
}
