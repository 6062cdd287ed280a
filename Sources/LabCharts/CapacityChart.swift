/// Throughput and latency against offered load, drawn as SVG: above, each group's exchange
/// p50 (solid) and p99 (dashed) per stage on a logarithmic axis, with the bound (dotted) and
/// the knee (a vertical line, `id="knee-<group>"`, its rate in `data-rate`); below, each
/// group's throughput per stage against the diagonal of a server that serves every arrival.
public struct CapacityChart: Chart {
    /// One stage's figures for one group.
    public struct Point: Sendable, Equatable {
        /// What the stage offered: arrivals per second, or clients.
        public var offered: Double
        /// Exchanges per second that ended during the stage.
        public var throughput: Double
        /// The exchange's median, in nanoseconds; nil without an exchange.
        public var p50: Double?
        /// The exchange's 99th percentile, in nanoseconds; nil without an exchange.
        public var p99: Double?

        /// A stage's figures.
        public init(offered: Double, throughput: Double, p50: Double?, p99: Double?) {
            self.offered = offered
            self.throughput = throughput
            self.p50 = p50
            self.p99 = p99
        }
    }

    /// One group's lines.
    public struct Group: Sendable, Equatable {
        /// The legend's label.
        public var label: String
        /// The file-safe name the lines' ids are made of.
        public var slug: String
        /// One point per stage, in order.
        public var points: [Point]
        /// The p99 bound, in nanoseconds, if there is one.
        public var bound: Double?
        /// The offered load at the knee, if there is one.
        public var knee: Double?

        /// A group's lines.
        public init(label: String, slug: String, points: [Point], bound: Double?, knee: Double?) {
            self.label = label
            self.slug = slug
            self.points = points
            self.bound = bound
            self.knee = knee
        }
    }

    /// The chart's heading.
    public var title: String
    /// Whether the stages offer clients running back to back (a closed load), not arrivals per second.
    public var clients: Bool
    /// The groups, in legend order.
    public var groups: [Group]
    /// A latency in nanoseconds as the latency axis writes it (`250 µs`).
    public var latencyLabel: (Double) -> String
    /// The canvas it is drawn on.
    public var frame = Frame()

    /// A chart of `groups`' stages.
    public init(title: String, clients: Bool, groups: [Group], latencyLabel: @escaping (Double) -> String) {
        self.title = title
        self.clients = clients
        self.groups = groups
        self.latencyLabel = latencyLabel
    }

    /// The chart's three axes: latency above, throughput below, offered load along the bottom.
    private struct Axes {
        let latency: Axis
        let rate: Axis
        let offered: Axis
    }

    /// The document.
    public func render() -> String {
        let frame = self.frame
        var svg = SVG(frame: frame)
        let top = svg.heading(self.title, frame: frame)
        let left = frame.isNarrow ? 62.0 : 80.0
        let colours = Legend(coloured: self.groups.map(\.label), x: 0, y: 0)
        let right = frame.isNarrow ? frame.width - 24 : colours.plotRight(frame)
        let latencyTop = top + 28
        let latencyBottom = latencyTop + (frame.isNarrow ? 200 : 244)
        let (rateTop, rateBottom) = (latencyBottom + 50, latencyBottom + (frame.isNarrow ? 180 : 220))
        let legend = colours.placed(frame, plotRight: right, top: latencyTop, below: rateBottom + 62)
        svg.height = Swift.max(rateBottom + 56, legend.y + legend.height)
        let points = self.groups.flatMap(\.points)
        let highest = Swift.max(points.map(\.offered).max() ?? 1, points.map(\.throughput).max() ?? 1, 1)
        let rates = Axis.Scale.zeroToRound(covering: highest, divisions: frame.divisions(6))
        let rateLabel = { (value: Double) in Numbers.fixed(value, 0, grouped: true) }
        // Latency: decades spanning every p50 and p99, and the bound.
        let times = points.flatMap { [$0.p50, $0.p99].compactMap { $0 } } + self.groups.compactMap(\.bound)
        let axes = Axes(
            latency: Axis(
                .vertical,
                scale: .decades(from: times.min() ?? 1_000, to: times.max() ?? 1_000_000, floor: 1),
                from: latencyBottom,
                to: latencyTop,
                at: left,
                rule: .grid(colour: "#eee", spans: [left...right]),
                labelGap: 6,
                label: self.latencyLabel
            ),
            rate: Axis(
                .vertical,
                scale: rates,
                from: rateBottom,
                to: rateTop,
                at: left,
                rule: .none,
                labelGap: 6,
                label: rateLabel
            ),
            offered: Axis(
                .horizontal,
                scale: rates,
                from: left,
                to: right,
                at: rateBottom,
                rule: .mark(colour: "#444"),
                label: rateLabel
            )
        )
        self.drawAxes(&svg, axes)
        for index in self.groups.indices {
            self.drawGroup(index, &svg, axes)
            legend.draw(index, into: &svg)
        }
        return svg.rendered(title: self.title)
    }

    /// The frames, the ticks, the titles, and an open load's diagonal.
    private func drawAxes(_ svg: inout SVG, _ axes: Axes) {
        axes.offered.drawLine(into: &svg, colour: "#444", at: axes.latency.start)
        axes.latency.drawLine(into: &svg, colour: "#444")
        axes.offered.drawLine(into: &svg, colour: "#444")
        axes.rate.drawLine(into: &svg, colour: "#444")
        axes.latency.drawTicks(into: &svg)
        for (offered, rate) in zip(axes.offered.ticks, axes.rate.ticks) {
            axes.offered.drawTick(offered, into: &svg)
            axes.rate.drawTick(rate, into: &svg)
        }
        let title = self.clients ? "clients running back to back" : "offered arrivals per second"
        axes.offered.drawTitle(title, offset: 38, into: &svg)
        let left = axes.offered.start
        svg.text(
            self.frame.isNarrow ? "latency: p50 solid, p99 dashed, bound dotted"
                : "exchange latency: p50 solid, p99 dashed, the bound dotted",
            x: left,
            y: axes.latency.end - 10,
            size: 12
        )
        svg.text("throughput per second", x: left, y: axes.rate.end - 10, size: 12)
        // A server that serves every arrival (an open load's reference line).
        if !self.clients {
            let top = axes.rate.scale.high
            svg.line(
                axes.offered.position(0),
                axes.rate.position(0),
                axes.offered.position(top),
                axes.rate.position(top),
                stroke: "#bbb",
                dash: "4 4"
            )
        }
    }

    /// Group `index`'s lines: p50, p99, throughput, the bound and the knee.
    private func drawGroup(_ index: Int, _ svg: inout SVG, _ axes: Axes) {
        let group = self.groups[index]
        let colour = SVG.colour(index)
        let (px, pyTime, pyRate) = (axes.offered.position(_:), axes.latency.position(_:), axes.rate.position(_:))
        let p50 = group.points.compactMap { point in point.p50.map { (x: px(point.offered), y: pyTime($0)) } }
        let p99 = group.points.compactMap { point in point.p99.map { (x: px(point.offered), y: pyTime($0)) } }
        svg.polyline(p50, stroke: colour, attributes: [("id", "p50-\(group.slug)")])
        svg.polyline(p99, stroke: colour, dash: "6 4", attributes: [("id", "p99-\(group.slug)")])
        let served = group.points.map { (x: px($0.offered), y: pyRate($0.throughput)) }
        svg.polyline(served, stroke: colour, attributes: [("id", "throughput-\(group.slug)")])
        let (left, right, top) = (axes.offered.start, axes.offered.end, axes.latency.end)
        if let bound = group.bound {
            svg.line(left, pyTime(bound), right, pyTime(bound), stroke: colour, dash: "2 3")
        }
        if let knee = group.knee {
            svg.line(px(knee), top, px(knee), axes.offered.crossing, stroke: colour, width: 1.5, dash: "8 3")
            svg.circle(
                x: px(knee),
                y: top + 4,
                radius: 4,
                fill: colour,
                attributes: [("id", "knee-\(group.slug)"), ("data-rate", Numbers.fixed(knee, 1))]
            )
            let label = "knee \(Numbers.fixed(knee, 1, grouped: true))\(self.clients ? " clients" : "/s")"
            // Right of the line, or left of it where it would pass the plot's end.
            let fits = px(knee) + 6 + Frame.textWidth(label, size: 11) <= right
            svg.text(
                label,
                x: px(knee) + (fits ? 6 : -6),
                y: top + 8,
                anchor: fits ? .start : .end,
                size: 11,
                fill: colour
            )
        }
    }
}
