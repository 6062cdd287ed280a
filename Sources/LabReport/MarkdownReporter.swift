public import Foundation
import Histogram
import LabCharts
import LabCore
public import LabResults

/// Writes `report.md`: summary, thresholds, a table per group, outcome counts (when flows count
/// any), and SVG charts beside it.
public struct MarkdownReporter: Reporter {
    /// `markdown`.
    public static let name = "markdown"
    /// The report's file name.
    public static let fileName = "report.md"
    /// The throughput chart's file name.
    public static let throughputChartName = "throughput.svg"
    /// The over-time chart's file name (`TimelineChart`), written when the run kept intervals.
    public static let timelineChartName = "timeline.svg"
    /// The capacity chart's file name (`CapacityChart`), written for a run with stages.
    public static let capacityChartName = "capacity.svg"
    /// The matrix chart's file name (`MatrixChart`), written for a run with a matrix.
    public static let matrixChartName = "matrix.svg"

    /// Whether to draw SVG charts and link them from a Charts section.
    public var charts: Bool

    /// A Markdown reporter; `options.charts` turns the charts on or off.
    public init(options: ReportOptions) {
        self.charts = options.charts
    }

    /// Writes `report.md` and, with charts on, one latency chart per group and `throughput.svg`.
    public func write(_ result: RunResult, to directory: URL) throws -> [URL] {
        var written: [URL] = []
        for (name, text) in self.render(result) {
            let url = directory.appendingPathComponent(name)
            try writeText(text, to: url)
            written.append(url)
        }
        return written
    }

    /// Every file the report consists of, by name: `report.md` first, then the charts.
    public func render(_ result: RunResult) -> [(name: String, text: String)] {
        let latencyCharts = self.charts ? Self.latencyChartNames(result) : []
        var files = [(name: Self.fileName, text: self.markdown(result, latencyCharts: latencyCharts))]
        guard self.charts else { return files }
        files += Self.chartFiles(result, latencyCharts: latencyCharts)
        return files
    }

    // MARK: The document

    /// The Markdown text; `latencyCharts` holds a chart file name per group, or nothing without charts.
    /// What the speed chart draws (`throughputChart`), in a sentence.
    static func speedCaption(_ result: RunResult) -> String {
        result.hasWork
            ? "Exchanges per CPU-second: 1 s ÷ the mean work of an exchange (the CPU time of its steps, client and server)."
            : "What one client does back to back: 1 s ÷ the mean exchange time (service time in the open model)."
    }

    private func markdown(_ result: RunResult, latencyCharts: [String]) -> String {
        let metadata = result.metadata
        var lines: [String] = ["# \(Self.cell(metadata.scenario)) — crypto-lab run", ""]
        let description = metadata.description.trimmingCharacters(in: .whitespacesAndNewlines)
        // One paragraph, as report.html shows it: a line of its own could start a heading or a table.
        if !description.isEmpty { lines += [Self.cell(description), ""] }
        lines += Self.notWholeBlock(result)
        if result.stoppedByDeadline {
            lines += [
                "> ⚠️ **Cut short: the deadline stopped this run** after \(Self.iterations(result)) iterations;"
                    + " the figures cover only what ran.",
                "",
            ]
        }
        if let warning = result.cpu?.warning { lines += ["> ⚠️ **Generator saturated.** \(warning)", ""] }
        lines += Self.summary(result)
        lines += Self.thresholds(result)
        lines += Self.shards(result)
        lines += Self.comparisons(result)
        var flows: [String] = []
        for group in result.groups where !flows.contains(group.key.flow) { flows.append(group.key.flow) }
        for flow in flows {
            lines += ["## Flow \(Self.cell(flow))", ""]
            if result.groups.contains(where: { $0.key.flow == flow && $0.isServerSide }) {
                lines += [
                    "What the server measured of its own work during the run, by suite or msg/1 op:"
                        + " one sample per request it answered, its steps only (the client's are above).",
                    "",
                ]
            }
            for group in result.groups where group.key.flow == flow { lines += Self.table(result, group) }
        }
        lines += Self.outcomes(result)
        lines += Self.capacity(result, chart: self.charts ? Self.capacityChartName : nil)
        lines += Self.matrix(result, chart: self.charts ? Self.matrixChartName : nil)
        lines += Self.traffic(result)
        lines += Self.packets(result)
        lines += Self.memory(result)
        lines += Self.calibration(result)
        if self.charts {
            lines += [
                "## Charts", "", "### Speed by suite × provider", "",
                Self.speedCaption(result)
                    + " Not the tables' ops/s: that is each group's share of this run's measured throughput, which follows"
                    + " the flows' weights, not their speed.",
                "",
                "![Speed by suite and provider: exchanges per second of one client, or per CPU-second](\(Self.throughputChartName))",
                "",
                "### Latency by percentile", "",
            ]
            for (group, name) in zip(result.groups, latencyCharts) { lines += Self.latencyChartLines(result, group, name: name) }
            if result.intervals?.indices != nil {
                lines += [
                    "### Over time", "",
                    "Each group's exchanges by the interval they started in: p50 and p99 above, exchanges per second"
                        + " below (every step, interval by interval, in `timeseries.csv` of the csv format).",
                    "", "![Exchange latency and rate over time](\(Self.timelineChartName))", "",
                ]
            }
        }
        if !result.scenarioText.isEmpty {
            let fence = Self.fence(for: result.scenarioText, minimum: 3)
            lines += [
                "## Scenario", "", "<details>", "<summary>Scenario as run</summary>", "", fence + "json",
                result.scenarioText.trimmingCharacters(in: .newlines), fence, "", "</details>", "",
            ]
        }
        while lines.last == "" { lines.removeLast() }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The Calibration section: the reference operations as this process timed them, and
    /// each client step's p50 in calibration units (with its spread over rounds, if any).
    private static func calibration(_ result: RunResult) -> [String] {
        guard let calibration = result.calibration, let median = calibration.median, median.unit > 0 else { return [] }
        let units = calibration.samples.map(\.unit)
        func time(_ nanoseconds: UInt64) -> String { TimeSpan.format(nanoseconds: Double(nanoseconds)) }
        var lines = [
            "## Calibration", "",
            "Reference operations timed in this process with \(Self.cell(calibration.provider)), "
                + "\(calibration.samples.count) samples (before the run\(result.rounds.isEmpty ? "" : ", before each round"), after it); medians:"
                + " RSA-2048 sign \(time(median.rsaSign)), RSA-2048 verify \(time(median.rsaVerify)),"
                + " AES-128-CBC 16 KiB \(time(median.aesCBC16K)).",
            "The calibration unit (cu) is √(sign × AES 16 KiB) = \(TimeSpan.format(nanoseconds: median.unit))"
                + " (samples \(TimeSpan.format(nanoseconds: units.min() ?? 0)) to \(TimeSpan.format(nanoseconds: units.max() ?? 0)))."
                + " A step's time in cu moves with the lab's code, far less with the machine: compare runs from"
                + " different machines or moments by it (`lab check` does, round by round).",
            "",
        ]
        let withRounds = !result.rounds.isEmpty
        let steps = result.groups.filter { !$0.isServerSide }.flatMap { group in
            group.orderedSteps.filter { $0.histogram.totalCount > 0 }.map { step in
                (group: group, step: step.step, p50: Double(step.histogram.valueAtPercentile(50)))
            }
        }
        // The table's times in one unit, as the step tables'.
        let unit = TimeUnit.of(steps.map(\.p50))
        lines += [
            "| Group | Step | \(unit.heading("p50")) | p50 (cu) |" + (withRounds ? " Rounds: min – max (cu) |" : ""),
            "|:--|:--|--:|--:|" + (withRounds ? "--:|" : ""),
        ]
        for (group, step, p50) in steps {
            var row =
                "| \(Self.cell(Self.label(group.key))) | \(Self.cell(step.name)) | \(unit.format(p50))"
                + " | \(Numbers.fixed(p50 / median.unit, 4)) |"
            if withRounds {
                let values = result.rounds.compactMap { $0.calibrated(group.key, step.name) }
                row +=
                    values.isEmpty
                    ? " — |" : " \(Numbers.fixed(values.min()!, 4)) – \(Numbers.fixed(values.max()!, 4)) |"
            }
            lines.append(row)
        }
        return lines + [""]
    }

    /// The run's host; for a merge of shards on several hosts, each of them, and whose the
    /// machine rows below are (the first shard's).
    static func hosts(_ result: RunResult) -> String {
        let first = result.metadata.machine.hostname
        var hosts = [first]
        for host in (result.metadata.shardWindows ?? []).map(\.host) + (result.metadata.failedShards ?? []).map(\.host)
        where !hosts.contains(host) {
            hosts.append(host)
        }
        guard hosts.count > 1 else { return first }
        return hosts.joined(separator: ", ") + " (the shards' hosts; the rows below are \(first)'s)"
    }

    /// The Summary section.
    static func summary(_ result: RunResult) -> [String] {
        let metadata = result.metadata
        let machine = metadata.machine
        let providers = metadata.providers.map { "\($0.name) (\($0.version))" }.joined(separator: ", ")
        var rows: [(String, String)] = [
            ("Started", Self.utc(metadata.startedAt)),
            (
                "Duration",
                "\(TimeSpan.format(nanoseconds: Double(result.totalNanoseconds))) total, "
                    + "\(TimeSpan.format(nanoseconds: Double(result.measuredNanoseconds))) measured"
            ),
            ("Build", metadata.build),
            ("Host", Self.hosts(result)),
            ("CPU", machine.cpu),
            ("Cores", String(machine.cores)),
            ("Memory", Numbers.fixed(Double(machine.memoryBytes) / 1_073_741_824, 1) + " GiB"),
            ("OS", machine.os),
            ("Kernel", machine.kernel),
            ("Providers", providers.isEmpty ? "—" : providers),
            ("Transport", metadata.transport),
            ("Clients", Numbers.integer(metadata.clients) + (metadata.shard.map { " (shard \($0))" } ?? "")),
            ("Load", metadata.load),
            ("Iterations", Self.iterations(result) + ", plus \(Numbers.integer(result.warmupIterations)) warm-up"),
            ("Errors", Self.errors(result.errorCount, result.errorsByKind, messages: result.errorMessagesByKind)),
        ]
        // Each row's text as `cell` shows it, once: the rows below are Markdown already.
        rows = rows.map { ($0.0, Self.cell($0.1)) }
        rows.append(("Deadline", result.stoppedByDeadline ? "⚠️ **stopped the run early**" : "not reached"))
        rows += Self.provenance(metadata)
        if let bound = PrimitiveBound(result) {
            rows.append(
                (
                    "Primitive bound",
                    "\(Numbers.fixed(bound.achieved, 1)) exchanges/s = **\(Numbers.fixed(bound.efficiency * 100, 1))%** of"
                        + " \(Numbers.fixed(bound.bound, 1))/s, the most \(bound.lanes) lane\(bound.lanes == 1 ? "" : "s") could do"
                        + " spending \(TimeSpan.format(nanoseconds: bound.primitiveNanoseconds)) per exchange in primitives and nothing else"
                )
            )
        }
        rows += Self.cpuRows(result).map { ($0.0, Self.cell($0.1)) }
        if let serverSide = metadata.serverSide { rows.append(("Server side", Self.cell(serverSide))) }
        if let server = metadata.serverMachine {
            rows.append(
                ("Server host", Self.cell("\(server.hostname): \(server.cpu), \(server.cores) cores, \(server.kernel)"))
            )
        }
        if let file = metadata.scenarioFile { rows.append(("Scenario file", Self.code(file))) }
        if !metadata.command.isEmpty { rows.append(("Command", Self.code(metadata.command))) }
        let missed = result.thresholds.filter { !$0.passed }.count
        var outcome = result.passed ? "✅ passed" : "❌ failed"
        if missed > 0 { outcome += " (\(missed) of \(result.thresholds.count) thresholds missed)" }
        rows.append(("Outcome", outcome))
        return ["## Summary", "", "| | |", "|:--|:--|"] + rows.map { "| \($0.0) | \($0.1) |" } + [""]
    }

    /// Which lab made the run, its id and the user's tags, for the Summary (none for
    /// documents from before runs said).
    static func provenance(_ metadata: RunMetadata) -> [(String, String)] {
        var rows: [(String, String)] = []
        if let lab = metadata.lab { rows.append(("Lab", Self.cell(lab.summary))) }
        if let id = metadata.runId { rows.append(("Run id", Self.code(id))) }
        if let tags = metadata.tags, !tags.isEmpty {
            rows.append(
                (
                    "Tags",
                    tags.sorted { $0.key < $1.key }.map { Self.code("\($0.key)=\($0.value)") }.joined(separator: ", ")
                )
            )
        }
        return rows
    }

    /// The Thresholds section.
    private static func thresholds(_ result: RunResult) -> [String] {
        guard !result.thresholds.isEmpty else { return ["## Thresholds", "", "No thresholds.", ""] }
        var lines = ["## Thresholds", "", "| Metric | Condition | Observed | Outcome |", "|:--|:--|--:|:--|"]
        for threshold in result.thresholds {
            let cells = [
                Self.code(threshold.metric), Self.cell(threshold.condition), Self.cell(threshold.observed),
                threshold.passed ? "✅ met" : "❌ missed",
            ]
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        return lines + [""]
    }

    /// One group's heading, notes and table of steps, in the unit its p50s choose (`TimeUnit`).
    private static func table(_ result: RunResult, _ group: GroupResult) -> [String] {
        let key = group.key
        var lines = ["### " + Self.cell((Self.suiteAndProvider(key) + [key.transport]).joined(separator: " · ")), ""]
        var notes: [String] = []
        if group.flowKind != key.flow { notes.append("Flow plugin \(Self.code(group.flowKind)).") }
        if group.insecure { notes.append("⚠️ insecure (kept for fidelity only)") }
        if group.errorCount > 0 {
            notes.append(
                "Errors: \(Self.cell(Self.errors(group.errorCount, group.errors, messages: group.errorMessages)))."
            )
        }
        for note in notes { lines += [note, ""] }
        let rows = result.rows(of: group)
        let unit = TimeUnit.of(rows.map(\.statistics.p50))
        let headers =
            ["Step", "Count", "Errors"] + ["Min", "p50", "p90", "p99", "p99.9", "Max", "Mean"].map(unit.heading)
            + ["ops/s"]
        lines.append("| " + headers.joined(separator: " | ") + " |")
        lines.append("|:--|" + String(repeating: "--:|", count: headers.count - 1))
        for row in rows {
            let figures = row.statistics
            let times = [figures.min, figures.p50, figures.p90, figures.p99, figures.p999, figures.max, figures.mean]
                .map(unit.format)
            let cells =
                [Self.cell(row.step.name), Numbers.integer(figures.count), Numbers.integer(figures.errors)] + times
                + [Numbers.fixed(figures.opsPerSecond, 1, grouped: true)]
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        lines.append("")
        lines += Self.preemption(
            group,
            rows: rows.map(\.step),
            unit: unit,
            interrupts: result.metadata.interruptsCounted
        )
        lines += Self.counts(result, group, rows: rows.map(\.step))
        return lines
    }

    /// The samples the scheduler interrupted, and the percentiles without them; nothing for a
    /// group without details (a server's own report, a document from before they were kept,
    /// a run that did not read its steps' usage: `report.stepUsage`).
    /// `interrupts`: whether a sample's interrupts were counted (nil: not said, an older document).
    /// In `unit`, the group's table's: the same steps' times.
    private static func preemption(_ group: GroupResult, rows: [Step], unit: TimeUnit, interrupts: Bool?) -> [String] {
        let steps = rows.filter { step in
            group.details[step].map { $0.preempted + $0.unpreempted.totalCount > 0 || $0.cpu != nil } ?? false
        }
        guard !steps.isEmpty else { return [] }
        let interrupted = interrupts == true ? ", took an interrupt (the scheduler's tick, a device's)," : ""
        let uncounted =
            interrupts == false
            ? " Interrupts were not counted (reading the kernel's tracepoints needs root): a sample that took one is"
                + " not marked." : ""
        var lines = [
            "Beside the time: the share of samples preempted (the step's thread switched out\(interrupted) or off its"
                + " CPU for over 100 µs; for the exchange, any thread of this process switched out), the percentiles"
                + " of the others, and the thread's CPU time." + uncounted,
            "",
            "| Step | Preempted | "
                + ["p50", "p99", "p99.9", "CPU p50", "CPU p99"].map(unit.heading).joined(separator: " | ") + " |",
            "|:--|--:|--:|--:|--:|--:|--:|",
        ]
        func time(_ nanoseconds: UInt64) -> String { unit.format(Double(nanoseconds)) }
        for step in steps {
            guard let detail = group.details[step] else { continue }
            let total = detail.preempted + detail.unpreempted.totalCount
            let share = total == 0 ? 0 : 100 * Double(detail.preempted) / Double(total)
            let kept = detail.unpreempted
            let times =
                kept.totalCount == 0
                ? ["—", "—", "—"]
                : [0.5, 0.99, 0.999].map { time(kept.valueAtPercentile($0 * 100)) }
            let cpu =
                detail.cpu.map { [time($0.valueAtPercentile(50)), time($0.valueAtPercentile(99))] } ?? ["—", "—"]
            let cells =
                [Self.cell(step.name), "\(Numbers.fixed(share, 1))% of \(Numbers.integer(total))"] + times + cpu
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        return lines + [""]
    }

    /// A counted run's work per step: the median over the samples and how far they spread.
    private static func counts(_ result: RunResult, _ group: GroupResult, rows: [Step]) -> [String] {
        let counted = rows.compactMap { step in group.details[step]?.counts.map { (step, $0) } }
        guard !counted.isEmpty else { return [] }
        var lines = [
            "Counted by \(Self.cell(result.metadata.counter ?? "callgrind")), per sample: the same in every run of the same"
                + " build to a few hundred instructions (the heap's layout), but for work that depends on random keys"
                + " (docs/performance.md, \"Counted steps and the regression gate\").",
            "",
            "| Step | Samples | Instructions p50 | Min | Max | Spread p10–p90 | Allocations p50 |",
            "|:--|--:|--:|--:|--:|--:|--:|",
        ]
        for (step, counts) in counted {
            let cells = [
                Self.cell(step.name), Numbers.integer(counts.instructions.count),
                Numbers.integer(counts.medianInstructions ?? 0), Numbers.integer(counts.instructions.min() ?? 0),
                Numbers.integer(counts.instructions.max() ?? 0),
                Numbers.fixed(100 * (counts.centralSpread ?? 0), 2) + "%",
                Numbers.integer(counts.medianAllocations ?? 0),
            ]
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        return lines + [""]
    }

    /// The Outcomes section: a row per group that counted outcomes, a column per outcome name
    /// (sorted), `—` where a group never counted that one; nothing when no group counted any.
    static func outcomes(_ result: RunResult) -> [String] {
        let groups = result.groups.filter { !$0.outcomes.isEmpty }
        guard !groups.isEmpty else { return [] }
        let names = Set(groups.flatMap(\.outcomes.keys)).sorted()
        let headers = ["Flow", "Suite", "Provider", "Transport"] + names.map(Self.cell)
        var lines = [
            "## Outcomes", "",
            "What the flows counted: in measured iterations (failed ones included) and in set-up, not in warm-up.", "",
            "| " + headers.joined(separator: " | ") + " |",
            "|:--|:--|:--|:--|" + String(repeating: "--:|", count: names.count),
        ]
        for group in groups {
            let key = group.key
            let cells =
                [key.flow, key.suite, key.provider, key.transport].map(Self.cell)
                + names.map { name in group.outcomes[name].map { Numbers.integer($0) } ?? "—" }
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        return lines + [""]
    }
}
