import Foundation
import LabCharts
import LabCore
import LabReport
import LabResults
import LabTestSupport
import Testing

/// What the charts choose to draw and how: which steps a group's first latency chart holds,
/// an axis that meets a zero, the sweep's paired lines and its verdict, titles that fit.
@Suite(.tier(.unit)) struct ChartLayoutTests {
    /// The legend's labels of an SVG chart: the texts right after a 24-pixel legend line.
    static func legendLabels(_ svg: String) -> [String] {
        let lines = svg.components(separatedBy: "\n")
        return lines.indices.dropLast().compactMap { index in
            guard lines[index].hasPrefix("<line"), lines[index].contains("stroke-width=\"3.0\""),
                let text = lines[index + 1].firstMatch(of: /^<text [^>]*>([^<]*)<\/text>$/)
            else { return nil }
            return String(text.output.1)
        }
    }

    @Test("A group of seven steps: the exchange and its three costliest steps first, the other three folded apart")
    func costliestFirst() throws {
        let result = Fixture.result()
        let files = MarkdownReporter(options: ReportOptions(charts: true)).render(result)
        let lead = try #require(files.first { $0.name == "latency-cx-x25519-swift-crypto.svg" })
        let rest = try #require(files.first { $0.name == "latency-cx-x25519-swift-crypto-other-steps.svg" })
        // verify 71 µs, wrap 48 µs, unwrap 43 µs a time; keygen.client 21 µs, encrypt and decrypt 3 µs.
        #expect(Set(Self.legendLabels(lead.text)) == ["exchange", "verify", "wrap", "unwrap"], "\(lead.text)")
        #expect(Set(Self.legendLabels(rest.text)) == ["keygen.client", "encrypt", "decrypt"], "\(rest.text)")
        // A step keeps its colour in both charts: no colour twice across them.
        let colours = (lead.text + rest.text).matches(of: /<polyline [^>]*stroke="(#[0-9a-f]+)"/).map { String($0.output.1) }
        #expect(colours.count == 7 && Set(colours).count == 7, "\(colours)")
        // Four steps stay on one chart.
        #expect(files.contains { $0.name == "latency-cx-classic-openssl.svg" })
        #expect(!files.contains { $0.name.hasPrefix("latency-cx-classic-openssl-other") })
        // report.md folds the other steps under the first chart; report.html too.
        let markdown = try #require(files.first { $0.name == MarkdownReporter.fileName }).text
        #expect(markdown.contains("<summary>Its other 3 steps</summary>"))
        #expect(markdown.contains("](latency-cx-x25519-swift-crypto-other-steps.svg)"))
        let html = HTMLReporter(options: ReportOptions(charts: true)).render(result)
        #expect(html.components(separatedBy: "<details class=\"more-steps\">").count == 2, "one group has a fold")
    }

    @Test("An axis over values with zeros is linear from 0 with round steps; only values above zero go logarithmic")
    func zeroSafeAxis() {
        let withZero = MatrixChart.valueScale([0, 0.4, 12.5, 38], divisions: 5)
        #expect(withZero.kind == .linear && withZero.low == 0)
        #expect(withZero.ticks == [0, 10, 20, 30, 40], "\(withZero.ticks)")
        let small = MatrixChart.valueScale([0, 0.03, 0.12], divisions: 5)
        #expect(small.ticks.map { ($0 * 1000).rounded() } == [0, 50, 100, 150], "\(small.ticks)")
        let positive = MatrixChart.valueScale([1.2, 48], divisions: 5)
        #expect(positive.kind == .logarithmic(base: 10) && positive.ticks == [1, 10, 100])
        // Every tick a decade apart, the least value's decade included (a sweep's p50 of
        // 0.525 ms once drew the 0.1 ms tick where 0.525 ms was).
        let latencies = MatrixChart.valueScale([525_311, 3_578_000, 456_650_000], divisions: 5)
        let places = latencies.ticks.map(latencies.fraction)
        let steps = zip(places, places.dropFirst()).map { $1 - $0 }
        #expect(latencies.ticks.first == 100_000 && steps.allSatisfy { abs($0 - steps[0]) < 1e-9 }, "\(latencies.ticks) at \(places)")
        // Drawn: no tick at a made-up tiny value.
        let chart = MatrixChart(
            title: "Share sent again",
            parameter: "loss (%)",
            numeric: true,
            xs: ["0", "1", "5"],
            series: [MatrixChart.Series(label: "x25519", values: [0, 2.5, 38])],
            valueLabel: { String(format: "%g%%", $0) }
        )
        let svg = chart.render()
        #expect(svg.firstMatch(of: /[0-9]e-[0-9]/) == nil && svg.contains(">0%</text>") && svg.contains(">40%</text>"), "\(svg)")
    }

    @Test("A sweep's suites: p50 and p95 in one colour each, p95 dashed, each suite its own colour")
    func pairedColours() {
        let series = SweepReport.pairedSeries(
            ["x25519", "pq", "tls X25519"],
            label: { suite, p95 in "\(suite) \(p95 ? "p95" : "p50")" },
            values: { _, p95 in [p95 ? 2 : 1] }
        )
        #expect(series.map(\.label) == ["x25519 p50", "x25519 p95", "pq p50", "pq p95", "tls X25519 p50", "tls X25519 p95"])
        for pair in stride(from: 0, to: series.count, by: 2) {
            #expect(series[pair].colour == series[pair + 1].colour && series[pair].colour != nil)
            #expect(series[pair].dash == nil && series[pair + 1].dash != nil)
        }
        #expect(Set(series.compactMap(\.colour)).count == 3)
    }

    @Test("The sweep's verdict says how far each suite's p50 moved across the losses, and the most sent again")
    func sweepVerdict() {
        let rows = [
            SweepReport.Row(suite: "x25519", loss: 0, p50: 1_000_000, resent: 0),
            SweepReport.Row(suite: "pq", loss: 0, p50: 2_000_000, resent: 0),
            SweepReport.Row(suite: "x25519", loss: 0.05, p50: 3_200_000, resent: 0.25),
            SweepReport.Row(suite: "pq", loss: 0.05, p50: 5_000_000, resent: 0.375),
        ]
        #expect(
            SweepReport.verdict(rows)
                == "Verdict: from 0% to 5% loss on each end, the p50 went ×3.2 for x25519 (1 ms → 3.2 ms)"
                + " and ×2.5 for pq (2 ms → 5 ms); the server sent a segment again for up to 37.5% of answers"
                + " (pq at 5% loss).",
            "\(SweepReport.verdict(rows))"
        )
        let one = SweepReport.verdict(Array(rows.prefix(2)), condition: "at an RTT of 20 ms")
        #expect(
            one == "Verdict (at an RTT of 20 ms): one loss swept (0% on each end), no trend to read; the p50 was"
                + " 1 ms for x25519 and 2 ms for pq; the server sent no segment again.",
            "\(one)"
        )
    }

    @Test("Titles are broken into lines that fit the canvas, never cut: every word kept, in order")
    func titlesWrap() {
        let title = "Latency by percentile, other steps: cx · x25519 · swift-crypto · in-process (insecure)"
        let lines = Frame.wrap(title, width: Frame.phone.textWidth, size: 15, bold: true)
        #expect(lines.count > 1 && lines.joined(separator: " ") == title, "\(lines)")
        for line in lines { #expect(Frame.textWidth(line, size: 15, bold: true) <= Frame.phone.textWidth, "\(line)") }
        var svg = SVG(frame: .phone)
        let below = svg.heading(title, subtitle: "A subtitle", frame: .phone)
        let rendered = svg.rendered(title: title)
        #expect(rendered.components(separatedBy: "class=\"title\"").count - 1 == lines.count + 1)
        #expect(below > Double(lines.count) * 19)
    }
}
