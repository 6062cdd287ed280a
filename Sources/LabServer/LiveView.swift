import Foundation
import LabCore
import LabReport
package import LabRunner
package import LabTransports
import Logging
import Synchronization

/// `lab run --live`: the run second by second for a browser, while it runs. `/` is the page
/// (`LivePage`), `/events` the server-sent events (each interval's figures as it closes, one
/// a second by default), `/metrics` the run's totals so far for Prometheus. It reads what the
/// progress line reads (`RunProgress`, published once per interval off the clients' steps),
/// four times a second; the run's own work is untouched. When the run stops measuring it says
/// the reports are being written; once they are, it sends `end` with where they are, closes
/// every connection and stops listening: it never holds a run open after its end.
package final class LiveView: Sendable {
    package let endpoint: MetricsEndpoint
    private let stream: EventStream
    private let progress: RunProgress
    private let totals = Mutex(Totals())
    private let watcher = Mutex<Task<Void, Never>?>(nil)

    private struct Totals {
        var last = -1
        var exchanges: [String: UInt64] = [:]
        var errors: [String: UInt64] = [:]
        var keys: [String] = []
    }

    /// Starts serving on `host`:`port` (0 picks a free port) for the run `progress` counts.
    package static func start(
        host: String,
        port: Int,
        scenario: String,
        description: String,
        progress: RunProgress
    )
        async throws -> LiveView
    {
        let page = LivePage.html(scenario: scenario, description: description)
        let holder = Mutex<LiveView?>(nil)
        let stream = EventStream()
        let endpoint = try await MetricsEndpoint.start(
            host: host,
            port: port,
            logger: Logger(label: "lab.live"),
            routes: [
                "/": .text(contentType: "text/html; charset=utf-8", body: { page }),
                "/events": .events(stream),
                "/metrics": .text(
                    contentType: MetricsEndpoint.prometheusType,
                    body: { holder.withLock { $0?.metrics() } ?? "" }
                ),
            ]
        )
        let view = LiveView(endpoint: endpoint, progress: progress, stream: stream)
        holder.withLock { $0 = view }
        view.watcher.withLock {
            $0 = Task { [view] in
                while !Task.isCancelled {
                    view.poll()
                    do { try await Task.sleep(nanoseconds: 250_000_000) } catch { return }
                }
            }
        }
        return view
    }

    private init(endpoint: MetricsEndpoint, progress: RunProgress, stream: EventStream) {
        self.endpoint = endpoint
        self.progress = progress
        self.stream = stream
    }

    /// Sends the interval that closed last, if it is new.
    private func poll() {
        guard let figures = self.progress.lastInterval else { return }
        let isNew = self.totals.withLock { totals -> Bool in
            guard figures.index > totals.last else { return false }
            totals.last = figures.index
            totals.keys = figures.groups.map(\.key)
            for group in figures.groups {
                totals.exchanges[group.key, default: 0] += group.exchanges
                totals.errors[group.key, default: 0] += group.errors
            }
            return true
        }
        guard isNew else { return }
        self.stream.send(Self.json(figures))
    }

    /// The run has stopped measuring: sends its last interval, stops reading the progress, and
    /// tells the page that the reports are being written (`{"state": "writing"}`).
    package func measured() {
        self.watcher.withLock { $0?.cancel() }
        self.poll()
        self.stream.send(#"{"state":"writing"}"#)
    }

    /// Ends the stream once the reports are written, naming their folder (nil: none were),
    /// closes every connection and stops listening.
    package func finish(reports: String?) async {
        self.watcher.withLock { $0?.cancel() }
        self.poll()
        let end: [String: String] = reports.map { ["reports": $0] } ?? [:]
        let data = (try? JSONSerialization.data(withJSONObject: end, options: [.sortedKeys])) ?? Data("{}".utf8)
        await self.stream.finish(String(decoding: data, as: UTF8.self))
        await self.endpoint.shutdown()
    }

    /// One interval as the page reads it.
    static func json(_ figures: RunProgress.IntervalFigures) -> String {
        func number(_ value: UInt64?) -> Any { value.map { NSNumber(value: $0) } ?? NSNull() }
        let object: [String: Any] = [
            "index": figures.index, "width": NSNumber(value: figures.width),
            "exchanges": NSNumber(value: figures.exchanges), "errors": NSNumber(value: figures.errors),
            "p50": number(figures.p50), "p99": number(figures.p99),
            "groups": figures.groups.map { group -> [String: Any] in
                [
                    "key": group.key, "exchanges": NSNumber(value: group.exchanges),
                    "errors": NSNumber(value: group.errors), "p50": number(group.p50), "p99": number(group.p99),
                ]
            },
        ]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// The run so far for Prometheus: exchanges and errors by group, and the last interval's
    /// p50 and p99 by group.
    package func metrics() -> String {
        let (totals, last) = (self.totals.withLock { $0 }, self.progress.lastInterval)
        var page = PrometheusText()
        page.counter(
            "lab_run_exchanges_total",
            "Exchanges that succeeded so far, by group (intervals closed so far).",
            totals.keys.map { ([("group", $0)], totals.exchanges[$0] ?? 0) }
        )
        page.counter(
            "lab_run_errors_total",
            "Exchanges that failed so far, by group (intervals closed so far).",
            totals.keys.map { ([("group", $0)], totals.errors[$0] ?? 0) }
        )
        page.counter(
            "lab_run_iterations_completed_total",
            "Iterations finished so far, warm-up included.",
            [([], UInt64(self.progress.completed))]
        )
        if let last {
            let quantiles = last.groups.flatMap { group -> [([(String, String)], Double)] in
                [("0.5", group.p50), ("0.99", group.p99)].compactMap { quantile, value in
                    value.map { ([("group", group.key), ("quantile", quantile)], Double($0) / 1e9) }
                }
            }
            page.gauge(
                "lab_run_last_interval_exchange_seconds",
                "The last closed interval's exchange latency, by group.",
                quantiles
            )
        }
        return page.text
    }
}
