/// The run over time, drawn as SVG: above, each group's exchange p50 (solid) and p99
/// (dashed) per interval on a logarithmic axis; below, each group's exchanges per second.
///
/// Each point sits at the middle of its interval, so a stall from second 3 to 4 peaks at 3.5 s.
/// An interval without exchanges leaves a gap in the latency lines (there is no latency to
/// draw) and a zero in the rate. Every line carries `data-intervals`, the interval index of
/// each of its points in order, so that tools (and the tests) can read the chart back.
public struct TimelineChart: Chart {
    /// One group's figures in one interval.
    public struct Point: Sendable, Equatable {
        /// The interval's index; interval `i` spans `i × width` to `(i + 1) × width` seconds.
        public var index: Int
        /// Exchanges that started in it; none leaves a gap in the latency lines.
        public var count: UInt64
        /// Their median, in nanoseconds.
        public var p50: Double
        /// Their 99th percentile, in nanoseconds.
        public var p99: Double
        /// Exchanges per second of the interval.
        public var perSecond: Double

        /// A group's figures in interval `index`.
        public init(index: Int, count: UInt64, p50: Double, p99: Double, perSecond: Double) {
            self.index = index
            self.count = count
            self.p50 = p50
            self.p99 = p99
            self.perSecond = perSecond
        }
    }

    /// One group's line.
    public struct Series: Sendable, Equatable {
        /// The legend's label.
        public var label: String
        /// The file-safe name the lines' ids are made of.
        public var slug: String
        /// The exchange's figures per interval, every interval of the chart's range.
        public var points: [Point]

        /// A group's line.
        public init(label: String, slug: String, points: [Point]) {
            self.label = label
            self.slug = slug
            self.points = points
        }
    }

    /// The chart's heading.
    public var title: String
    /// The intervals' width, in seconds.
    public var width: Double
    /// The groups, in legend order.
    public var series: [Series]
    /// A latency in nanoseconds as the latency axis writes it (`250 µs`).
    public var latencyLabel: (Double) -> String
    /// A time in seconds as the time axis writes it (`1.5 s`).
    public var secondsLabel: (Double) -> String
    /// The canvas it is drawn on.
    public var frame = Frame()

    /// A chart of `series` over intervals `width` seconds wide.
    public init(
        title: String,
        width: Double,
        series: [Series],
        latencyLabel: @escaping (Double) -> String,
        secondsLabel: @escaping (Double) -> String
    ) {
        self.title = title
        self.width = width
        self.series = series
        self.latencyLabel = latencyLabel
        self.secondsLabel = secondsLabel
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

    /// The document.
    public func render() -> String {
        let frame = self.frame
        var svg = SVG(frame: frame)
        let top = svg.heading(
            self.title,
            subtitle: "Each point: the exchanges that started in its interval, drawn at its middle.",
            frame: frame
        )
        let left = frame.isNarrow ? 66.0 : 80.0
        let colours = Legend(coloured: self.series.map(\.label), x: 0, y: 0, lineWidth: 3)
        let right = frame.isNarrow ? frame.width - 24 : colours.plotRight(frame)
        let latency = Panel(
            title: "Exchange latency (log scale)",
            top: top + 26,
            bottom: top + (frame.isNarrow ? 226 : 270),
            left: left,
            right: right
        )
        let rate = Panel(
            title: "Exchanges per second",
            top: latency.bottom + 50,
            bottom: latency.bottom + (frame.isNarrow ? 170 : 200),
            left: left,
            right: right
        )
        let legend = colours.placed(frame, plotRight: right, top: latency.top + 8, below: rate.bottom + 62)
        let styles = Legend(
            [Legend.Entry(colour: "#555", label: "p50"), Legend.Entry(colour: "#555", dash: "6 3", label: "p99")],
            x: legend.x,
            y: legend.y + legend.height + 8,
            lineWidth: 2
        )
        svg.height = Swift.max(rate.bottom + 52, styles.y + styles.height)
        let all = self.series.flatMap(\.points)
        guard let first = all.map(\.index).min(), let last = all.map(\.index).max() else {
            svg.text("No data", x: (left + right) / 2, y: (latency.top + rate.bottom) / 2, anchor: .middle, size: 14)
            svg.height = rate.bottom + 52
            return svg.rendered(title: self.title)
        }
        // The time axis, shared by both panels.
        let time = Axis(
            .horizontal,
            scale: .stepped(
                from: Double(first) * self.width,
                to: Double(last + 1) * self.width,
                divisions: frame.divisions(8),
                resolution: 1e3
            ),
            from: left,
            to: right,
            at: rate.bottom,
            rule: .grid(colour: "#e3e3e3", spans: [latency.top...latency.bottom, rate.top...rate.bottom]),
            label: self.secondsLabel
        )
        time.drawTicks(into: &svg)
        time.drawTitle("Seconds from the start of the measured run", offset: 38, into: &svg)
        let px = { (index: Int) in time.position((Double(index) + 0.5) * self.width) }
        self.drawLatency(&svg, in: latency, px: px)
        self.drawRate(&svg, in: rate, px: px)

        // The legend: a colour per group, then the line styles.
        legend.draw(into: &svg)
        styles.draw(into: &svg)
        return svg.rendered(title: self.title)
    }

    /// The latency panel: p50 and p99 per group, logarithmic.
    private func drawLatency(_ svg: inout SVG, in panel: Panel, px: (Int) -> Double) {
        let values = self.series.flatMap(\.points).filter { $0.count > 0 }.flatMap { [$0.p50, $0.p99] }
        panel.frame(&svg)
        guard let lowest = values.min(), let highest = values.max() else { return }
        let axis = Axis(
            .vertical,
            scale: .roundLogarithmic(from: lowest, to: highest, maximumTicks: 8),
            from: panel.bottom,
            to: panel.top,
            at: panel.left,
            rule: .grid(colour: "#e3e3e3", spans: [panel.left...panel.right]),
            label: self.latencyLabel
        )
        axis.drawTicks(into: &svg)
        for (index, series) in self.series.enumerated() {
            for (name, value, dash) in [("p50", \Point.p50, nil), ("p99", \Point.p99, "6 3")] {
                for (part, run) in Self.runs(series.points).enumerated() {
                    let attributes = [
                        ("id", "\(name)-\(series.slug)-\(part)"),
                        ("data-intervals", run.map { String($0.index) }.joined(separator: " ")),
                    ]
                    // A line through one point draws nothing: a dot instead.
                    if run.count == 1, let point = run.first {
                        svg.circle(
                            x: px(point.index),
                            y: axis.position(point[keyPath: value]),
                            radius: dash == nil ? 3 : 2,
                            fill: SVG.colour(index),
                            attributes: attributes
                        )
                        continue
                    }
                    svg.polyline(
                        run.map { (px($0.index), axis.position($0[keyPath: value])) },
                        stroke: SVG.colour(index),
                        dash: dash,
                        attributes: attributes
                    )
                }
            }
        }
    }

    /// The runs of consecutive points with exchanges: a gap where an interval had none.
    private static func runs(_ points: [Point]) -> [[Point]] {
        var runs: [[Point]] = [[]]
        for point in points {
            if point.count > 0 {
                runs[runs.count - 1].append(point)
            } else if !runs[runs.count - 1].isEmpty {
                runs.append([])
            }
        }
        return runs.filter { !$0.isEmpty }
    }

    /// The rate panel: exchanges per second per group, linear from 0.
    private func drawRate(_ svg: inout SVG, in panel: Panel, px: (Int) -> Double) {
        panel.frame(&svg)
        let axis = Axis(
            .vertical,
            scale: .zeroToRound(covering: self.series.flatMap(\.points).map(\.perSecond).max() ?? 0, divisions: 4),
            from: panel.bottom,
            to: panel.top,
            at: panel.left,
            rule: .grid(colour: "#e3e3e3", spans: [panel.left...panel.right])
        ) { Numbers.fixed($0, 0, grouped: true) }
        axis.drawTicks(into: &svg)
        for (index, series) in self.series.enumerated() where !series.points.isEmpty {
            svg.polyline(
                series.points.map { (px($0.index), axis.position($0.perSecond)) },
                stroke: SVG.colour(index),
                attributes: [
                    ("id", "rate-\(series.slug)"),
                    ("data-intervals", series.points.map { String($0.index) }.joined(separator: " ")),
                ]
            )
        }
    }
}
