import Foundation
import LabCharts
import LabReport

extension TwoHostRun {
    /// How far above its single-host figure plus the link's RTT a suite's figure may be at the
    /// first point, at least: 1 ms.
    static let unshapedFloor = 1e6

    /// The allowance for one suite: its single-host run's own spread (p95 − p50), at least
    /// `unshapedFloor`. A quiet machine allows a millisecond or two; one whose scheduler moved
    /// the baseline by a time slice allows that slice, measured in the same sweep.
    static func allowance(_ single: SweepPoint.Figures) -> Double {
        max(Self.unshapedFloor, single.p95 - single.p50)
    }

    /// `sweep.csv`, `sweep.md`, `sweep.svg` (each suite's exchange p50 and p95 against the
    /// loss) and `sweep-retransmissions.svg` (the share of answers the server sent again) of
    /// `points`, beside the single-host `baseline`.
    func writeSweep(_ points: [SweepPoint], baseline: [SweepPoint.Figures]) throws {
        let suites = points.flatMap { $0.groups.map(\.suite) }.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        var csv =
            "loss_percent,measured_a_to_b_percent,measured_b_to_a_percent,suite,exchanges,errors,p50_ms,p90_ms,p95_ms,p99_ms,"
            + "segments_per_request,segments_per_answer,requests_retransmitted_percent,answers_retransmitted_percent,"
            + "retransmitted_at_least_percent,retransmitted_at_most_percent,min_rtt_ms\n"
        var table = [
            "| loss | measured a→b | measured b→a | suite | exchanges | errors | p50 | p95 | p99 | segments: client | segments: server | client sent again | server sent again | met one at either end | min RTT |",
            "|--:|--:|--:|:--|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
        ]
        func share(_ packets: SweepPoint.Packets?) -> String {
            packets.map { String(format: "%.1f", $0.retransmittedShare * 100) } ?? ""
        }
        func segments(_ packets: SweepPoint.Packets?) -> String { packets.map { String(format: "%.2f", $0.segments) } ?? "" }
        for point in points {
            let measured = ["a→b", "b→a"].map { name in
                point.measured.first { $0.direction == name }.map { String(format: "%.1f", $0.loss * 100) } ?? ""
            }
            let rtt = point.rtt.map { String(format: "%.3f", $0 / 1e6) } ?? ""
            for group in point.groups {
                let times = [group.p50, group.p90, group.p95, group.p99].map { String(format: "%.3f", $0 / 1e6) }
                let packets = [segments(group.requests), segments(group.answers), share(group.requests), share(group.answers)]
                let bounds = group.retransmittedBounds.map {
                    [String(format: "%.1f", $0.lowerBound * 100), String(format: "%.1f", $0.upperBound * 100)]
                } ?? ["", ""]
                csv += ([String(format: "%g", point.loss * 100)] + measured + [group.suite, "\(group.count)", "\(group.errors)"]
                    + times + packets + bounds + [rtt]).joined(separator: ",") + "\n"
                let cells =
                    [point.label] + measured.map { $0.isEmpty ? "–" : "\($0)%" } + [group.suite, "\(group.count)", "\(group.errors)"]
                    + [times[0], times[2], times[3]].map { "\($0) ms" } + packets.prefix(2).map { $0.isEmpty ? "–" : $0 }
                    + packets.suffix(2).map { $0.isEmpty ? "–" : "\($0)%" }
                    + [bounds[0].isEmpty ? "–" : "\(bounds[0])–\(bounds[1])%", rtt.isEmpty ? "–" : "\(rtt) ms"]
                table.append("| " + cells.joined(separator: " | ") + " |")
            }
        }
        let xs = points.map { String(format: "%g", $0.loss * 100) }
        let chart = MatrixChart(
            title: "cx exchange and TLS handshake time against the link's loss (each end), p50 and p95",
            parameter: "packets lost at random on each end (%)",
            numeric: true,
            xs: xs,
            series: suites.flatMap { suite in
                [("p50", \SweepPoint.Figures.p50), ("p95", \SweepPoint.Figures.p95)].map { name, path in
                    MatrixChart.Series(
                        label: "\(suite) \(name) (\(Self.counts(suite, in: points)))",
                        values: points.map { point in point.groups.first { $0.suite == suite }.map { $0[keyPath: path] / 1e6 } }
                    )
                }
            },
            valueLabel: { String(format: "%g ms", $0) }
        )
        let retransmissions = MatrixChart(
            title: "Share of answers (cx) or handshakes (TLS) the server had to send a segment of again",
            parameter: "packets lost at random on each end (%)",
            numeric: true,
            xs: xs,
            series: suites.map { suite in
                MatrixChart.Series(
                    label: suite,
                    values: points.map { point in
                        point.groups.first { $0.suite == suite }?.answers.map { $0.retransmittedShare * 100 }
                    }
                )
            },
            valueLabel: { String(format: "%g%%", $0) }
        )
        let markdown = """
            # Loss sweep

            Each point a fresh two-host link losing that share of packets at random on each end \
            (so a round trip meets it twice), with \(self.settings.conditions) besides; \
            `Scenarios/two-host/sweep.json` (cx `x25519` and `pq`) and `sweep-tls.json` (one TLS \
            handshake per client, once per key-exchange group: rows `tls <group>`) across it; the \
            loss measured from the link's own packet counts (`link.json` in each point's folder \
            says how it was applied). Times are the clients' whole cx exchange, or TLS \
            `handshake`, in milliseconds. Segments are those carrying data that each end sent, \
            per exchange (a request and its answer) or per connection up to its first request \
            (the SYN and the TLS handshake), as the client (`report.packets`) and the server \
            (`lab serve --packets`) counted them; "sent again" is the share of exchanges, or of \
            handshakes, for which that end retransmitted at least one segment (`TCP_INFO`). The two \
            ends count apart, so the share of exchanges that met a retransmission at either end \
            is bounded: at least the larger of the two, at most their sum. (A lost one-segment \
            answer also makes the client send its request again: nothing else acknowledges it.) \
            Min RTT is the smallest round trip the point's connections saw.

            ![exchange p50 and p95 against loss](sweep.svg)

            ![server segments sent again against loss](sweep-retransmissions.svg)

            \(table.joined(separator: "\n"))

            \(Self.baselineSection(points.first, baseline: baseline).joined(separator: "\n"))

            """
        let out = self.settings.out
        try Data(csv.utf8).write(to: out.appendingPathComponent("sweep.csv"))
        try Data(markdown.utf8).write(to: out.appendingPathComponent("sweep.md"))
        try Data(chart.render().utf8).write(to: out.appendingPathComponent("sweep.svg"))
        try Data(retransmissions.render().utf8).write(to: out.appendingPathComponent("sweep-retransmissions.svg"))
        // The same, as one page to open (its charts inside).
        let page = MarkdownPage.html(
            markdown: markdown,
            title: "Loss sweep — crypto-lab",
            images: ["sweep.svg": chart.render(), "sweep-retransmissions.svg": retransmissions.render()]
        )
        try Data(page.utf8).write(to: out.appendingPathComponent(MarkdownPage.fileName))
    }

    /// How many exchanges or handshakes `suite` had at each point: `60 a point`, `59–60 a point`.
    static func counts(_ suite: String, in points: [SweepPoint]) -> String {
        let counts = points.compactMap { point in point.groups.first { $0.suite == suite }?.count }
        guard let low = counts.min(), let high = counts.max() else { return "none" }
        return (low == high ? "\(low)" : "\(low)–\(high)") + " a point"
    }

    /// The single-host baseline beside the sweep's first point: each suite's p95 there
    /// against its p95 alone on host B plus the link's RTT, within `unshapedAllowance`.
    static func baselineSection(_ first: SweepPoint?, baseline: [SweepPoint.Figures]) -> [String] {
        guard let first, !baseline.isEmpty else { return [] }
        let rtt = first.rtt ?? 0
        var lines = [
            "## Against one host",
            "",
            "`Scenarios/two-host/sweep-single-host.json` and `sweep-tls.json`: the same loads on host B"
                + " alone, over loopback (`single-host/`, `single-host-tls-<group>/`). At the first point (\(first.label) loss), each suite's p50 and p95 should be"
                + " within its single-host ones plus the link's RTT (\(String(format: "%.3f", rtt / 1e6)) ms) plus"
                + " an allowance: the single-host run's own p95 − p50, at least"
                + " \(String(format: "%g", Self.unshapedFloor / 1e6)) ms. With 60 exchanges a suite the p95"
                + " is the third-worst: on a loaded 2-core machine one scheduler slice (3–4 ms) moves it.",
            "",
            "| suite | single-host p50 | \(first.label) p50 | within | single-host p95 | \(first.label) p95 | within | allowance |",
            "|:--|--:|--:|:--|--:|--:|:--|--:|",
        ]
        for single in baseline {
            guard let point = first.groups.first(where: { $0.suite == single.suite }) else { continue }
            func within(_ value: Double, _ base: Double) -> String {
                value <= base + rtt + Self.allowance(single) ? "yes" : "no"
            }
            let cells = [
                single.suite, String(format: "%.3f ms", single.p50 / 1e6), String(format: "%.3f ms", point.p50 / 1e6),
                within(point.p50, single.p50), String(format: "%.3f ms", single.p95 / 1e6),
                String(format: "%.3f ms", point.p95 / 1e6), within(point.p95, single.p95),
                String(format: "%.3f ms", Self.allowance(single) / 1e6),
            ]
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        return lines
    }
}
