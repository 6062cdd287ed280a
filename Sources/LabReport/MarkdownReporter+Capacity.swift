import LabCharts
import LabCore
import LabResults

extension MarkdownReporter {
    /// The Capacity section of a run with stages: per group, a row per stage (offered rate,
    /// throughput, p50, p99, errors, whether it held the bound) and the knee.
    static func capacity(_ result: RunResult, chart: String?) -> [String] {
        let capacities = Capacity.of(result)
        guard !capacities.isEmpty else { return [] }
        var lines = [
            "## Capacity", "",
            "Each stage's exchanges: latencies of those due in it (from when they were due), throughput of those that"
                + " ended in it."
                + (capacities.first?.offered == .clients
                    ? " The stages hold a number of clients running back to back (closed model)." : "")
                + (capacities.first?.bound.map {
                    " A stage is sustained when its p99 is at most \(TimeSpan.format(nanoseconds: $0)) and none failed"
                        + (capacities.first?.offered == .clients
                            ? ";" : ", and at least \(Int(Capacity.servedShare * 100))% of its arrivals were served;")
                        + " the knee is where that"
                        + " stops after a sustained stage, p99 interpolated on a log scale between the two."
                        + (capacities.first?.offered == .clients
                            ? ""
                            : " A stage that missed the bound while serving at least its offered rate was *draining*"
                                + " an earlier stage's backlog: the server kept up with it, so the knee lies above it,"
                                + " at what the stage after it served.")
                } ?? ""),
            "",
        ]
        if let chart { lines += ["![Throughput and latency against offered load](\(chart))", ""] }
        for capacity in capacities {
            let unit = capacity.offered == .clients ? " clients" : "/s"
            let decimals = capacity.offered == .clients ? 0 : 1
            lines += ["### \(Self.cell(Self.label(capacity.key)))", ""]
            if let bound = capacity.bound {
                if let knee = capacity.knee {
                    lines.append(
                        "**Knee: \(Numbers.fixed(knee.rate, 1, grouped: true))\(unit)**, between stage \(knee.below + 1)"
                            + " (\(Numbers.fixed(capacity.points[knee.below].offered, decimals, grouped: true))\(unit),"
                            + (capacity.points[knee.below].draining == true ? " draining a backlog)" : " sustained)")
                            + " and stage"
                            + " \(knee.above + 1) (\(Numbers.fixed(capacity.points[knee.above].offered, decimals, grouped: true))\(unit),"
                            + " not), p99 bound \(TimeSpan.format(nanoseconds: bound))."
                    )
                } else if !capacity.points.contains(where: { $0.sustained == true }) {
                    lines.append(
                        "**No knee: no stage held the bound** (\(TimeSpan.format(nanoseconds: bound))); try lower rates."
                    )
                } else {
                    lines.append(
                        "**No knee: every stage from the first sustained one held the bound** (\(TimeSpan.format(nanoseconds: bound)));"
                            + (capacity.offered == .clients ? " try more clients." : " try higher rates.")
                    )
                }
                lines.append("")
            }
            let time = TimeUnit.of(capacity.points.compactMap(\.p50))
            lines += [
                "| Stage | \(capacity.offered == .clients ? "Clients" : "Offered /s") | Throughput /s | Exchanges"
                    + " | Errors | \(time.heading("p50")) | \(time.heading("p99")) | Sustained |",
                "|--:|--:|--:|--:|--:|--:|--:|:--|",
            ]
            for (index, point) in capacity.points.enumerated() {
                let cells = [
                    String(index + 1), Numbers.fixed(point.offered, decimals, grouped: true),
                    Numbers.fixed(point.throughput, 1, grouped: true), Numbers.integer(point.exchanges),
                    Numbers.integer(point.errors), point.p50.map(time.format) ?? "—", point.p99.map(time.format) ?? "—",
                    point.sustained.map { $0 ? "yes" : point.draining == true ? "**no** (draining)" : "**no**" } ?? "—",
                ]
                lines.append("| " + cells.joined(separator: " | ") + " |")
            }
            lines.append("")
        }
        return lines
    }
}
