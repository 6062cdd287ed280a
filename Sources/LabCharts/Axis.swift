/// One axis of a chart: a scale from values to pixels along one side of the plot, the ticks
/// on it with their labels, and how each tick is drawn (a grid line across the plot, a short
/// mark outside it, or its label alone).
///
/// A horizontal axis runs from `start` (left) to `end` (right) at height `crossing`, its tick
/// labels below it; a vertical axis from `start` (bottom) up to `end` (top) at `crossing`
/// across, its labels left of it, right-aligned.
public struct Axis: Sendable {
    /// Which way an axis runs.
    public enum Orientation: Sendable {
        /// Left to right, along the bottom of a plot.
        case horizontal
        /// Bottom to top, along the left of a plot.
        case vertical
    }

    /// A marked value and its label.
    public struct Tick: Sendable, Equatable {
        /// The value, in the scale's units (before any logarithm).
        public var value: Double
        /// The text written at it.
        public var label: String

        /// A tick at `value` labelled `label`.
        public init(value: Double, label: String) {
            self.value = value
            self.label = label
        }
    }

    /// What is drawn at each tick besides its label.
    public enum Rule: Sendable {
        /// A line in `colour` across the plot for each span of the other direction (from the
        /// lower bound to the upper bound).
        case grid(colour: String, spans: [ClosedRange<Double>])
        /// A 4-pixel mark in `colour`, outside the plot.
        case mark(colour: String)
        /// Nothing: the label alone.
        case none
    }

    /// Which way the axis runs.
    public var orientation: Orientation
    /// How values map onto the axis.
    public var scale: Scale
    /// The ticks, in drawing order.
    public var ticks: [Tick]
    /// The pixel where the scale's low end falls: the left of a horizontal axis, the bottom of a vertical one.
    public var start: Double
    /// The pixel where the scale's high end falls.
    public var end: Double
    /// Where the axis lies across: the y of a horizontal axis, the x of a vertical one.
    public var crossing: Double
    /// What is drawn at each tick besides its label.
    public var rule: Rule
    /// The distance from the axis to its tick labels: to their baseline below a horizontal
    /// axis, to their right end left of a vertical one.
    public var labelGap: Double

    /// An axis with the ticks given; `labelGap` is 18 below a horizontal axis, 8 left of a vertical one, unless given.
    public init(
        _ orientation: Orientation,
        scale: Scale,
        ticks: [Tick],
        from start: Double,
        to end: Double,
        at crossing: Double,
        rule: Rule,
        labelGap: Double? = nil
    ) {
        self.orientation = orientation
        self.scale = scale
        self.ticks = ticks
        self.start = start
        self.end = end
        self.crossing = crossing
        self.rule = rule
        self.labelGap = labelGap ?? (orientation == .horizontal ? 18 : 8)
    }

    /// An axis with a tick at each of the scale's `ticks`, labelled by `label`.
    public init(
        _ orientation: Orientation,
        scale: Scale,
        from start: Double,
        to end: Double,
        at crossing: Double,
        rule: Rule,
        labelGap: Double? = nil,
        label: (Double) -> String
    ) {
        self.init(
            orientation,
            scale: scale,
            ticks: scale.ticks.map { Tick(value: $0, label: label($0)) },
            from: start,
            to: end,
            at: crossing,
            rule: rule,
            labelGap: labelGap
        )
    }

    /// The pixel along the axis where `value` falls; the middle when the scale has no extent.
    public func position(_ value: Double) -> Double {
        guard self.scale.high != self.scale.low else { return (self.start + self.end) / 2 }
        return self.start + self.scale.fraction(value) * (self.end - self.start)
    }

    /// Every tick: its rule, then its label.
    public func drawTicks(into svg: inout SVG) {
        for tick in self.ticks { self.drawTick(tick, into: &svg) }
    }

    /// One tick: its rule, then its label (for charts that interleave two axes' ticks).
    public func drawTick(_ tick: Tick, into svg: inout SVG) {
        let at = self.position(tick.value)
        let horizontal = self.orientation == .horizontal
        switch self.rule {
        case .grid(let colour, let spans):
            for span in spans {
                if horizontal {
                    svg.line(at, span.lowerBound, at, span.upperBound, stroke: colour)
                } else {
                    svg.line(span.lowerBound, at, span.upperBound, at, stroke: colour)
                }
            }
        case .mark(let colour):
            if horizontal {
                svg.line(at, self.crossing, at, self.crossing + 4, stroke: colour)
            } else {
                svg.line(self.crossing - 4, at, self.crossing, at, stroke: colour)
            }
        case .none:
            break
        }
        if horizontal {
            svg.text(tick.label, x: at, y: self.crossing + self.labelGap, anchor: .middle, size: 11)
        } else {
            svg.text(tick.label, x: self.crossing - self.labelGap, y: at + 4, anchor: .end, size: 11)
        }
    }

    /// The axis line from end to end, at `crossing`, or at `elsewhere` (another panel's edge).
    public func drawLine(into svg: inout SVG, colour: String = "#555", at elsewhere: Double? = nil) {
        let at = elsewhere ?? self.crossing
        switch self.orientation {
        case .horizontal: svg.line(self.start, at, self.end, at, stroke: colour)
        case .vertical: svg.line(at, self.end, at, self.start, stroke: colour)
        }
    }

    /// The axis title, centred along the axis `offset` pixels from it: below a horizontal
    /// axis, left of a vertical one (turned to read upwards).
    public func drawTitle(_ title: String, offset: Double, into svg: inout SVG) {
        let middle = (self.start + self.end) / 2
        switch self.orientation {
        case .horizontal:
            svg.text(title, x: middle, y: self.crossing + offset, anchor: .middle, size: 12)
        case .vertical:
            svg.text(title, x: self.crossing - offset, y: middle, anchor: .middle, size: 12, rotate: -90)
        }
    }
}
