import Foundation

/// Latency by percentile, one line per step, drawn as SVG.
///
/// The x axis is HdrHistogram's classic percentile scale, `log10(1 / (1 - p))`, so 90 %, 99 %, 99.9 %
/// and 99.99 % are evenly spaced and the tail gets as much room as the body; the y axis is
/// logarithmic so steps that differ a thousandfold still show their shape. Beyond 99.99 % every
/// point, the maximum included, is drawn at the right edge.
public struct LatencyChart: Chart {
    /// One point of a curve.
    public struct Point: Sendable, Equatable {
        /// Where the percentile falls on the x axis (`LatencyChart.x(percentile:)`).
        public var x: Double
        /// The latency at it, in nanoseconds (at least 1).
        public var nanoseconds: Double

        /// A point at `x` of `nanoseconds`.
        public init(x: Double, nanoseconds: Double) {
            self.x = x
            self.nanoseconds = nanoseconds
        }
    }

    /// One step's line.
    public struct Curve: Sendable, Equatable {
        /// The legend's label: the step's name.
        public var name: String
        /// Its points, by percentile.
        public var points: [Point]
        /// Its place in the palette (`SVG.colour`), nil for its place in the chart: a step
        /// keeps its colour across a group's charts.
        public var colour: Int?

        /// A line named `name` through `points`.
        public init(name: String, points: [Point], colour: Int? = nil) {
            self.name = name
            self.points = points
            self.colour = colour
        }
    }

    /// A bound a threshold puts on one step's percentile, drawn across the chart where the
    /// latency is the bound, marked at the percentile.
    public struct Limit: Sendable, Equatable {
        /// `exchange p99 < 50 ms`.
        public var label: String
        /// Where the percentile falls on the x axis (`LatencyChart.x(percentile:)`).
        public var x: Double
        /// The bound, in nanoseconds.
        public var nanoseconds: Double
        /// Whether the run met it.
        public var met: Bool

        /// A limit.
        public init(label: String, x: Double, nanoseconds: Double, met: Bool) {
            self.label = label
            self.x = x
            self.nanoseconds = nanoseconds
            self.met = met
        }
    }

    /// The chart's heading.
    public var title: String
    /// The lines, in legend order.
    public var curves: [Curve]
    /// The thresholds' bounds on these steps (none by default).
    public var limits: [Limit] = []
    /// Whether each point carries its value for the pointer (`SVG.tips`).
    public var tips = false
    /// A latency in nanoseconds as the y axis writes it (`250 µs`).
    public var latencyLabel: (Double) -> String
    /// The canvas it is drawn on.
    public var frame = Frame()

    /// A chart of `curves` under `title`, its latencies written by `latencyLabel`.
    public init(title: String, curves: [Curve], latencyLabel: @escaping (Double) -> String) {
        self.title = title
        self.curves = curves
        self.latencyLabel = latencyLabel
    }

    /// Percentile ticks on the x axis: label and position.
    public static let percentileTicks: [Axis.Tick] = [
        Axis.Tick(value: 0, label: "0%"), Axis.Tick(value: 1, label: "90%"), Axis.Tick(value: 2, label: "99%"),
        Axis.Tick(value: 3, label: "99.9%"), Axis.Tick(value: 4, label: "99.99%"),
    ]

    /// The right edge of the x axis: 99.99 %.
    public static var xMax: Double { Self.percentileTicks.last?.value ?? 4 }

    /// Where `percentile` (0–100) falls on the x axis, at most `xMax`.
    public static func x(percentile: Double) -> Double {
        percentile >= 100 ? Self.xMax : Swift.min(log10(100 / (100 - percentile)), Self.xMax)
    }

    /// The document.
    public func render() -> String {
        let frame = self.frame
        var svg = SVG(frame: frame)
        svg.tips = self.tips
        let top = svg.heading(self.title, frame: frame) + 12
        let left = frame.isNarrow ? 66.0 : 80.0
        let legend = self.legend
        // Room for the last percentile's label, centred on the plot's right end.
        let right = frame.isNarrow ? frame.width - 24 : legend.plotRight(frame)
        let bottom = top + (frame.isNarrow ? 240 : 310)
        svg.height = frame.isNarrow ? bottom + 66 + legend.height : Swift.max(bottom + 52, top + legend.height + 8)
        let measured = self.curves.flatMap { $0.points.map(\.nanoseconds) }
        // A bound within ten times of the curves widens the axis to it; one farther off would
        // flatten the curves, and is named at the edge it lies beyond instead.
        let near = self.limits.filter { limit in
            guard let low = measured.min(), let high = measured.max() else { return false }
            return limit.nanoseconds >= low / 10 && limit.nanoseconds <= high * 10
        }
        let values = measured + near.map(\.nanoseconds)
        guard let lowest = values.min(), let highest = values.max() else {
            svg.text("No data", x: (left + right) / 2, y: (top + bottom) / 2, anchor: .middle, size: 14)
            return svg.rendered(title: self.title)
        }
        let x = Axis(
            .horizontal,
            scale: Axis.Scale(.linear, from: 0, to: Self.xMax, ticks: Self.percentileTicks.map(\.value)),
            ticks: Self.percentileTicks,
            from: left,
            to: right,
            at: bottom,
            rule: .grid(colour: "#e3e3e3", spans: [top...bottom])
        )
        let y = Axis(
            .vertical,
            scale: .roundLogarithmic(from: lowest, to: highest, maximumTicks: 10),
            from: bottom,
            to: top,
            at: left,
            rule: .grid(colour: "#e3e3e3", spans: [left...right]),
            label: self.latencyLabel
        )
        y.drawTicks(into: &svg)
        x.drawTicks(into: &svg)
        x.drawLine(into: &svg)
        y.drawLine(into: &svg)
        x.drawTitle("Percentile", offset: 36, into: &svg)
        y.drawTitle("Latency (log scale)", offset: left - 14, into: &svg)

        let placed = legend.placed(frame, plotRight: right, top: top + 8, below: bottom + 62)
        self.drawCurves(&svg, x: x, y: y, legend: placed)
        for (index, limit) in self.limits.filter({ !near.contains($0) }).enumerated() {
            let above = limit.nanoseconds > highest
            svg.text(
                "\(above ? "↑" : "↓") \(limit.label), \(above ? "above" : "below") the chart",
                x: x.position(Self.xMax) - 4,
                y: (above ? top + 14 : bottom - 8) + Double(index) * (above ? 14 : -14),
                anchor: .end,
                size: 11,
                fill: limit.met ? "#777" : "#c0262d"
            )
        }
        for limit in near {
            // Red where the run missed it, grey where it met it.
            let colour = limit.met ? "#777" : "#c0262d"
            let level = y.position(limit.nanoseconds)
            svg.line(x.position(0), level, x.position(Self.xMax), level, stroke: colour, width: 1.5, dash: "8 4")
            svg.circle(x: x.position(limit.x), y: level, radius: 4, fill: colour)
            svg.text(limit.label, x: x.position(Self.xMax) - 4, y: level - 5, anchor: .end, size: 11, fill: colour)
        }
        return svg.rendered(title: self.title)
    }

    /// A legend entry per step, in its colour (dashed past the palette's end), not yet placed.
    private var legend: Legend {
        Legend(
            self.curves.enumerated().map { index, curve in
                let colour = curve.colour ?? index
                return Legend.Entry(
                    colour: SVG.colour(colour),
                    dash: colour < SVG.palette.count ? nil : "6 3",
                    label: curve.name
                )
            },
            x: 0,
            y: 0,
            lineWidth: 3
        )
    }

    /// One line per step, each followed by its entry in `legend`.
    private func drawCurves(_ svg: inout SVG, x: Axis, y: Axis, legend: Legend) {
        for (index, curve) in self.curves.enumerated() {
            let entry = legend.entries[index]
            svg.polyline(
                curve.points.map { (x.position($0.x), y.position($0.nanoseconds)) },
                stroke: entry.colour,
                dash: entry.dash
            )
            for point in curve.points {
                // x = log10(100 / (100 - p)): the percentile back from its place.
                let percentile = 100 - 100 / pow(10, point.x)
                let share = percentile >= 99.99 ? "max" : "p" + String(format: "%g", (percentile * 100).rounded() / 100)
                svg.tip(
                    x: x.position(point.x),
                    y: y.position(point.nanoseconds),
                    "\(curve.name) \(share): \(self.latencyLabel(point.nanoseconds))"
                )
            }
            legend.draw(index, into: &svg)
        }
    }
}
