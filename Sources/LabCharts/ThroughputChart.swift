/// Operations per second per group, as horizontal bars, drawn as SVG.
public struct ThroughputChart: Sendable, Chart {
    /// One bar.
    public struct Bar: Sendable, Equatable {
        /// The label left of the bar.
        public var label: String
        /// Operations per second.
        public var value: Double
        /// Whether to draw it in the warning colour.
        public var insecure: Bool

        /// A bar of `value` operations per second.
        public init(label: String, value: Double, insecure: Bool) {
            self.label = label
            self.value = value
            self.insecure = insecure
        }
    }

    /// The chart's heading.
    public var title: String
    /// The line under the heading: how the bars were measured.
    public var subtitle: String?
    /// The bars, top to bottom.
    public var bars: [Bar]
    /// The canvas it is drawn on.
    public var frame = Frame()

    /// A chart of `bars` under `title` and `subtitle`.
    public init(title: String, subtitle: String? = nil, bars: [Bar]) {
        self.title = title
        self.subtitle = subtitle
        self.bars = bars
    }

    /// The document. On a wide canvas each bar's label is left of it; on a narrow one, above it.
    public func render() -> String {
        let frame = self.frame
        var svg = SVG(frame: frame)
        let top = svg.heading(self.title, subtitle: self.subtitle, frame: frame) + 16
        let longestLabel = self.bars.map { Frame.textWidth($0.label, size: 12) }.max() ?? 0
        let left = frame.isNarrow ? Frame.margin : Swift.min(Swift.max(longestLabel + 24, 120), frame.width / 2)
        // Room right of the longest bar for its figure (`12,345.6/s`).
        let right = frame.width - 90
        let barHeight = 22.0
        // A narrow canvas writes each label in the row above its bar.
        let labelRoom = frame.isNarrow ? 16.0 : 0
        let pitch = 32.0 + labelRoom
        let bottom = top + Double(Swift.max(self.bars.count, 1)) * pitch
        svg.height = bottom + 50

        let axis = Axis(
            .horizontal,
            scale: .zeroToRound(covering: self.bars.map(\.value).max() ?? 0, divisions: frame.divisions(5)),
            from: left,
            to: right,
            at: bottom,
            rule: .grid(colour: "#e3e3e3", spans: [(top - 6)...bottom])
        ) { Numbers.fixed($0, 0, grouped: true) }
        axis.drawTicks(into: &svg)
        svg.line(left, top - 6, left, bottom, stroke: "#555")
        axis.drawTitle("Operations per second", offset: 38, into: &svg)
        if self.bars.isEmpty {
            svg.text("No data", x: (left + right) / 2, y: top + pitch / 2, anchor: .middle, size: 14)
        }
        for (index, bar) in self.bars.enumerated() {
            let y = top + Double(index) * pitch + labelRoom + (pitch - labelRoom - barHeight) / 2
            let colour = bar.insecure ? "#e15759" : "#4e79a7"
            let end = axis.position(bar.value)
            svg.rect(x: left, y: y, width: Swift.max(end - left, 0), height: barHeight, fill: colour)
            if frame.isNarrow {
                svg.text(bar.label, x: left + 2, y: y - 5, size: 12)
            } else {
                svg.text(bar.label, x: left - 8, y: y + barHeight / 2 + 4, anchor: .end, size: 12)
            }
            svg.text(Numbers.fixed(bar.value, 1, grouped: true) + "/s", x: end + 6, y: y + barHeight / 2 + 4, size: 12)
        }
        return svg.rendered(title: self.title)
    }
}
