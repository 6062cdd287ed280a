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
        /// The clients' exchanges' TCP counts (`packets.exchange`), if read.
        var requests: Packets? = nil
        /// The server's answers' TCP counts (its group's `packets.answer`), if read.
        var answers: Packets? = nil

        /// The share of exchanges that met a retransmission at either end, as far as the two
        /// ends' separate counts bound it: at least the larger share, at most their sum.
        var retransmittedBounds: ClosedRange<Double>? {
            guard let requests = self.requests, let answers = self.answers else { return nil }
            let (client, server) = (requests.retransmittedShare, answers.retransmittedShare)
            return max(client, server)...min(1, client + server)
        }
    }

    /// The parts of a `StepPackets` (results.json) the sweep shows.
    struct Packets: Sendable {
        var roundTrips: Double
        var dataSegmentsSent: Double
        var retransmittedRoundTrips: Double
        var minRTTMicroseconds: Double

        init?(_ object: Any?) {
            guard let object = object as? [String: Any] else { return nil }
            func number(_ name: String) -> Double { (object[name] as? NSNumber)?.doubleValue ?? 0 }
            self.roundTrips = number("roundTrips")
            guard self.roundTrips > 0 else { return nil }
            self.dataSegmentsSent = number("dataSegmentsSent")
            self.retransmittedRoundTrips = number("retransmittedRoundTrips")
            self.minRTTMicroseconds = number("minRTTMicroseconds")
        }

        /// Data segments sent per round trip.
        var segments: Double { self.dataSegmentsSent / self.roundTrips }
        /// The share of round trips in which this end sent a segment again.
        var retransmittedShare: Double { self.retransmittedRoundTrips / self.roundTrips }
    }

    var loss: Double
    /// The delay on each end (seconds), when the sweep set one (`--sweep-delay`), 0 for none.
    var delay: Double? = nil
    var measured: [MeasuredLoss]
    var groups: [Figures]

    /// The round trip the link was given: twice each end's delay (nil when not swept).
    var configuredRTT: Double? { self.delay.map { $0 * 2 } }

    /// The smallest RTT the point's connections saw (the link's, from `TCP_INFO`), in ns.
    var rtt: Double? {
        let rtts = self.groups.compactMap { $0.requests?.minRTTMicroseconds }.filter { $0 > 0 }
        return rtts.min().map { $0 * 1000 }
    }

    /// `5%`, `0.5%`; `RTT 30 ms, 5%` when the delay was swept.
    var label: String {
        let loss = String(format: "%g", self.loss * 100) + "%"
        return self.configuredRTT.map { "RTT \(String(format: "%g", $0 * 1000)) ms, \(loss)" } ?? loss
    }

    /// The point's folder: `loss-5%/`, or `delay-15ms-loss-5%/` when the delay was swept.
    var folder: String {
        let loss = "loss-" + String(format: "%g", self.loss * 100) + "%/"
        return self.delay.map { "delay-\(LinkConditions.milliseconds($0))-" + loss } ?? loss
    }

    /// The client groups' figures of `step` in `results` (a results.json), each named by
    /// `label` of its suite: `exchange` with the clients' and the server's packets per
    /// exchange, or a set-up step (`handshake`) with theirs for it.
    static func figures(in results: URL, step: String = "exchange", label: (String) -> String = { $0 }) throws -> [Figures] {
        let data = try Data(contentsOf: results)
        let document = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        let groups = document["groups"] as? [[String: Any]] ?? []
        func isServer(_ group: [String: Any]) -> Bool {
            ((group["key"] as? [String: Any])?["flow"] as? String)?.hasPrefix("server") == true
        }
        func suiteOf(_ group: [String: Any]) -> String? { (group["key"] as? [String: Any])?["suite"] as? String }
        return groups.compactMap { group in
            guard !isServer(group), let suite = suiteOf(group),
                let steps = group["steps"] as? [[String: Any]],
                let exchange = steps.first(where: { $0["step"] as? String == step })?["statistics"] as? [String: Any]
            else { return nil }
            let measured = step == "exchange"
            let server = groups.first { isServer($0) && suiteOf($0) == suite }
            func number(_ name: String) -> Double { (exchange[name] as? NSNumber)?.doubleValue ?? 0 }
            return Figures(
                suite: label(suite),
                count: Int(number("count")),
                errors: Int(number("errors")),
                p50: number("p50"),
                p90: number("p90"),
                p95: number("p95"),
                p99: number("p99"),
                requests: Packets((group[measured ? "packets" : "setupPackets"] as? [String: Any])?[step]),
                answers: Packets((server?["packets"] as? [String: Any])?[measured ? "answer" : step])
            )
        }
    }
}

extension TwoHostRun {
    /// How long a whole sweep may take; a point that would start after it is not run.
    static let sweepLimit = Duration.seconds(540)

    /// `--sweep-loss` and `--sweep-delay`: for each delay and loss, a fresh link (with the
    /// other conditions) and fresh hosts, sweep.json and sweep-tls.json across it, the loss
    /// and the holders' figures measured; then `<out>/sweep.md`, `sweep.csv` and the charts.
    /// Each point's reports are in its folder (`SweepPoint.folder`).
    func sweep() async throws {
        let kernel = try await self.probe()
        try await self.prepare()
        self.output.say("lab \(self.settings.lab.path)")
        self.output.say("work dir \(self.work.path)")
        let deadline = ContinuousClock.now + Self.sweepLimit
        var points: [SweepPoint] = []
        var baseline: [SweepPoint.Figures] = []
        let delays: [Double?] = self.settings.sweepDelays.isEmpty ? [nil] : self.settings.sweepDelays
        let losses = self.settings.sweepLosses.isEmpty ? [self.settings.conditions.loss ?? 0] : self.settings.sweepLosses
        for delay in delays {
            for loss in losses {
                var conditions = self.settings.conditions
                conditions.loss = loss
                if let delay { conditions.delay = delay > 0 ? delay : nil }
                conditions = conditions.resolved(on: kernel)
                var point = SweepPoint(loss: loss, delay: delay, measured: [], groups: [])
                let folder = point.folder
                guard ContinuousClock.now < deadline else {
                    throw Failure(
                        "the sweep ran past \(Self.sweepLimit) before \(folder.dropLast()); the points done are in their folders"
                    )
                }
                let link = try await self.linkUp(conditions)
                self.output.say(
                    "\(folder.dropLast()): namespaces \(self.namespace("a")) \(self.namespace("b")), link \(link.description)"
                )
                let (a, b) = try await self.hostsUp()
                _ = try await self.twoHosts(
                    a,
                    b,
                    link: link.description,
                    scenario: self.settings.sweepScenario,
                    folder: folder,
                    conditions: conditions,
                    sets: self.settings.exchangeSets
                )
                try await self.tlsHosts(a, b, link: link.description, folder: folder, conditions: conditions)
                let figures = try await self.linkFigures()
                for direction in figures.loss { self.output.say("  measured: \(direction)") }
                for holder in figures.delayers { self.output.say("  delayed: \(holder)") }
                point.measured = figures.loss
                point.groups = try self.pointFigures(single: false, folder: folder)
                try self.writeLink(
                    link,
                    kernel: kernel,
                    figures: figures,
                    conditions: conditions,
                    folder: folder,
                    rtt: point.rtt
                )
                if points.isEmpty, self.settings.baseline {
                    // The baseline, once: the same load on host B alone, over loopback.
                    _ = try await self.singleHost(
                        b,
                        scenario: self.settings.sweepSingleHostScenario,
                        port: self.settings.sweepBaselinePort,
                        runs: [("single-host", self.settings.exchangeSets)]
                    )
                    try await self.tlsSingleHost(b)
                    baseline = try self.pointFigures(single: true, folder: "")
                }
                await self.tearDownHosts()
                points.append(point)
            }
        }
        try self.writeSweep(points, baseline: baseline)
        self.output.say("sweep in \(self.settings.out.path): sweep.md, sweep.csv, sweep.svg; each point in its folder")
        self.output.say("done in \(seconds(since: self.started)) s")
    }
}

extension TwoHostRun {
    /// A point's figures (or the single-host baseline's): cx's exchanges, then each TLS
    /// group's handshakes, named `tls <group>`.
    func pointFigures(single: Bool, folder: String) throws -> [SweepPoint.Figures] {
        let out = self.settings.out
        let cx = out.appendingPathComponent(single ? "single-host/results.json" : "\(folder)two-host/results.json")
        var figures = try SweepPoint.figures(in: cx)
        for group in Self.sweepGroups {
            let name = single ? "single-host-tls-\(group)" : "\(folder)tls-\(group)"
            figures += try SweepPoint.figures(
                in: out.appendingPathComponent("\(name)/results.json"),
                step: "handshake",
                label: { _ in "tls \(group)" }
            )
        }
        return figures
    }
}
