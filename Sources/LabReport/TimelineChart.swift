import Foundation
import LabCharts
import LabCore
import LabResults

/// The run over time, drawn as SVG: above, each group's exchange p50 (solid) and p99
/// (dashed) per interval on a logarithmic axis; below, each group's exchanges per second.
///
/// Each point sits at the middle of its interval, so a stall from second 3 to 4 peaks at 3.5 s.
/// An interval without exchanges leaves a gap in the latency lines (there is no latency to
/// draw) and a zero in the rate. Every line carries `data-intervals`, the interval index of
/// each of its points in order, so that tools (and the tests) can read the chart back.
struct TimelineChart {
    /// One group's line.
    struct Series {
        /// The legend's label.
        var label: String
        /// The file-safe name the lines' ids are made of.
        var slug: String
        /// The exchange's figures per interval, every interval of the chart's range.
        var points: [RunIntervals.Point]
    }

    /// The chart's heading.
    var title: String
    /// The intervals' width, in seconds.
    var width: Double
    /// The groups, in legend order.
    var series: [Series]

    /// The chart of `intervals`' exchanges, one series per group; nil when they hold none.
    init?(title: String, intervals: RunIntervals, labels: (GroupKey) -> String) {
        guard let indices = intervals.indices else { return nil }
        self.title = title
        self.width = Double(intervals.width) / 1e9
        self.series = intervals.groups.keys.sorted().map { key in
            Series(
                label: labels(key),
                slug: SVG.slug([key.flow, key.suite, key.provider, key.transport]),
                points: intervals.points(key, .exchange, over: indices)
            )
        }
    }

    /// The document.
    func render() -> String {
        let legend = Swift.max(Double(self.series.map(\.label.count).max() ?? 0) * 7 + 70, 120)
        let left = 80.0
        let right = left + 640
        let width = right + legend
        let latencyTop = 56.0
        let latencyBottom = 300.0
        let rateTop = 350.0
        let rateBottom = 500.0
        let height = rateBottom + 56
        var svg = SVG(width: width, height: height)
        svg.text(self.title, x: left, y: 28, size: 15, bold: true)

        let all = self.series.flatMap(\.points)
        guard let first = all.map(\.index).min(), let last = all.map(\.index).max() else {
            svg.text("No data", x: (left + right) / 2, y: (latencyTop + rateBottom) / 2, anchor: .middle, size: 14)
            return svg.rendered(title: self.title)
        }
        let t0 = Double(first) * self.width
        let t1 = Double(last + 1) * self.width
        func px(_ index: Int) -> Double {
            left + ((Double(index) + 0.5) * self.width - t0) / (t1 - t0) * (right - left)
        }
        func pxTime(_ t: Double) -> Double { left + (t - t0) / (t1 - t0) * (right - left) }

        // The time axis, shared by both panels.
        let step = NiceNumbers.ceiling(Swift.max((t1 - t0) / 8, 1e-9) * 1e3) / 1e3
        var tick = (t0 / step).rounded(.up) * step
        while tick <= t1 + 1e-9 {
            for (top, bottom) in [(latencyTop, latencyBottom), (rateTop, rateBottom)] {
                svg.line(pxTime(tick), top, pxTime(tick), bottom, stroke: "#e3e3e3")
            }
            svg.text(TimeSpan.trimmed(tick) + " s", x: pxTime(tick), y: rateBottom + 18, anchor: .middle, size: 11)
            tick += step
        }
        svg.text(
            "Seconds from the start of the measured run (each point: the exchanges that started in its interval)",
            x: (left + right) / 2,
            y: height - 14,
            anchor: .middle,
            size: 12
        )

        let latency = Panel(
            title: "Exchange latency (log scale)",
            top: latencyTop,
            bottom: latencyBottom,
            left: left,
            right: right
        )
        self.drawLatency(&svg, in: latency, px: px)
        self.drawRate(
            &svg,
            in: Panel(title: "Exchanges per second", top: rateTop, bottom: rateBottom, left: left, right: right),
            px: px
        )

        // The legend: a colour per group, then the line styles.
        for (index, series) in self.series.enumerated() {
            let colour = SVG.palette[index % SVG.palette.count]
            let y = latencyTop + 8 + Double(index) * 20
            svg.line(right + 20, y, right + 44, y, stroke: colour, width: 3)
            svg.text(series.label, x: right + 50, y: y + 4, size: 12)
        }
        let styles = latencyTop + 16 + Double(self.series.count) * 20
        svg.line(right + 20, styles, right + 44, styles, stroke: "#555", width: 2)
        svg.text("p50", x: right + 50, y: styles + 4, size: 12)
        svg.line(right + 20, styles + 20, right + 44, styles + 20, stroke: "#555", width: 2, dash: "6 3")
        svg.text("p99", x: right + 50, y: styles + 24, size: 12)
        return svg.rendered(title: self.title)
    }

    /// Where one of the chart's two panels sits, and its heading.
    private struct Panel {
        let title: String
        let top: Double
        let bottom: Double
        let left: Double
        let right: Double

        /// The heading and the two axes.
        func frame(_ svg: inout SVG) {
            svg.text(self.title, x: self.left, y: self.top - 10, size: 12, bold: true)
            svg.line(self.left, self.top, self.left, self.bottom, stroke: "#555")
            svg.line(self.left, self.bottom, self.right, self.bottom, stroke: "#555")
        }
    }

    /// The latency panel: p50 and p99 per group, logarithmic.
    private func drawLatency(_ svg: inout SVG, in panel: Panel, px: (Int) -> Double) {
        let (top, bottom, left, right) = (panel.top, panel.bottom, panel.left, panel.right)
        let values = self.series.flatMap(\.points).filter { $0.count > 0 }.flatMap { [$0.p50, $0.p99] }
        panel.frame(&svg)
        guard let lowest = values.min(), let highest = values.max() else { return }
        let yLow = NiceNumbers.floor(Swift.max(lowest, 1))
        var yHigh = NiceNumbers.ceiling(highest)
        if yHigh <= yLow { yHigh = NiceNumbers.ceiling(yLow * 1.000_001) }
        let logLow = log10(yLow)
        let logSpan = log10(yHigh) - logLow
        func py(_ value: Double) -> Double { bottom - (log10(Swift.max(value, 1)) - logLow) / logSpan * (bottom - top) }
        var ticks = NiceNumbers.series(from: yLow, to: yHigh)
        if ticks.count > 8 { ticks = ticks.filter { log10($0).rounded() == log10($0) } }
        for tick in ticks {
            svg.line(left, py(tick), right, py(tick), stroke: "#e3e3e3")
            svg.text(TimeSpan.format(nanoseconds: tick), x: left - 8, y: py(tick) + 4, anchor: .end, size: 11)
        }
        for (index, series) in self.series.enumerated() {
            let colour = SVG.palette[index % SVG.palette.count]
            for (name, value, dash) in [("p50", \RunIntervals.Point.p50, nil), ("p99", \RunIntervals.Point.p99, "6 3")]
            {
                // A gap where an interval had no exchange: one line per run of intervals that had.
                var runs: [[RunIntervals.Point]] = [[]]
                for point in series.points {
                    if point.count > 0 {
                        runs[runs.count - 1].append(point)
                    } else if !runs[runs.count - 1].isEmpty {
                        runs.append([])
                    }
                }
                for (part, run) in runs.enumerated() where !run.isEmpty {
                    let attributes = [
                        ("id", "\(name)-\(series.slug)-\(part)"),
                        ("data-intervals", run.map { String($0.index) }.joined(separator: " ")),
                    ]
                    // A line through one point draws nothing: a dot instead.
                    if run.count == 1, let point = run.first {
                        svg.circle(
                            x: px(point.index),
                            y: py(point[keyPath: value]),
                            radius: dash == nil ? 3 : 2,
                            fill: colour,
                            attributes: attributes
                        )
                        continue
                    }
                    svg.polyline(
                        run.map { (px($0.index), py($0[keyPath: value])) },
                        stroke: colour,
                        dash: dash,
                        attributes: attributes
                    )
                }
            }
        }
    }

    /// The rate panel: exchanges per second per group, linear from 0.
    private func drawRate(_ svg: inout SVG, in panel: Panel, px: (Int) -> Double) {
        let (top, bottom, left, right) = (panel.top, panel.bottom, panel.left, panel.right)
        panel.frame(&svg)
        let highest = self.series.flatMap(\.points).map(\.perSecond).max() ?? 0
        let tickStep = NiceNumbers.ceiling(Swift.max(highest, 1) / 4)
        let axisMax = (Swift.max(highest, 1) / tickStep).rounded(.up) * tickStep
        func py(_ value: Double) -> Double { bottom - value / axisMax * (bottom - top) }
        var tick = 0.0
        while tick <= axisMax * (1 + 1e-9) {
            svg.line(left, py(tick), right, py(tick), stroke: "#e3e3e3")
            svg.text(Numbers.fixed(tick, 0, grouped: true), x: left - 8, y: py(tick) + 4, anchor: .end, size: 11)
            tick += tickStep
        }
        for (index, series) in self.series.enumerated() where !series.points.isEmpty {
            svg.polyline(
                series.points.map { (px($0.index), py($0.perSecond)) },
                stroke: SVG.palette[index % SVG.palette.count],
                attributes: [
                    ("id", "rate-\(series.slug)"),
                    ("data-intervals", series.points.map { String($0.index) }.joined(separator: " ")),
                ]
            )
        }
    }
}
