import LabAnalysis
public import LabCharts
import LabCore

/// A candidate's chart in `comparison.md`: its p50 ratio per step (`ComparisonChart` draws it).
extension ComparisonReport {
    /// Candidate `index`'s p50 ratio per step, as horizontal bars on a log scale around 1, the
    /// noise floor shaded, each bar coloured by its verdict.
    public func chart(_ index: Int) -> ComparisonChart {
        let comparison = self.comparison
        let candidate = comparison.candidates[index]
        let common = comparison.common[index]
        // Steps without a verdict (a key made once per run) would only stretch the scale.
        let rows = comparison.rows.compactMap { row -> ComparisonChart.Row? in
            let cell = row.cells[index]
            guard let ratio = cell.p50Ratio, ![.tooFewSamples, .missing, .notJudged].contains(cell.verdict) else { return nil }
            let change: ComparisonChart.Change =
                switch cell.verdict {
                case .slower: .slower
                case .faster: .faster
                default: .unchanged
                }
            return ComparisonChart.Row(label: comparison.rowLabel(row) + (row.measure == .cpu ? " (CPU)" : ""), ratio: ratio, floor: cell.floor, change: change)
        }
        let chart = ComparisonChart(
            title: "p50 ratio per step: \(candidate.label) ÷ \(comparison.baseline.label)",
            note: "Bars right of 1 are slower. Shaded: each step's noise floor"
                + (common.applies ? " around the run's common factor ×\(Self.ratio(common.factor)) (dashed)." : ".")
                + " Red slower, green faster, grey no significant change.",
            rows: rows,
            factor: common.applies ? common.factor : nil,
            threshold: comparison.threshold,
            ratioLabel: { $0 >= 0.5 ? TimeSpan.trimmed($0) : "1/" + TimeSpan.trimmed((1 / $0).rounded()) }
        )
        return chart
    }
}
