import Foundation
import LabCharts
import LabCore

/// A candidate's chart in `comparison.md`: its p50 ratio per step.
extension ComparisonReport {
    /// Candidate `index`'s p50 ratio per step, as horizontal bars on a log scale around 1, the
    /// noise floor shaded, each bar coloured by its verdict.
    public func chart(_ index: Int) -> String {
        let comparison = self.comparison
        let candidate = comparison.candidates[index]
        // Steps without a verdict (a key made once per run) would only stretch the scale.
        let rows = comparison.rows.filter {
            $0.cells[index].p50Ratio != nil && ![.tooFewSamples, .missing].contains($0.cells[index].verdict)
        }
        let title = "p50 ratio per step: \(candidate.label) ÷ \(comparison.baseline.label)"
        let common = comparison.common[index]
        let widest = rows.map { $0.cells[index].floor }.max() ?? comparison.threshold
        let ratios = rows.compactMap { $0.cells[index].p50Ratio } + [common.factor]
        let extreme = Swift.max(
            ratios.map { abs(log2($0)) }.max() ?? 0,
            abs(log2(common.factor)) + log2(1 + widest) * 1.5,
            0.1
        )
        let layout = ChartLayout(labels: rows.map(Self.rowLabel), span: Swift.min(extreme * 1.1, 10))
        var svg = SVG(width: layout.width, height: layout.bottom + 70)
        svg.text(title, x: 16, y: 26, size: 15, bold: true)
        svg.text(
            "Bars right of 1 are slower. Shaded: each step's noise floor"
                + (common.applies ? " around the run's common factor ×\(Self.ratio(common.factor)) (dashed)." : ".")
                + " Red slower, green faster, grey no significant change.",
            x: 16,
            y: 46,
            size: 11
        )
        for (position, row) in rows.enumerated() {
            let floor = row.cells[index].floor
            let (low, high) = (layout.x(common.factor / (1 + floor)), layout.x(common.factor * (1 + floor)))
            svg.rect(x: low, y: layout.rowTop(position), width: high - low, height: ChartLayout.pitch, fill: "#eeeeee")
        }
        layout.drawAxis(&svg, factor: common.applies ? common.factor : nil)
        if rows.isEmpty {
            svg.text("No step in common", x: layout.middle, y: ChartLayout.top + ChartLayout.pitch / 2, anchor: .middle, size: 14)
        }
        for (position, row) in rows.enumerated() {
            let cell = row.cells[index]
            let colour =
                switch cell.verdict {
                case .slower: "#e15759"
                case .faster: "#59a14f"
                default: "#9d9d9d"
                }
            layout.drawBar(&svg, position: position, ratio: cell.p50Ratio ?? 1, label: Self.rowLabel(row), colour: colour)
        }
        return svg.rendered(title: title)
    }

    /// Ratios to mark on a log axis reaching 2^±span.
    static func ticks(span: Double) -> [Double] {
        let candidates: [Double] = [1.0 / 64, 1.0 / 16, 1.0 / 4, 0.5, 0.8, 0.9, 1, 1.1, 1.25, 2, 4, 16, 64, 256]
        let inside = candidates.filter { abs(log2($0)) <= span }
        // Keep the axis readable: at most nine marks.
        return inside.count > 9
            ? inside.filter { [1.0 / 64, 1.0 / 16, 0.25, 0.5, 1, 2, 4, 16, 64].contains($0) } : inside
    }

    static func tickLabel(_ ratio: Double) -> String {
        ratio >= 0.5 ? TimeSpan.trimmed(ratio) : "1/" + TimeSpan.trimmed((1 / ratio).rounded())
    }
}

/// Where a comparison chart's parts go: one row per step, ratios on a log scale of ±`span`
/// octaves around 1.
struct ChartLayout {
    static let top = 64.0
    static let pitch = 22.0
    static let barHeight = 14.0

    /// The left edge of the plot: room for the longest label.
    let left: Double
    let width: Double
    let right: Double
    let bottom: Double
    let span: Double

    init(labels: [String], span: Double) {
        self.left = Swift.min(Swift.max(Double(labels.map(\.count).max() ?? 0) * 6.6 + 24, 140), 520)
        self.width = self.left + 560
        self.right = self.width - 90
        self.bottom = Self.top + Double(Swift.max(labels.count, 1)) * Self.pitch
        self.span = span
    }

    /// The plot's horizontal middle.
    var middle: Double { (self.left + self.right) / 2 }

    /// Where `ratio` falls, clamped to the scale.
    func x(_ ratio: Double) -> Double {
        let value = Swift.max(-self.span, Swift.min(self.span, log2(ratio)))
        return self.left + (value + self.span) / (2 * self.span) * (self.right - self.left)
    }

    /// The top of row `position`.
    func rowTop(_ position: Int) -> Double { Self.top + Double(position) * Self.pitch }

    /// Ticks, the line at ×1, the common factor's dashed line if there is one, the axis title.
    func drawAxis(_ svg: inout SVG, factor: Double?) {
        for tick in ComparisonReport.ticks(span: self.span) {
            svg.line(self.x(tick), Self.top - 6, self.x(tick), self.bottom, stroke: "#e0e0e0")
            svg.text("×" + ComparisonReport.tickLabel(tick), x: self.x(tick), y: self.bottom + 18, anchor: .middle, size: 11)
        }
        svg.line(self.x(1), Self.top - 8, self.x(1), self.bottom + 4, stroke: "#555")
        if let factor {
            svg.line(self.x(factor), Self.top - 8, self.x(factor), self.bottom + 4, stroke: "#555", dash: "4 3")
        }
        svg.text("p50, candidate ÷ baseline (log scale)", x: self.middle, y: self.bottom + 40, anchor: .middle, size: 12)
    }

    /// Row `position`'s bar from 1 to `ratio`, its label on the left and its ratio on the right.
    func drawBar(_ svg: inout SVG, position: Int, ratio: Double, label: String, colour: String) {
        let y = self.rowTop(position) + (Self.pitch - Self.barHeight) / 2
        let start = Swift.min(self.x(1), self.x(ratio))
        svg.rect(x: start, y: y, width: Swift.max(abs(self.x(ratio) - self.x(1)), 1), height: Self.barHeight, fill: colour)
        svg.text(label, x: self.left - 8, y: y + Self.barHeight - 3, anchor: .end, size: 11)
        svg.text("×" + Numbers.fixed(ratio, 3), x: self.right + 10, y: y + Self.barHeight - 3, size: 11)
    }
}
