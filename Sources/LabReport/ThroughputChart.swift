import LabCharts

/// Operations per second per group, as horizontal bars, drawn as SVG.
struct ThroughputChart {
    /// One bar.
    struct Bar {
        /// The label left of the bar.
        var label: String
        /// Operations per second.
        var value: Double
        /// Whether to draw it in the warning colour.
        var insecure: Bool
    }

    /// The chart's heading.
    var title: String
    /// The bars, top to bottom.
    var bars: [Bar]

    /// The document.
    func render() -> String {
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

        let highest = self.bars.map(\.value).max() ?? 0
        let tickStep = NiceNumbers.ceiling(Swift.max(highest, 1) / 5)
        let axisMax = (Swift.max(highest, 1) / tickStep).rounded(.up) * tickStep
        func px(_ value: Double) -> Double { left + value / axisMax * (right - left) }

        var tick = 0.0
        while tick <= axisMax * (1 + 1e-9) {
            svg.line(px(tick), top - 6, px(tick), bottom, stroke: "#e3e3e3")
            svg.text(Numbers.fixed(tick, 0, grouped: true), x: px(tick), y: bottom + 18, anchor: .middle, size: 11)
            tick += tickStep
        }
        svg.line(left, top - 6, left, bottom, stroke: "#555")
        svg.text("Operations per second", x: (left + right) / 2, y: bottom + 38, anchor: .middle, size: 12)
        if self.bars.isEmpty {
            svg.text("No data", x: (left + right) / 2, y: top + pitch / 2, anchor: .middle, size: 14)
        }
        for (index, bar) in self.bars.enumerated() {
            let y = top + Double(index) * pitch + (pitch - barHeight) / 2
            let colour = bar.insecure ? "#e15759" : "#4e79a7"
            svg.rect(x: left, y: y, width: Swift.max(px(bar.value) - left, 0), height: barHeight, fill: colour)
            svg.text(bar.label, x: left - 8, y: y + barHeight / 2 + 4, anchor: .end, size: 12)
            svg.text(
                Numbers.fixed(bar.value, 1, grouped: true) + "/s",
                x: px(bar.value) + 6,
                y: y + barHeight / 2 + 4,
                size: 12
            )
        }
        return svg.rendered(title: self.title)
    }
}
