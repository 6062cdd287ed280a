import Foundation
import LabCharts

/// One point of a loss sweep: the loss asked for, the loss measured, and each client group's
/// exchange figures (results.json's `exchange` step, nanoseconds).
struct SweepPoint: Sendable {
    struct Figures: Sendable {
        var suite: String
        var count: Int
        var errors: Int
        var p50: Double
        var p90: Double
        var p95: Double
        var p99: Double
    }

    var loss: Double
    var measured: [MeasuredLoss]
    var groups: [Figures]

    /// `5%`, `0.5%`.
    var label: String { String(format: "%g", self.loss * 100) + "%" }

    /// The client groups' exchange figures in `results` (a results.json).
    static func figures(in results: URL) throws -> [Figures] {
        let data = try Data(contentsOf: results)
        let document = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        return (document["groups"] as? [[String: Any]] ?? []).compactMap { group in
            let key = group["key"] as? [String: Any] ?? [:]
            guard (key["flow"] as? String)?.hasPrefix("server") == false, let suite = key["suite"] as? String,
                let steps = group["steps"] as? [[String: Any]],
                let exchange = steps.first(where: { $0["step"] as? String == "exchange" })?["statistics"] as? [String: Any]
            else { return nil }
            func number(_ name: String) -> Double { (exchange[name] as? NSNumber)?.doubleValue ?? 0 }
            return Figures(
                suite: suite,
                count: Int(number("count")),
                errors: Int(number("errors")),
                p50: number("p50"),
                p90: number("p90"),
                p95: number("p95"),
                p99: number("p99")
            )
        }
    }
}

extension TwoHostRun {
    /// How long a whole sweep may take; a point that would start after it is not run.
    static let sweepLimit = Duration.seconds(540)

    /// `--sweep-loss`: for each loss, a fresh link (with the other conditions) and fresh
    /// hosts, sweep.json across it, the loss measured; then `<out>/sweep.md`, `sweep.csv` and
    /// `sweep.svg` (each suite's exchange p50 and p95). Each point's reports are in `<out>/loss-P%/`.
    func sweep() async throws {
        let kernel = try await self.probe()
        try await self.prepare()
        self.output.say("lab \(self.settings.lab.path)")
        self.output.say("work dir \(self.work.path)")
        let deadline = ContinuousClock.now + Self.sweepLimit
        var points: [SweepPoint] = []
        for loss in self.settings.sweepLosses {
            var conditions = self.settings.conditions
            conditions.loss = loss
            let folder = "loss-" + String(format: "%g", loss * 100) + "%/"
            guard ContinuousClock.now < deadline else {
                throw Failure("the sweep ran past \(Self.sweepLimit) before \(folder.dropLast()); the points done are in their folders")
            }
            let link = try await self.linkUp(conditions)
            self.output.say("\(folder.dropLast()): namespaces \(self.namespace("a")) \(self.namespace("b")), link \(link.description)")
            let (a, b) = try await self.hostsUp()
            _ = try await self.twoHosts(
                a,
                b,
                link: link.description,
                scenario: self.settings.sweepScenario,
                folder: folder,
                conditions: conditions
            )
            let measured = try await self.measuredLoss()
            for direction in measured { self.output.say("  measured: \(direction)") }
            try self.writeLink(link, kernel: kernel, measured: measured, conditions: conditions, folder: folder)
            await self.tearDownHosts()
            let results = self.settings.out.appendingPathComponent("\(folder)two-host/results.json")
            points.append(SweepPoint(loss: loss, measured: measured, groups: try SweepPoint.figures(in: results)))
        }
        try self.writeSweep(points)
        self.output.say("sweep in \(self.settings.out.path): sweep.md, sweep.csv, sweep.svg; each point in loss-P%/")
        self.output.say("done in \(seconds(since: self.started)) s")
    }

    /// `sweep.csv`, `sweep.md` and `sweep.svg` of `points`.
    func writeSweep(_ points: [SweepPoint]) throws {
        let suites = points.flatMap { $0.groups.map(\.suite) }.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        var csv = "loss_percent,measured_a_to_b_percent,measured_b_to_a_percent,suite,exchanges,errors,p50_ms,p90_ms,p95_ms,p99_ms\n"
        var table = [
            "| loss | measured a→b | measured b→a | suite | exchanges | errors | p50 | p90 | p95 | p99 |",
            "|--:|--:|--:|:--|--:|--:|--:|--:|--:|--:|",
        ]
        for point in points {
            let measured = ["a→b", "b→a"].map { name in
                point.measured.first { $0.direction == name }.map { String(format: "%.1f", $0.loss * 100) } ?? ""
            }
            for group in point.groups {
                let times = [group.p50, group.p90, group.p95, group.p99].map { String(format: "%.3f", $0 / 1e6) }
                csv += ([String(format: "%g", point.loss * 100)] + measured + [group.suite, "\(group.count)", "\(group.errors)"] + times)
                    .joined(separator: ",") + "\n"
                let cells = [point.label] + measured.map { $0.isEmpty ? "–" : "\($0)%" } + [group.suite, "\(group.count)", "\(group.errors)"]
                    + times.map { "\($0) ms" }
                table.append("| " + cells.joined(separator: " | ") + " |")
            }
        }
        let chart = MatrixChart(
            title: "Exchange time against the link's loss (each end), p50 and p95",
            parameter: "packets lost at random on each end (%)",
            numeric: true,
            xs: points.map { String(format: "%g", $0.loss * 100) },
            series: suites.flatMap { suite in
                [("p50", \SweepPoint.Figures.p50), ("p95", \SweepPoint.Figures.p95)].map { name, path in
                    MatrixChart.Series(
                        label: "\(suite) \(name)",
                        values: points.map { point in point.groups.first { $0.suite == suite }.map { $0[keyPath: path] / 1e6 } }
                    )
                }
            },
            valueLabel: { String(format: "%g ms", $0) }
        )
        let markdown = """
            # Loss sweep

            Each point a fresh two-host link losing that share of packets at random on each end \
            (so a round trip meets it twice), with \(self.settings.conditions) besides; \
            `Scenarios/two-host/sweep.json` across it; the loss measured from the link's own \
            packet counts (`link.json` in each point's folder says how it was applied). \
            Exchange times are the clients' whole exchange, in milliseconds.

            ![exchange p50 and p95 against loss](sweep.svg)

            \(table.joined(separator: "\n"))

            """
        let out = self.settings.out
        try Data(csv.utf8).write(to: out.appendingPathComponent("sweep.csv"))
        try Data(markdown.utf8).write(to: out.appendingPathComponent("sweep.md"))
        try Data(chart.render().utf8).write(to: out.appendingPathComponent("sweep.svg"))
    }
}
