import Foundation
import Histogram
import LabCharts
import LabCore

/// One group's latency by percentile, one line per step, drawn as SVG.
///
/// The x axis is HdrHistogram's classic percentile scale, `log10(1 / (1 - p))`, so 90 %, 99 %, 99.9 %
/// and 99.99 % are evenly spaced and the tail gets as much room as the body; the y axis is
/// logarithmic so steps that differ a thousandfold still show their shape. Beyond 99.99 % every
/// point, the maximum included, is drawn at the right edge.
struct LatencyChart {
    /// The chart's heading.
    var title: String
    /// The steps and their histograms, in legend order.
    var series: [(step: Step, histogram: Histogram<UInt64>)]

    /// Percentile ticks on the x axis: label and position.
    static let percentileTicks: [(label: String, x: Double)] = [
        ("0%", 0), ("90%", 1), ("99%", 2), ("99.9%", 3), ("99.99%", 4),
    ]

    /// The document.
    func render() -> String {
        let width = 760.0
        let height = 420.0
        let left = 80.0
        let top = 50.0
        let right = width - 180
        let bottom = height - 60
        let xMax = Self.percentileTicks.last?.x ?? 4
        var svg = SVG(width: width, height: height)
        svg.text(self.title, x: left, y: 28, size: 15, bold: true)

        let curves = self.series.filter { $0.histogram.totalCount > 0 }.map {
            ($0.step, Self.points($0.histogram, xMax))
        }
        let values = curves.flatMap { $0.1.map(\.value) }
        guard let lowest = values.min(), let highest = values.max() else {
            svg.text("No data", x: (left + right) / 2, y: (top + bottom) / 2, anchor: .middle, size: 14)
            return svg.rendered(title: self.title)
        }
        let yLow = NiceNumbers.floor(lowest)
        var yHigh = NiceNumbers.ceiling(highest)
        if yHigh <= yLow { yHigh = NiceNumbers.ceiling(yLow * 1.000_001) }
        let logLow = log10(yLow)
        let logSpan = log10(yHigh) - logLow
        func px(_ x: Double) -> Double { left + x / xMax * (right - left) }
        func py(_ value: Double) -> Double { bottom - (log10(value) - logLow) / logSpan * (bottom - top) }

        // Grid and axes.
        var yTicks = NiceNumbers.series(from: yLow, to: yHigh)
        if yTicks.count > 10 { yTicks = yTicks.filter { log10($0).rounded() == log10($0) } }
        for tick in yTicks {
            svg.line(left, py(tick), right, py(tick), stroke: "#e3e3e3")
            svg.text(TimeSpan.format(nanoseconds: tick), x: left - 8, y: py(tick) + 4, anchor: .end, size: 11)
        }
        for tick in Self.percentileTicks {
            svg.line(px(tick.x), top, px(tick.x), bottom, stroke: "#e3e3e3")
            svg.text(tick.label, x: px(tick.x), y: bottom + 18, anchor: .middle, size: 11)
        }
        svg.line(left, bottom, right, bottom, stroke: "#555")
        svg.line(left, top, left, bottom, stroke: "#555")
        svg.text("Percentile", x: (left + right) / 2, y: height - 16, anchor: .middle, size: 12)
        svg.text("Latency (log scale)", x: 18, y: (top + bottom) / 2, anchor: .middle, size: 12, rotate: -90)

        // One line per step, and the legend.
        for (index, curve) in curves.enumerated() {
            let colour = SVG.palette[index % SVG.palette.count]
            let dash = index < SVG.palette.count ? nil : "6 3"
            svg.polyline(curve.1.map { (px($0.x), py($0.value)) }, stroke: colour, dash: dash)
            let legendY = top + 8 + Double(index) * 20
            svg.line(right + 20, legendY, right + 44, legendY, stroke: colour, width: 3, dash: dash)
            svg.text(curve.0.name, x: right + 50, y: legendY + 4, size: 12)
        }
        return svg.rendered(title: self.title)
    }

    /// The curve's points: percentile position (clamped to `xMax`) and latency in nanoseconds (at least 1).
    static func points(_ histogram: Histogram<UInt64>, _ xMax: Double) -> [(x: Double, value: Double)] {
        var points: [(x: Double, value: Double)] = []
        let maximum = histogram.maxRecorded
        for step in histogram.percentiles(ticksPerHalfDistance: 5) {
            let percentile = step.percentileLevelIteratedTo
            let x = percentile >= 100 ? xMax : Swift.min(log10(100 / (100 - percentile)), xMax)
            let value = Double(Swift.max(Swift.min(step.value, maximum), 1))
            if let last = points.last, last.x == x {
                points[points.count - 1].value = Swift.max(last.value, value)
            } else {
                points.append((x, value))
            }
        }
        return points
    }
}
