import Foundation

/// Each step's p50 ratio, candidate ÷ baseline, as horizontal bars on a log scale around 1,
/// drawn as SVG: each step's noise floor shaded around the run's common factor, each bar
/// coloured by its verdict.
public struct ComparisonChart: Chart {
    /// How a step moved.
    public enum Change: Sendable {
        /// Significantly slower, beyond its floor: red.
        case slower
        /// Significantly faster, beyond its floor: green.
        case faster
        /// No significant change: grey.
        case unchanged
    }

    /// One step's bar.
    public struct Row: Sendable, Equatable {
        /// The label left of the bar.
        public var label: String
        /// The p50 ratio, candidate ÷ baseline.
        public var ratio: Double
        /// The step's noise floor: the share either way within which a move is noise (0.1).
        public var floor: Double
        /// How it moved.
        public var change: Change

        /// A step's bar.
        public init(label: String, ratio: Double, floor: Double, change: Change) {
            self.label = label
            self.ratio = ratio
            self.floor = floor
            self.change = change
        }
    }

    /// The chart's heading.
    public var title: String
    /// The line under it: how to read the chart.
    public var note: String
    /// The bars, top to bottom.
    public var rows: [Row]
    /// The run's common factor, when the steps moved together (a dashed line); the floors are shaded around it, or around 1.
    public var factor: Double?
    /// The floor to size the scale by when there is no row.
    public var threshold: Double
    /// A ratio as the axis writes it, after `×`.
    public var ratioLabel: (Double) -> String
    /// The canvas it is drawn on.
    public var frame = Frame()

    /// A chart of `rows` under `title` and `note`.
    public init(
        title: String,
        note: String,
        rows: [Row],
        factor: Double?,
        threshold: Double,
        ratioLabel: @escaping (Double) -> String
    ) {
        self.title = title
        self.note = note
        self.rows = rows
        self.factor = factor
        self.threshold = threshold
        self.ratioLabel = ratioLabel
    }

    /// The height of a bar.
    static let barHeight = 14.0

    /// Where the rows go: the first one's top, and the height of each (a narrow canvas writes
    /// each row's label above its bar).
    private struct Rows {
        let top: Double
        let pitch: Double
        let labelRoom: Double

        /// The top of row `position`.
        func top(_ position: Int) -> Double { self.top + Double(position) * self.pitch }
    }

    /// The document.
    public func render() -> String {
        let centre = self.factor ?? 1
        let widest = self.rows.map(\.floor).max() ?? self.threshold
        let extreme = Swift.max(
            (self.rows.map(\.ratio) + [centre]).map { abs(log2($0)) }.max() ?? 0,
            abs(log2(centre)) + log2(1 + widest) * 1.5,
            0.1
        )
        let span = Swift.min(extreme * 1.1, 10)
        let frame = self.frame
        var svg = SVG(frame: frame)
        let labelRoom = frame.isNarrow ? 16.0 : 0
        let rows = Rows(
            top: svg.heading(self.title, subtitle: self.note, frame: frame) + 12,
            pitch: 22 + labelRoom,
            labelRoom: labelRoom
        )
        let longest = self.rows.map { Frame.textWidth($0.label, size: 11) }.max() ?? 0
        let left = frame.isNarrow ? Frame.margin : Swift.min(Swift.max(longest + 24, 140), frame.width / 2)
        let bottom = rows.top(Swift.max(self.rows.count, 1))
        svg.height = bottom + 70
        var ticks = Self.ticks(span: span)
        // A narrow axis has room for five marks: 1 and the farthest ones.
        if frame.isNarrow && ticks.count > 5 { ticks = ticks.filter { $0 == 1 || abs(log2($0)) >= span / 2 } }
        let axis = Axis(
            .horizontal,
            scale: Axis.Scale(.logarithmic(base: 2), from: -span, to: span, ticks: ticks, clamped: true),
            from: left,
            to: frame.width - 90,
            at: bottom,
            rule: .grid(colour: "#e0e0e0", spans: [(rows.top - 6)...bottom])
        ) { "×" + self.ratioLabel($0) }
        for (position, row) in self.rows.enumerated() {
            let (low, high) = (axis.position(centre / (1 + row.floor)), axis.position(centre * (1 + row.floor)))
            svg.rect(x: low, y: rows.top(position), width: high - low, height: rows.pitch, fill: "#eeeeee")
        }
        self.drawAxis(&svg, axis, top: rows.top)
        if self.rows.isEmpty {
            svg.text(
                "No step in common",
                x: (axis.start + axis.end) / 2,
                y: rows.top + rows.pitch / 2,
                anchor: .middle,
                size: 14
            )
        }
        for (position, row) in self.rows.enumerated() { Self.drawBar(&svg, axis, rows, position: position, row: row) }
        return svg.rendered(title: self.title)
    }

    /// Ratios to mark on a log axis reaching 2^±span.
    public static func ticks(span: Double) -> [Double] {
        let candidates: [Double] = [1.0 / 64, 1.0 / 16, 1.0 / 4, 0.5, 0.8, 0.9, 1, 1.1, 1.25, 2, 4, 16, 64, 256]
        let inside = candidates.filter { abs(log2($0)) <= span }
        // Keep the axis readable: at most nine marks.
        return inside.count > 9
            ? inside.filter { [1.0 / 64, 1.0 / 16, 0.25, 0.5, 1, 2, 4, 16, 64].contains($0) } : inside
    }

    /// Ticks, the line at ×1, the common factor's dashed line if there is one, the axis title.
    private func drawAxis(_ svg: inout SVG, _ axis: Axis, top: Double) {
        let bottom = axis.crossing
        axis.drawTicks(into: &svg)
        svg.line(axis.position(1), top - 8, axis.position(1), bottom + 4, stroke: "#555")
        if let factor = self.factor {
            svg.line(
                axis.position(factor),
                top - 8,
                axis.position(factor),
                bottom + 4,
                stroke: "#555",
                dash: "4 3"
            )
        }
        axis.drawTitle("p50, candidate ÷ baseline (log scale)", offset: 40, into: &svg)
    }

    /// Row `position`'s bar from 1 to its ratio, its label on the left and its ratio on the right.
    private static func drawBar(_ svg: inout SVG, _ axis: Axis, _ rows: Rows, position: Int, row: Row) {
        let colour =
            switch row.change {
            case .slower: "#e15759"
            case .faster: "#59a14f"
            case .unchanged: "#9d9d9d"
            }
        let (one, end) = (axis.position(1), axis.position(row.ratio))
        let y = rows.top(position) + rows.labelRoom + (rows.pitch - rows.labelRoom - Self.barHeight) / 2
        svg.rect(
            x: Swift.min(one, end),
            y: y,
            width: Swift.max(abs(end - one), 1),
            height: Self.barHeight,
            fill: colour
        )
        if rows.labelRoom > 0 {
            svg.text(row.label, x: axis.start, y: y - 4, size: 11)
        } else {
            svg.text(row.label, x: axis.start - 8, y: y + Self.barHeight - 3, anchor: .end, size: 11)
        }
        svg.text("×" + Numbers.fixed(row.ratio, 3), x: axis.end + 10, y: y + Self.barHeight - 3, size: 11)
    }
}
