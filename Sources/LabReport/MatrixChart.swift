import Foundation
import LabCharts
import LabCore
import LabResults

/// A matrix's metric against its parameter, drawn as SVG: one line per series (`<polyline
/// id="matrix-<series>" data-x="427,4096,…">`), the x axis logarithmic when the parameter is
/// numeric and spans ten times or more (payload sizes), the y axis logarithmic when the values
/// do; a point per cell that measured something.
struct MatrixChart {
    var figures: MatrixFigures

    func render() -> String {
        let figures = self.figures
        let title = "\(figures.metric) against \(MatrixFigures.short(figures.parameter))"
        let legend = Swift.max(Double(figures.series.map(\.label.count).max() ?? 0) * 7 + 70, 120)
        let (left, right, top, bottom) = (90.0, 700.0, 56.0, 380.0)
        var svg = SVG(width: right + legend, height: bottom + 60)
        svg.text(title, x: left, y: 28, size: 15, bold: true)
        let numbers = figures.xs.compactMap(Double.init)
        let logX = figures.numeric && (numbers.min() ?? 0) > 0 && (numbers.max() ?? 0) >= 10 * (numbers.min() ?? 1)
        func px(_ index: Int) -> Double {
            guard figures.numeric, numbers.count == figures.xs.count, let low = numbers.first, let high = numbers.last,
                high > low
            else {
                return figures.xs.count < 2
                    ? (left + right) / 2 : left + Double(index) / Double(figures.xs.count - 1) * (right - left)
            }
            let value = numbers[index]
            let fraction =
                logX ? (log10(value) - log10(low)) / (log10(high) - log10(low)) : (value - low) / (high - low)
            return left + fraction * (right - left)
        }
        let values = figures.series.flatMap { $0.points.compactMap(\.value) }
        let low = Swift.max(values.min() ?? 1, 1e-9)
        let high = Swift.max(values.max() ?? 1, low * 1.0001)
        let logY = low > 0 && high >= 10 * low
        let (yLow, yHigh) = logY ? (floor(log10(low)), ceil(log10(high))) : (0, NiceNumbers.ceiling(high))
        func py(_ value: Double) -> Double {
            let fraction = logY ? (log10(Swift.max(value, 1e-9)) - yLow) / (yHigh - yLow) : value / yHigh
            return bottom - fraction * (bottom - top)
        }
        svg.line(left, bottom, right, bottom, stroke: "#444")
        svg.line(left, top, left, bottom, stroke: "#444")
        let ticks =
            logY
            ? stride(from: yLow, through: yHigh, by: 1).map { pow(10, $0) }
            : stride(from: 0, through: yHigh, by: yHigh / 5).map { $0 }
        for tick in ticks {
            svg.line(left, py(tick), right, py(tick), stroke: "#eee")
            svg.text(Self.format(tick, unit: figures.unit), x: left - 6, y: py(tick) + 4, anchor: .end, size: 11)
        }
        for (index, x) in figures.xs.enumerated() {
            svg.line(px(index), bottom, px(index), bottom + 4, stroke: "#444")
            svg.text(x, x: px(index), y: bottom + 18, anchor: .middle, size: 11)
        }
        svg.text(
            MatrixFigures.short(figures.parameter) + (logX ? " (log scale)" : ""),
            x: (left + right) / 2,
            y: bottom + 40,
            anchor: .middle,
            size: 12
        )
        for (index, series) in figures.series.enumerated() {
            let colour = SVG.palette[index % SVG.palette.count]
            let points = series.points.enumerated().compactMap { position, point in
                point.value.map { (x: px(position), y: py($0)) }
            }
            let xs = series.points.filter { $0.value != nil }.map(\.x).joined(separator: ",")
            svg.polyline(
                points,
                stroke: colour,
                attributes: [("id", "matrix-\(SVG.slug([series.label]))"), ("data-x", xs)]
            )
            for point in points { svg.circle(x: point.x, y: point.y, radius: 3, fill: colour) }
            let y = top + 20 * Double(index)
            svg.line(right + 16, y, right + 40, y, stroke: colour, width: 2)
            svg.text(series.label, x: right + 46, y: y + 4, size: 12)
        }
        return svg.rendered(title: title)
    }

    /// A tick or a cell's value in the metric's unit.
    static func format(_ value: Double, unit: String) -> String {
        switch unit {
        case "ns": TimeSpan.format(nanoseconds: value)
        case "bytes": ByteSize.format(value)
        case "1/s": "\(Numbers.fixed(value, 1, grouped: true))/s"
        case "fraction": "\(Numbers.fixed(value * 100, 1))%"
        default: Numbers.fixed(value, value == value.rounded() ? 0 : 2, grouped: true)
        }
    }
}

extension MarkdownReporter {
    /// The Matrix section: each cell's metric, a row per series, a column per parameter value.
    static func matrix(_ result: RunResult, chart: String?) -> [String] {
        guard let figures = MatrixFigures.of(result) else { return [] }
        var lines = [
            "## Matrix", "",
            "`\(figures.metric)` (`report.matrixMetric`) for each combination, against `\(MatrixFigures.short(figures.parameter))`;"
                + " every cell is a group of its own in the tables above.",
            "",
        ]
        if let chart {
            lines += ["![\(figures.metric) against \(MatrixFigures.short(figures.parameter))](\(chart))", ""]
        }
        lines.append("| Series | " + figures.xs.map(Self.cell).joined(separator: " | ") + " |")
        lines.append("|:--|" + String(repeating: "--:|", count: figures.xs.count))
        for series in figures.series {
            let cells = series.points.map { $0.value.map { MatrixChart.format($0, unit: figures.unit) } ?? "—" }
            lines.append("| \(Self.cell(series.label)) | " + cells.joined(separator: " | ") + " |")
        }
        return lines + [""]
    }
}
