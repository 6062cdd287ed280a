import Foundation
import LabCharts
import LabReport

extension TwoHostRun {
    /// How far above its single-host p50 plus the link's RTT a suite's p50 may be at a point
    /// that loses nothing: 2 ms, or the single-host run's own p95 − p50 where that is more
    /// (the machine's queueing, measured in the same sweep: beside a busy loop on one of two
    /// cores, 4 clients' cx exchanges waited 2.5–2.7 ms more across the link, 2026-11-28).
    /// The p95 may be `p95Allowance` above its own, or that spread plus 4 ms.
    static let p50Allowance = 2e6
    /// How far above its single-host p95 plus the link's RTT a suite's p95 may be at a point
    /// that loses nothing, at least: 6 ms (2 ms, and 4 ms for a scheduler slice or two).
    static let p95Allowance = 6e6

    /// The allowances for `single`'s suite: (p50, p95).
    static func allowances(_ single: SweepPoint.Figures) -> (p50: Double, p95: Double) {
        let spread = max(0, single.p95 - single.p50)
        return (max(Self.p50Allowance, spread), max(Self.p95Allowance, spread + 4e6))
    }

    /// `sweep.csv`, `sweep.md`, `sweep.svg` (each suite's exchange p50 and p95 against the
    /// loss) and `sweep-retransmissions.svg` (the share of answers the server sent again) of
    /// `points`, beside the single-host `baseline`.
    func writeSweep(_ points: [SweepPoint], baseline: [SweepPoint.Figures]) throws {
        let suites = points.flatMap { $0.groups.map(\.suite) }.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        var csv =
            "loss_percent,measured_a_to_b_percent,measured_b_to_a_percent,suite,exchanges,errors,p50_ms,p90_ms,p95_ms,p99_ms,"
            + "segments_per_request,segments_per_answer,requests_retransmitted_percent,answers_retransmitted_percent,"
            + "retransmitted_at_least_percent,retransmitted_at_most_percent,min_rtt_ms,delay_each_end_ms,rtt_asked_ms\n"
        let swept = points.contains { $0.delay != nil }
        // The table's times in one unit, named in its headings; the CSV keeps milliseconds.
        let unit = TimeUnit.of(points.flatMap { $0.groups.map(\.p50) })
        let times = ["p50", "p95", "p99"].map(unit.heading).joined(separator: " | ")
        var table = [
            "| loss | measured a→b | measured b→a | suite | exchanges | errors | \(times) | segments: client | segments: server | client sent again | server sent again | met one at either end | \(unit.heading("min RTT")) |"
                + (swept ? " \(unit.heading("RTT asked")) | p50 in round trips |" : ""),
            "|--:|--:|--:|:--|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|" + (swept ? "--:|--:|" : ""),
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
            let asked = [point.delay.map { String(format: "%g", $0 * 1000) } ?? "", point.configuredRTT.map { String(format: "%g", $0 * 1000) } ?? ""]
            for group in point.groups {
                let milliseconds = [group.p50, group.p90, group.p95, group.p99].map { String(format: "%.3f", $0 / 1e6) }
                let packets = [segments(group.requests), segments(group.answers), share(group.requests), share(group.answers)]
                let bounds = group.retransmittedBounds.map {
                    [String(format: "%.1f", $0.lowerBound * 100), String(format: "%.1f", $0.upperBound * 100)]
                } ?? ["", ""]
                csv += ([String(format: "%g", point.loss * 100)] + measured + [group.suite, "\(group.count)", "\(group.errors)"]
                    + milliseconds + packets + bounds + [rtt] + asked).joined(separator: ",") + "\n"
                let shown: [String] = [group.p50, group.p95, group.p99].map(unit.format)
                let linked: [String] = [
                    bounds[0].isEmpty ? "–" : "\(bounds[0])–\(bounds[1])%", point.rtt.map(unit.format) ?? "–",
                ]
                let round: [String] =
                    swept
                    ? [point.configuredRTT.map { unit.format($0 * 1e9) } ?? "–", Self.roundTrips(group.p50, rtt: point.rtt)]
                    : []
                var cells: [String] = [point.label] + measured.map { $0.isEmpty ? "–" : "\($0)%" }
                cells += [group.suite, "\(group.count)", "\(group.errors)"] + shown
                cells += packets.prefix(2).map { $0.isEmpty ? "–" : $0 } + packets.suffix(2).map { $0.isEmpty ? "–" : "\($0)%" }
                cells += linked + round
                table.append("| " + cells.joined(separator: " | ") + " |")
            }
        }
        let losses = points.map(\.loss).reduce(into: [Double]()) { if !$0.contains($1) { $0.append($1) } }
        let rtts = points.map(\.configuredRTT).reduce(into: [Double?]()) { if !$0.contains($1) { $0.append($1) } }
        let xs = losses.map { String(format: "%g", $0 * 100) }
        /// The point at loss `loss` and asked RTT `rtt`.
        func point(_ loss: Double, _ rtt: Double?) -> SweepPoint? {
            points.first { $0.loss == loss && $0.configuredRTT == rtt }
        }
        func lines(_ name: String, _ path: KeyPath<SweepPoint.Figures, Double>, colourOffset: Int) -> [MatrixChart.Series] {
            suites.enumerated().flatMap { index, suite in
                rtts.enumerated().map { dash, rtt in
                    MatrixChart.Series(
                        label: "\(suite) \(name)" + (rtt.map { ", RTT \(String(format: "%g", $0 * 1000)) ms" } ?? "")
                            + " (\(Self.counts(suite, in: points)))",
                        values: losses.map { loss in
                            point(loss, rtt)?.groups.first { $0.suite == suite }.map { $0[keyPath: path] / 1e6 }
                        },
                        colour: rtts.count > 1 ? index + colourOffset : nil,
                        dash: Self.dashes[dash % Self.dashes.count]
                    )
                }
            }
        }
        // Without a sweep of delays: one chart, each suite's p50 and p95 in its colour (p95 dashed).
        // With one: p50 and p95 apart, a colour per suite and a line style per RTT.
        let chart = MatrixChart(
            title: rtts.count > 1
                ? "cx exchange and TLS handshake p50 against the link's loss (each end), a line style per RTT"
                : "cx exchange and TLS handshake time against the link's loss (each end), p50 and p95",
            parameter: "packets lost at random on each end (%)",
            numeric: true,
            xs: xs,
            series: rtts.count > 1
                ? lines("p50", \.p50, colourOffset: 0)
                : SweepReport.pairedSeries(
                    suites,
                    label: { suite, p95 in "\(suite) \(p95 ? "p95" : "p50") (\(Self.counts(suite, in: points)))" },
                    values: { suite, p95 in
                        points.map { point in point.groups.first { $0.suite == suite }.map { (p95 ? $0.p95 : $0.p50) / 1e6 } }
                    }
                ),
            valueLabel: { String(format: "%g ms", $0) }
        )
        let tails = rtts.count > 1
            ? MatrixChart(
                title: "cx exchange and TLS handshake p95 against the link's loss (each end), a line style per RTT",
                parameter: "packets lost at random on each end (%)",
                numeric: true,
                xs: xs,
                series: lines("p95", \.p95, colourOffset: 0),
                valueLabel: { String(format: "%g ms", $0) }
            ) : nil
        let retransmissions = MatrixChart(
            title: "Share of answers (cx) or handshakes (TLS) the server had to send a segment of again",
            parameter: "packets lost at random on each end (%)",
            numeric: true,
            xs: xs,
            series: suites.enumerated().flatMap { index, suite in
                rtts.enumerated().map { dash, rtt in
                    MatrixChart.Series(
                        label: suite + (rtts.count > 1 ? rtt.map { ", RTT \(String(format: "%g", $0 * 1000)) ms" } ?? "" : ""),
                        values: losses.map { loss in
                            point(loss, rtt)?.groups.first { $0.suite == suite }?.answers.map { $0.retransmittedShare * 100 }
                        },
                        colour: rtts.count > 1 ? index : nil,
                        dash: Self.dashes[dash % Self.dashes.count]
                    )
                }
            },
            valueLabel: { String(format: "%g%%", $0) }
        )
        // The verdict reads the first RTT's points (the only one without a sweep of delays).
        let verdict = SweepReport.verdict(
            points.filter { $0.configuredRTT == rtts.first ?? nil }.flatMap { point in
                point.groups.map {
                    SweepReport.Row(suite: $0.suite, loss: point.loss, p50: $0.p50, resent: $0.answers?.retransmittedShare)
                }
            },
            condition: rtts.count > 1 ? (rtts.first ?? nil).map { "at an RTT of \(String(format: "%g", $0 * 1000)) ms" } : nil
        )
        let markdown = """
            # Loss sweep

            **\(verdict)**

            Each point a fresh two-host link losing that share of packets at random on each end \
            (so a round trip meets it twice), with \(self.settings.conditions) besides; \
            `Scenarios/two-host/sweep.json` (cx `x25519` and `pq`) and `sweep-tls.json` (one TLS \
            handshake per client, once per key-exchange group: rows `tls <group>`) across it; the \
            loss measured from the link's own packet counts (`link.json` in each point's folder \
            says how it was applied). Times are the clients' whole cx exchange, or TLS \
            `handshake`, each table's in one unit that its headings name. Segments are those carrying data that each end sent, \
            per exchange (a request and its answer) or per connection up to its first request \
            (the SYN and the TLS handshake), as the client (`report.packets`) and the server \
            (`lab serve --packets`) counted them; "sent again" is the share of exchanges, or of \
            handshakes, for which that end retransmitted at least one segment (`TCP_INFO`). The two \
            ends count apart, so the share of exchanges that met a retransmission at either end \
            is bounded: at least the larger of the two, at most their sum. (A lost one-segment \
            answer also makes the client send its request again: nothing else acknowledges it.) \
            Min RTT is the smallest round trip the point's connections saw.

            ![exchange p50 and p95 against loss](sweep.svg)
            \(tails == nil ? "" : "\n![exchange p95 against loss, a line style per RTT](sweep-p95.svg)\n")

            ![server segments sent again against loss](sweep-retransmissions.svg)

            \(table.joined(separator: "\n"))

            \(Self.baselineSection(points, baseline: baseline).joined(separator: "\n"))

            """
        let out = self.settings.out
        try Data(csv.utf8).write(to: out.appendingPathComponent("sweep.csv"))
        try Data(markdown.utf8).write(to: out.appendingPathComponent("sweep.md"))
        try Data(chart.render().utf8).write(to: out.appendingPathComponent("sweep.svg"))
        try Data(retransmissions.render().utf8).write(to: out.appendingPathComponent("sweep-retransmissions.svg"))
        var images: [String: any Chart] = ["sweep.svg": chart, "sweep-retransmissions.svg": retransmissions]
        if let tails {
            try Data(tails.render().utf8).write(to: out.appendingPathComponent("sweep-p95.svg"))
            images["sweep-p95.svg"] = tails
        }
        // The same, as one page to open (its charts inside).
        let page = MarkdownPage.html(markdown: markdown, title: "Loss sweep — crypto-lab", images: images)
        try Data(page.utf8).write(to: out.appendingPathComponent(MarkdownPage.fileName))
    }

    /// How many exchanges or handshakes `suite` had at each point: `60 a point`, `59–60 a point`.
    static func counts(_ suite: String, in points: [SweepPoint]) -> String {
        let counts = points.compactMap { point in point.groups.first { $0.suite == suite }?.count }
        guard let low = counts.min(), let high = counts.max() else { return "none" }
        return (low == high ? "\(low)" : "\(low)–\(high)") + " a point"
    }

    /// `p50` in round trips of `rtt` (ns), to a tenth: a cx exchange or a TLS handshake is one;
    /// "–" where the link has no distance (an RTT under 1 ms).
    static func roundTrips(_ p50: Double, rtt: Double?) -> String {
        guard let rtt, rtt >= 1e6 else { return "–" }
        return String(format: "%.1f", p50 / rtt)
    }

    /// Line styles for the RTTs of a sweep of delays, in order: solid, dashed, dotted, …
    static let dashes: [String?] = [nil, "7 4", "2 3", "10 3 2 3"]

    /// The single-host baseline beside each point that loses nothing (the first point when
    /// every point loses): each suite's p50 and p95 there against its single-host ones plus
    /// the link's RTT (the smallest the point's connections saw) plus `p50Allowance` and
    /// `p95Allowance`.
    static func baselineSection(_ points: [SweepPoint], baseline: [SweepPoint.Figures]) -> [String] {
        let lossless = points.filter { $0.loss == 0 }
        let checked = lossless.isEmpty ? Array(points.prefix(1)) : lossless
        guard !checked.isEmpty, !baseline.isEmpty else { return [] }
        let unit = TimeUnit.of(baseline.map(\.p50))
        func ms(_ value: Double) -> String { unit.format(value) }
        var lines = [
            "## Against one host",
            "",
            "`Scenarios/two-host/sweep-single-host.json` and `sweep-tls.json`: the same loads on host B"
                + " alone, over loopback (`single-host/`, `single-host-tls-<group>/`). At each point that loses"
                + " nothing, each suite's p50 should be within its single-host p50 plus the link's RTT (the"
                + " smallest its connections saw) plus \(String(format: "%g", Self.p50Allowance / 1e6)) ms, or its"
                + " single-host p95 − p50 where that is more (the machine's queueing, measured here), and its p95 within"
                + " its single-host p95 plus the RTT plus \(String(format: "%g", Self.p95Allowance / 1e6)) ms, or that"
                + " spread plus 4 ms: a cx exchange and a TLS handshake each take one round trip more than on one host.",
            "",
            "| suite | \(unit.heading("single-host p50")) | point | \(unit.heading("p50")) | within"
                + " | \(unit.heading("single-host p95")) | \(unit.heading("p95")) | within | \(unit.heading("RTT"))"
                + " | \(unit.heading("allowance p50 / p95")) |",
            "|:--|--:|:--|--:|:--|--:|--:|:--|--:|--:|",
        ]
        for first in checked {
            let rtt = first.rtt ?? 0
            for single in baseline {
                guard let point = first.groups.first(where: { $0.suite == single.suite }) else { continue }
                let allowed = Self.allowances(single)
                let cells = [
                    single.suite, ms(single.p50), first.label, ms(point.p50),
                    point.p50 <= single.p50 + rtt + allowed.p50 ? "yes" : "no", ms(single.p95), ms(point.p95),
                    point.p95 <= single.p95 + rtt + allowed.p95 ? "yes" : "no", ms(rtt),
                    "\(ms(allowed.p50)) / \(ms(allowed.p95))",
                ]
                lines.append("| " + cells.joined(separator: " | ") + " |")
            }
        }
        return lines
    }
}
