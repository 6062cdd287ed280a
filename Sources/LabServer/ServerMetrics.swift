import LabMemory
import LabMessaging
import LabResults
import LabTransports

/// `lab serve`'s metrics page: the server's totals (`ServerRecording`, the same figures as
/// its `--report` and its `serverStats` answers), the password-check pool and the heap.
package enum ServerMetrics {
    package static func page(_ server: AssembledServer) -> String {
        var page = PrometheusText()
        var snapshot = server.recording.snapshot()
        // The lab's own statistics requests are not exchanges (as in the report).
        snapshot = ServerReport.exchanges(snapshot)
        snapshot.exposition(into: &page, open: server.recording.openConnections)
        if let checks = server.messaging?.passwordChecks {
            page.gauge(
                "lab_password_checks_admitted",
                "msg/1 password checks running or waiting now (--kdf-workers run at once, --kdf-queue more may wait).",
                [([], Double(checks.admitted))]
            )
            page.gauge(
                "lab_password_check_workers",
                "msg/1 password checks that run at once.",
                [([], Double(checks.workers))]
            )
        }
        if let heap = HeapStats.current() {
            page.gauge(
                "lab_heap_bytes",
                "The process heap (jemalloc): allocated, active and resident bytes.",
                [
                    ([("kind", "allocated")], Double(heap.allocated)), ([("kind", "active")], Double(heap.active)),
                    ([("kind", "resident")], Double(heap.resident)),
                ]
            )
        }
        return page.text
    }
}
