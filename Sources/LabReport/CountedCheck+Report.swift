import Foundation
public import LabAnalysis
import LabCharts
import LabCore

/// How `lab check` of counted runs reads: instructions, the baselines' spread, samples.
extension CountedCheck: GateFormat {
    public static let terminalColumns: [(name: String, width: Int)] = [
        ("baseline", 14), ("run", 14), ("ratio", 10), ("allowed", 10),
    ]
    public static let markdownColumns = [
        "Baseline (instructions)", "Run", "Ratio", "Spread", "Allowance", "Samples", "Allocations",
    ]
    public static let csvColumns = [
        "baseline_instructions", "run_instructions", "ratio", "baseline_spread", "allowance", "samples_baseline",
        "samples_run", "baseline_allocations", "run_allocations",
    ]
    public static let title = "Regression check (counted)"
    public static let unit = "instructions (median over samples)"
    public static let stepsNoun = "counted steps"

    public func summaryFigure(_ row: Row) -> String {
        "×\(Numbers.fixed(row.ratio, 4)) (allowed ±\(Self.percent(row.allowance)))"
    }

    public func failure(_ row: Row) -> (message: String, details: String) {
        let ratio = self.summaryFigure(row)
        return (
            "more work: \(ratio)",
            "\(row.label): \(Numbers.integer(UInt64(row.run))) instructions against the baseline's \(Numbers.integer(UInt64(row.baseline))), \(ratio)"
        )
    }

    public func plainVerdict(_ row: Row) -> String {
        row.verdict.rawValue
    }

    public var method: String {
        "Both were counted under callgrind (`lab run --counted`): each sample of a step reports the instructions it executed, the same in every run of the same build except for work that depends on each run's random keys. A step **regressed** when its median over the run's samples exceeds the baselines' median (the median of each baseline process's median) by more than its allowance: \(Self.percent(self.floor)) plus \(Numbers.fixed(self.spreadFactor, 0)) times the largest distance of one baseline process's median from the pooled one (the Spread column), and never less than \(Numbers.integer(UInt64(self.minimumChange))) instructions (work beside a step can move it by a few dozen instructions, where its buffers fall). Steps with fewer than \(CountedCheck.minimumSamples) samples on a side are not judged."
    }

    public var allowance: String {
        "allowance \(Self.percent(self.floor)) + \(Numbers.fixed(self.spreadFactor, 0))× the baselines' spread, and at least \(Numbers.integer(UInt64(self.minimumChange))) instructions"
    }

    public func terminalCells(_ row: Row) -> [String] {
        [
            Numbers.integer(UInt64(row.baseline)), Numbers.integer(UInt64(row.run)), "×" + Numbers.fixed(row.ratio, 4),
            "±" + Self.percent(row.allowance),
        ]
    }

    public func markdownCells(_ row: Row) -> [String] {
        [
            Numbers.integer(UInt64(row.baseline)), Numbers.integer(UInt64(row.run)), "×\(Numbers.fixed(row.ratio, 4))",
            Self.percent(row.spread), "±\(Self.percent(row.allowance))", "\(row.samples.baseline) / \(row.samples.run)",
            "\(row.allocations.baseline) / \(row.allocations.run)",
        ]
    }

    public func csvFields(_ row: Row) -> [String] {
        [
            Numbers.fixed(row.baseline, 1), Numbers.fixed(row.run, 1), Numbers.fixed(row.ratio, 5),
            Numbers.fixed(row.spread, 5), Numbers.fixed(row.allowance, 5), String(row.samples.baseline),
            String(row.samples.run), String(row.allocations.baseline), String(row.allocations.run),
        ]
    }

    /// Two decimals below 1%, one above.
    static func percent(_ fraction: Double) -> String {
        Numbers.fixed(fraction * 100, fraction < 0.01 ? 2 : 1) + "%"
    }
}
