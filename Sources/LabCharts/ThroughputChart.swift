/// Operations per second per group, as horizontal bars, drawn as SVG.
public struct ThroughputChart: Sendable {
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
    /// The bars, top to bottom.
    public var bars: [Bar]

    /// A chart of `bars` under `title`.
    public init(title: String, bars: [Bar]) {
        self.title = title
        self.bars = bars
    }

    /// The document.
    public func render() -> String {
        let longestLabel = self.bars.map(\.label.count).max() ?? 0
        let left = Swift.min(Swift.max(Double(longestLabel) * 7 + 24, 120), 440)
        let width = left + 540
        let right = width - 110
        let top = 50.0
        let barHeight = 22.0
        let pitch = 32.0
        let bottom = top + Double(Swift.max(self.bars.count, 1)) * pitch
        let height = bottom + 50
        var svg = SVG(width: width, height: height)
        svg.text(self.title, x: 16, y: 28, size: 15, bold: true)

        let axis = Axis(
            .horizontal,
            scale: .zeroToRound(covering: self.bars.map(\.value).max() ?? 0, divisions: 5),
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
            let y = top + Double(index) * pitch + (pitch - barHeight) / 2
            let colour = bar.insecure ? "#e15759" : "#4e79a7"
            let end = axis.position(bar.value)
            svg.rect(x: left, y: y, width: Swift.max(end - left, 0), height: barHeight, fill: colour)
            svg.text(bar.label, x: left - 8, y: y + barHeight / 2 + 4, anchor: .end, size: 12)
            svg.text(Numbers.fixed(bar.value, 1, grouped: true) + "/s", x: end + 6, y: y + barHeight / 2 + 4, size: 12)
        }
        return svg.rendered(title: self.title)
    }
}
