import LabCharts
import LabCore
import LabResults
import LabScenario

extension MarkdownReporter {
    /// The Bytes on the wire section: per group, the bytes of one measured iteration and the
    /// rate they made; then each step that sent, per round trip, measured and in set-up.
    /// Nothing when no group counted bytes.
    static func traffic(_ result: RunResult) -> [String] {
        let groups = result.groups.filter { !$0.traffic.isEmpty || !$0.setupTraffic.isEmpty }
        guard !groups.isEmpty else { return [] }
        let seconds = Double(result.measuredNanoseconds) / 1e9
        var lines = [
            "## Bytes on the wire", "",
            "Whole frames (length header and body) as the transport carried them, per measured iteration"
                + " (failed ones included, warm-up left out); over `tls`, a request's record overhead is not in"
                + " them, and a `handshake` counts its TLS records, from the ClientHello to the client's Finished.",
            "",
            "| Flow | Suite | Provider | Transport | Sent / iteration | Received / iteration | Total / iteration | Rate |",
            "|:--|:--|:--|:--|--:|--:|--:|--:|",
        ]
        for group in groups {
            let key = group.key
            var cells = [key.flow, key.suite, key.provider, key.transport].map(Self.cell)
            if let per = group.bytesPerIteration {
                let total = group.measuredTraffic.total
                let rate = seconds > 0 ? ByteSize.rate(Double(total) / seconds) : "—"
                cells += [
                    ByteSize.format(per.sent), ByteSize.format(per.received), ByteSize.format(per.sent + per.received),
                    rate,
                ]
            } else {
                cells += ["—", "—", "—", "—"]
            }
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        lines += [
            "", "By step: one round trip is a request and its answer, or one handshake.", "",
            "| Flow | Suite | Provider | Transport | Step | When | Round trips | Sent / round trip | Received / round trip |",
            "|:--|:--|:--|:--|:--|:--|--:|--:|--:|",
        ]
        for group in groups {
            let key = group.key
            for (phase, traffic) in [("measured", group.traffic), ("set-up", group.setupTraffic)] {
                for (step, counted) in traffic.sorted(by: { Step.reportOrdering($0.key, $1.key) })
                where counted.roundTrips > 0 {
                    let trips = Double(counted.roundTrips)
                    let cells =
                        [key.flow, key.suite, key.provider, key.transport, step.name, phase].map(Self.cell) + [
                            Numbers.integer(counted.roundTrips), ByteSize.format(Double(counted.sent) / trips),
                            ByteSize.format(Double(counted.received) / trips),
                        ]
                    lines.append("| " + cells.joined(separator: " | ") + " |")
                }
            }
        }
        return lines + [""]
    }
}
