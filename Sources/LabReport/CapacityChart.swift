import Foundation
import LabCharts
import LabCore
import LabResults

/// Throughput and latency against offered load, drawn as SVG: above, each group's exchange
/// p50 (solid) and p99 (dashed) per stage on a logarithmic axis, with the bound (dotted) and
/// the knee (a vertical line, `id="knee-<group>"`, its rate in `data-rate`); below, each
/// group's throughput per stage against the diagonal of a server that serves every arrival.
struct CapacityChart {
    var title: String
    var capacities: [Capacity]
    var labels: (GroupKey) -> String

    func render() -> String {
        let legend = Swift.max(Double(self.capacities.map { self.labels($0.key).count }.max() ?? 0) * 7 + 70, 120)
        let (left, right) = (80.0, 720.0)
        let (latencyTop, latencyBottom, rateTop, rateBottom) = (56.0, 300.0, 350.0, 520.0)
        var svg = SVG(width: right + legend, height: rateBottom + 56)
        svg.text(self.title, x: left, y: 28, size: 15, bold: true)
        let points = self.capacities.flatMap(\.points)
        let highest = Swift.max(points.map(\.offered).max() ?? 1, points.map(\.throughput).max() ?? 1, 1)
        let step = NiceNumbers.ceiling(highest / 6)
        let maxRate = (highest / step).rounded(.up) * step
        func px(_ rate: Double) -> Double { left + rate / maxRate * (right - left) }
        // Latency axis: decades spanning every p50 and p99, and the bound.
        let times = points.flatMap { [$0.p50, $0.p99].compactMap { $0 } } + self.capacities.compactMap(\.bound)
        let logLow = floor(log10(Swift.max(times.min() ?? 1_000, 1)))
        let logHigh = Swift.max(ceil(log10(Swift.max(times.max() ?? 1_000_000, 1))), logLow + 1)
        func pyTime(_ nanoseconds: Double) -> Double {
            latencyBottom - (log10(Swift.max(nanoseconds, 1)) - logLow) / (logHigh - logLow)
                * (latencyBottom - latencyTop)
        }
        func pyRate(_ rate: Double) -> Double { rateBottom - rate / maxRate * (rateBottom - rateTop) }
        for (top, bottom) in [(latencyTop, latencyBottom), (rateTop, rateBottom)] {
            svg.line(left, bottom, right, bottom, stroke: "#444")
            svg.line(left, top, left, bottom, stroke: "#444")
        }
        for decade in Int(logLow)...Int(logHigh) {
            let y = pyTime(pow(10, Double(decade)))
            svg.line(left, y, right, y, stroke: "#eee")
            svg.text(
                TimeSpan.format(nanoseconds: pow(10, Double(decade))),
                x: left - 6,
                y: y + 4,
                anchor: .end,
                size: 11
            )
        }
        for tick in stride(from: 0, through: maxRate, by: step) {
            svg.line(px(tick), rateBottom, px(tick), rateBottom + 4, stroke: "#444")
            svg.text(Numbers.fixed(tick, 0, grouped: true), x: px(tick), y: rateBottom + 18, anchor: .middle, size: 11)
            svg.text(Numbers.fixed(tick, 0, grouped: true), x: left - 6, y: pyRate(tick) + 4, anchor: .end, size: 11)
        }
        let clients = self.capacities.first?.offered == .clients
        let axis = clients ? "clients running back to back" : "offered arrivals per second"
        svg.text(axis, x: (left + right) / 2, y: rateBottom + 38, anchor: .middle, size: 12)
        svg.text("exchange latency: p50 solid, p99 dashed, the bound dotted", x: left, y: latencyTop - 10, size: 12)
        svg.text("throughput per second", x: left, y: rateTop - 10, size: 12)
        // A server that serves every arrival (an open load's reference line).
        if !clients { svg.line(px(0), pyRate(0), px(maxRate), pyRate(maxRate), stroke: "#bbb", dash: "4 4") }
        for (index, capacity) in self.capacities.enumerated() {
            let colour = SVG.palette[index % SVG.palette.count]
            let name = SVG.slug([capacity.key.flow, capacity.key.suite, capacity.key.provider, capacity.key.transport])
            let p50 = capacity.points.compactMap { point in point.p50.map { (x: px(point.offered), y: pyTime($0)) } }
            let p99 = capacity.points.compactMap { point in point.p99.map { (x: px(point.offered), y: pyTime($0)) } }
            svg.polyline(p50, stroke: colour, attributes: [("id", "p50-\(name)")])
            svg.polyline(p99, stroke: colour, dash: "6 4", attributes: [("id", "p99-\(name)")])
            let served = capacity.points.map { (x: px($0.offered), y: pyRate($0.throughput)) }
            svg.polyline(served, stroke: colour, attributes: [("id", "throughput-\(name)")])
            if let bound = capacity.bound {
                svg.line(left, pyTime(bound), right, pyTime(bound), stroke: colour, dash: "2 3")
            }
            if let knee = capacity.knee {
                svg.line(px(knee.rate), latencyTop, px(knee.rate), rateBottom, stroke: colour, width: 1.5, dash: "8 3")
                svg.circle(
                    x: px(knee.rate),
                    y: latencyTop + 4,
                    radius: 4,
                    fill: colour,
                    attributes: [("id", "knee-\(name)"), ("data-rate", Numbers.fixed(knee.rate, 1))]
                )
                let label = "knee \(Numbers.fixed(knee.rate, 1, grouped: true))\(clients ? " clients" : "/s")"
                svg.text(label, x: px(knee.rate) + 6, y: latencyTop + 8, size: 11, fill: colour)
            }
            let y = latencyTop + 20 * Double(index)
            svg.line(right + 16, y, right + 40, y, stroke: colour, width: 2)
            svg.text(self.labels(capacity.key), x: right + 46, y: y + 4, size: 12)
        }
        return svg.rendered(title: self.title)
    }
}
