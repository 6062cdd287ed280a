import Foundation

/// A matrix's metric against its parameter, drawn as SVG. A numeric parameter is an axis to
/// scale (logarithmic when it spans ten times or more: payload sizes), one line per series
/// (`<polyline id="matrix-<series>" data-x="427,4096,…">`). A parameter of names (providers,
/// KDFs) is a dot chart: a band per name, the series' dots side by side in it (`<circle
/// data-series=… data-x=…>`), no line between names that have no order. The y axis is
/// logarithmic when the values span ten times or more; a point per cell that measured something.
public struct MatrixChart: Chart {
    /// One line: a value per x, nil where the cell measured nothing.
    public struct Series: Sendable, Equatable {
        /// The legend's label.
        public var label: String
        /// The values, one per x of the chart, in its order.
        public var values: [Double?]
        /// The palette's colour (`SVG.colour`), nil for the series' own place: series that
        /// belong together (one suite at two RTTs) share one.
        public var colour: Int?
        /// The line's dash pattern (`stroke-dasharray`), nil for a solid line.
        public var dash: String?

        /// A line through `values`.
        public init(label: String, values: [Double?], colour: Int? = nil, dash: String? = nil) {
            self.label = label
            self.values = values
            self.colour = colour
            self.dash = dash
        }

        /// Its colour, as the palette has it, for series `index` of the chart.
        func stroke(_ index: Int) -> String { SVG.colour(self.colour ?? index) }
    }

    /// The chart's heading.
    public var title: String
    /// The parameter, the x axis's title.
    public var parameter: String
    /// Whether every x is a number (the axis is then to scale, not one step per x).
    public var numeric: Bool
    /// The parameter's values, as written, in order.
    public var xs: [String]
    /// The lines.
    public var series: [Series]
    /// A value as the y axis writes it.
    public var valueLabel: (Double) -> String
    /// The line under the heading, if any.
    public var subtitle: String?
    /// The canvas it is drawn on.
    public var frame = Frame()

    /// A chart of `series` against `parameter`'s values `xs`.
    public init(
        title: String,
        parameter: String,
        numeric: Bool,
        xs: [String],
        series: [Series],
        valueLabel: @escaping (Double) -> String
    ) {
        self.title = title
        self.parameter = parameter
        self.numeric = numeric
        self.xs = xs
        self.series = series
        self.valueLabel = valueLabel
    }

    /// The document.
    public func render() -> String {
        let frame = self.frame
        var svg = SVG(frame: frame)
        let top = svg.heading(self.title, subtitle: self.subtitle, frame: frame) + 16
        let left = frame.isNarrow ? 66.0 : 90.0
        let entries = Legend(
            self.series.enumerated().map { Legend.Entry(colour: $1.stroke($0), dash: $1.dash, label: $1.label) },
            x: 0,
            y: 0
        )
        let right = frame.isNarrow ? frame.width - 24 : entries.plotRight(frame)
        let bottom = top + (frame.isNarrow ? 240 : 324)
        let legend = entries.placed(frame, plotRight: right, top: top, below: bottom + 62)
        svg.height = Swift.max(bottom + 60, legend.y + legend.height)
        let (x, logX) = self.xAxis(from: left, to: right, at: bottom)
        let y = Axis(
            .vertical,
            scale: Self.valueScale(self.series.flatMap { $0.values.compactMap { $0 } }, divisions: 5),
            from: bottom,
            to: top,
            at: left,
            rule: .grid(colour: "#eee", spans: [left...right]),
            labelGap: 6,
            label: self.valueLabel
        )
        x.drawLine(into: &svg, colour: "#444")
        y.drawLine(into: &svg, colour: "#444")
        y.drawTicks(into: &svg)
        x.drawTicks(into: &svg)
        x.drawTitle(self.parameter + (logX ? " (log scale)" : ""), offset: 40, into: &svg)
        if !self.toScale {
            self.drawDots(x: x, y: y, legend: legend, into: &svg)
            return svg.rendered(title: self.title)
        }
        for (index, series) in self.series.enumerated() {
            let points = zip(x.ticks, series.values).compactMap { tick, value in
                value.map { (x: x.position(tick.value), y: y.position($0)) }
            }
            let xs = zip(self.xs, series.values).filter { $0.1 != nil }.map(\.0).joined(separator: ",")
            svg.polyline(
                points,
                stroke: series.stroke(index),
                dash: series.dash,
                attributes: [("id", "matrix-\(SVG.slug([series.label]))"), ("data-x", xs)]
            )
            for point in points { svg.circle(x: point.x, y: point.y, radius: 3, fill: series.stroke(index)) }
            legend.draw(index, into: &svg)
        }
        return svg.rendered(title: self.title)
    }

    /// The y axis's scale for `values`: logarithmic over whole decades when every value is
    /// above zero and they span ten times or more; else linear from 0 to a round top, a tick
    /// at each round step (1, 2, 5 × 10^k) of at most `divisions`. A zero has no logarithm: it
    /// is drawn at 0 on a linear axis, never at a made-up small value.
    public static func valueScale(_ values: [Double], divisions: Double) -> Axis.Scale {
        let high = values.max() ?? 1
        if let low = values.min(), low > 0, high >= 10 * low {
            // Drawn from the decade below the least value: a floor at the value itself drew the
            // decade's own tick (0.1 ms) where the value was (0.5 ms), a decade out of place.
            return .decades(from: low, to: high, floor: pow(10, log10(low).rounded(.down)))
        }
        return .zeroToRound(covering: high, divisions: divisions, resolution: 1e6)
    }

    /// Whether the x axis is to scale: the xs are distinct numbers in order.
    private var toScale: Bool {
        let numbers = self.xs.compactMap(Double.init)
        guard self.numeric, numbers.count == self.xs.count, let low = numbers.first, let high = numbers.last else {
            return false
        }
        return high > low
    }

    /// A dot chart: each name a band, each series' dot at its own place across the band.
    private func drawDots(x: Axis, y: Axis, legend: Legend, into svg: inout SVG) {
        let band = x.ticks.count > 1 ? abs(x.position(x.ticks[1].value) - x.position(x.ticks[0].value)) : 200
        let step = Swift.min(14, band * 0.6 / Double(Swift.max(self.series.count, 1)))
        for (index, series) in self.series.enumerated() {
            let offset = (Double(index) - Double(self.series.count - 1) / 2) * step
            for (tick, (name, value)) in zip(x.ticks, zip(self.xs, series.values)) {
                guard let value else { continue }
                svg.circle(
                    x: x.position(tick.value) + offset,
                    y: y.position(value),
                    radius: 5,
                    fill: series.stroke(index),
                    attributes: [("data-series", series.label), ("data-x", name)]
                )
            }
            legend.draw(index, into: &svg)
        }
    }

    /// The x axis, a tick per x: to scale (logarithmic when the numbers span ten times or
    /// more) when they are numbers in order, else a band per x; and whether it is logarithmic.
    private func xAxis(from left: Double, to right: Double, at bottom: Double) -> (Axis, Bool) {
        let numbers = self.xs.compactMap(Double.init)
        let logX = self.numeric && (numbers.min() ?? 0) > 0 && (numbers.max() ?? 0) >= 10 * (numbers.min() ?? 1)
        // A band per name, its tick in the middle: two names are not two points at the ends.
        var scale = Axis.Scale(.linear, from: -0.5, to: Double(self.xs.count) - 0.5, ticks: [])
        var positions = self.xs.indices.map(Double.init)
        if self.numeric, numbers.count == self.xs.count, let low = numbers.first, let high = numbers.last, high > low {
            positions = numbers
            scale =
                logX
                ? Axis.Scale(.logarithmic(base: 10), from: log10(low), to: log10(high), ticks: numbers)
                : Axis.Scale(.linear, from: low, to: high, ticks: numbers)
        }
        scale.ticks = positions
        let ticks = zip(positions, self.xs).map { Axis.Tick(value: $0, label: $1) }
        let axis = Axis(
            .horizontal,
            scale: scale,
            ticks: ticks,
            from: left,
            to: right,
            at: bottom,
            rule: .mark(colour: "#444")
        )
        return (axis, logX)
    }
}
