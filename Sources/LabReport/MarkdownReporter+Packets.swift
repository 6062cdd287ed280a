import LabCharts
import LabCore
import LabResults

extension MarkdownReporter {
    /// The Packets section: per group and step, what TCP did per round trip as the kernel
    /// counted it on that end's sockets (`StepPackets`). Nothing when no group read packets.
    static func packets(_ result: RunResult) -> [String] {
        let groups = result.groups.filter { !$0.packets.isEmpty || !$0.setupPackets.isEmpty }
        guard !groups.isEmpty else { return [] }
        var lines = [
            "## Packets", "",
            "TCP segments per round trip as the kernel counted them on this end's sockets (`TCP_INFO`, read"
                + " before each request and when its answer arrived: `report.packets`). Sent counts data,"
                + " pure ACKs and retransmissions; a retransmission is a segment this end sent again, so the"
                + " share is of round trips that met one *on this end*. Retransmitted segments of the data"
                + " segments sent are this end's view of the path's loss (tail-loss probes and spurious"
                + " retransmissions count too; a lost ACK can make the peer, not this end, send again). `server` groups are a server's own"
                + " counts (`lab serve --packets`): each `answer` from its request's arrival to the next"
                + " request's (a connection's last answer is not counted). `connect` and `handshake`"
                + " count from the SYN to the handshake's end.",
            "",
            "Segments are per round trip, those carrying data in brackets.", "",
            "| Flow | Suite | Provider | Transport | Step | When | Round trips | Segments sent (data)"
                + " | Segments received (data) | Retransmitted segments | Of data sent | Round trips with one | Min RTT |",
            "|:--|:--|:--|:--|:--|:--|--:|--:|--:|--:|--:|--:|--:|",
        ]
        for group in groups {
            let key = group.key
            for (phase, packets) in [("measured", group.packets), ("set-up", group.setupPackets)] {
                for (step, counted) in packets.sorted(by: { Step.reportOrdering($0.key, $1.key) })
                where counted.roundTrips > 0 {
                    let trips = Double(counted.roundTrips)
                    func per(_ value: UInt64) -> String { Numbers.fixed(Double(value) / trips, 2) }
                    let share = counted.retransmittedShare.map { Numbers.fixed($0 * 100, 1) + "%" } ?? "—"
                    let rtt =
                        counted.minRTTMicroseconds > 0
                        ? Numbers.fixed(Double(counted.minRTTMicroseconds) / 1000, 3) + " ms" : "—"
                    let cells =
                        [key.flow, key.suite, key.provider, key.transport, step.name, phase].map(Self.cell) + [
                            Numbers.integer(counted.roundTrips),
                            "\(per(counted.segmentsSent)) (\(per(counted.dataSegmentsSent)))",
                            "\(per(counted.segmentsReceived)) (\(per(counted.dataSegmentsReceived)))",
                            Numbers.integer(counted.retransmissions),
                            counted.dataSegmentsSent > 0
                                ? Numbers.fixed(Double(counted.retransmissions) / Double(counted.dataSegmentsSent) * 100, 1) + "%"
                                : "—",
                            "\(Numbers.integer(counted.retransmittedRoundTrips)) (\(share))", rtt,
                        ]
                    lines.append("| " + cells.joined(separator: " | ") + " |")
                }
            }
        }
        return lines + [""]
    }
}
