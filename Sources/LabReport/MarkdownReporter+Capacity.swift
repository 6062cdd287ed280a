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
                + (capacities.first?.bound.map {
                    " A stage is sustained when its p99 is at most \(TimeSpan.format(nanoseconds: $0)), none failed, and"
                        + " at least \(Int(Capacity.servedShare * 100))% of its arrivals were served; the knee is where that"
                        + " stops after a sustained stage, p99 interpolated on a log scale between the two."
                } ?? ""),
            "",
        ]
        if let chart { lines += ["![Throughput and latency against offered load](\(chart))", ""] }
        for capacity in capacities {
            lines += ["### \(Self.label(capacity.key))", ""]
            if let bound = capacity.bound {
                if let knee = capacity.knee {
                    lines.append(
                        "**Knee: \(Numbers.fixed(knee.rate, 1, grouped: true))/s**, between stage \(knee.below + 1)"
                            + " (\(Numbers.fixed(capacity.points[knee.below].offered, 1, grouped: true))/s, sustained) and stage"
                            + " \(knee.above + 1) (\(Numbers.fixed(capacity.points[knee.above].offered, 1, grouped: true))/s,"
                            + " not), p99 bound \(TimeSpan.format(nanoseconds: bound))."
                    )
                } else if !capacity.points.contains(where: { $0.sustained == true }) {
                    lines.append(
                        "**No knee: no stage held the bound** (\(TimeSpan.format(nanoseconds: bound))); try lower rates."
                    )
                } else {
                    lines.append(
                        "**No knee: every stage from the first sustained one held the bound** (\(TimeSpan.format(nanoseconds: bound)));"
                            + " try higher rates."
                    )
                }
                lines.append("")
            }
            lines += [
                "| Stage | Offered /s | Throughput /s | Exchanges | Errors | p50 | p99 | Sustained |",
                "|--:|--:|--:|--:|--:|--:|--:|:--|",
            ]
            for (index, point) in capacity.points.enumerated() {
                let cells = [
                    String(index + 1), Numbers.fixed(point.offered, 1, grouped: true),
                    Numbers.fixed(point.throughput, 1, grouped: true), Numbers.integer(point.exchanges),
                    Numbers.integer(point.errors), point.p50.map { TimeSpan.format(nanoseconds: $0) } ?? "—",
                    point.p99.map { TimeSpan.format(nanoseconds: $0) } ?? "—",
                    point.sustained.map { $0 ? "yes" : "**no**" } ?? "—",
                ]
                lines.append("| " + cells.joined(separator: " | ") + " |")
            }
            lines.append("")
        }
        return lines
    }
}
