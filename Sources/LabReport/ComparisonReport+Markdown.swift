import Foundation
import Histogram
import LabAnalysis
import LabCharts
import LabCore
import LabResults

/// `comparison.md`: the method, the runs, the verdicts in sentences, and a table per group.
extension ComparisonReport {

    /// `comparison.md`.
    public func markdown() -> String {
        var lines = ["# Comparison — crypto-lab", ""]
        lines += self.differencesWarning() + self.method() + self.runsTable() + self.verdicts()
        var keys: [GroupKey] = []
        for row in self.comparison.rows where !keys.contains(row.key) { keys.append(row.key) }
        for key in keys { lines += self.groupTable(key) }
        lines += ["## Charts", ""]
        for (index, candidate) in self.comparison.candidates.enumerated() {
            let title = "p50 ratio per step: \(MarkdownReporter.prose(candidate.label)) ÷ \(MarkdownReporter.prose(self.comparison.baseline.label))"
            lines += ["![\(title)](\(self.chartName(index)))", ""]
        }
        while lines.last == "" { lines.removeLast() }
        return lines.joined(separator: "\n") + "\n"
    }

    /// What is compared, and how a verdict is reached.
    func method() -> [String] {
        let comparison = self.comparison
        var lines = [
            "Each step of **\(MarkdownReporter.prose(comparison.baseline.label))** (the baseline) against "
                + comparison.candidates.map { "**\(MarkdownReporter.prose($0.label))**" }.joined(separator: ", ")
                + ". Ratios are candidate ÷ baseline: above 1 is slower for p50 and p99, faster for ops/s.",
            "",
            "Three figures are judged: a step's **p50** moves when the two runs' samples differ significantly"
                + " (Mann–Whitney U over the whole histograms, p < \(Self.decimal(comparison.alpha)))"
                + " *and* it moved by more than its noise floor: ±\(Self.percent(comparison.threshold)),"
                + " or ±\(Self.percent(comparison.shortThreshold)) for a step under"
                + " \(Self.time(comparison.shortStep)) in the baseline (two runs of the same build differ by a few"
                + " percent on a shared machine, short steps by more), and the whole distribution shifted beyond that"
                + " floor the same way (the Hodges–Lehmann estimate: a p50 jumps between the modes of a step that has"
                + " several); its **p99** moves when the share of samples"
                + " above the pooled p99 differs significantly (p < \(Self.decimal(comparison.alpha))) and it moved by"
                + " more than twice the floor (with \(comparison.tailSamples) samples or more on each side; not for a"
                + " step compared on CPU time); a group's **ops/s** (on its `exchange` row) moves when its rates over"
                + " the runs' whole intervals differ significantly (the same U test) and it changed by more than"
                + " ±\(Self.percent(comparison.threshold)), and is not judged when a run has fewer than"
                + " \(Comparison.rateIntervals) whole intervals, the queue set it, or the machine changed."
                + " A step is **slower** when any figure moved the slow way,"
                + " **faster** when some moved the fast way and none the slow way; the verdict names them. Steps with"
                + " fewer than \(comparison.minimumSamples) samples get no verdict.",
            "",
        ]
        if comparison.commonShare <= 1 {
            lines += [
                "When at least \(Self.percent(comparison.commonShare)) of a run's steps moved together (each within"
                    + " its floor of their median p50 ratio), the run moved as a whole — the machine's state, or a"
                    + " change that touches everything: that median is its **common factor**, a verdict of its own,"
                    + " and each step is judged against it (*vs run*: p50 ratio ÷ the factor).",
                "",
            ]
        }
        return lines
    }

    /// `## Runs`: one row per run, the baseline first.
    func runsTable() -> [String] {
        var lines = [
            "## Runs", "", "| Run | Scenario | Started | Host | Transport | Clients | Build | Iterations | Errors |",
            "|:--|:--|:--|:--|:--|--:|:--|--:|--:|",
        ]
        for (index, run) in ([self.comparison.baseline] + self.comparison.candidates).enumerated() {
            let metadata = run.result.metadata
            let cells = [
                (index == 0 ? "baseline: " : "") + MarkdownReporter.prose(run.label),
                MarkdownReporter.prose(metadata.scenario), MarkdownReporter.utc(metadata.startedAt),
                MarkdownReporter.prose(metadata.machine.hostname), MarkdownReporter.prose(metadata.transport),
                Numbers.integer(metadata.clients) + (metadata.shard.map { " (shard \($0))" } ?? ""),
                metadata.build, Numbers.integer(run.result.completedIterations), Numbers.integer(run.result.errorCount),
            ]
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        return lines + [""]
    }

    /// A warning first when a candidate's run differs from the baseline's in more than its
    /// code: another scenario, transport, load model, host, cores or build.
    func differencesWarning() -> [String] {
        let comparison = self.comparison
        var lines: [String] = []
        for index in comparison.candidates.indices {
            let found = comparison.differences(candidate: index)
            guard !found.isEmpty else { continue }
            lines.append(
                "> ⚠️ **Not like for like.** **\(MarkdownReporter.prose(comparison.candidates[index].label))** differs from the"
                    + " baseline in more than its code: " + found.map(MarkdownReporter.prose).joined(separator: "; ")
                    + ". Only the groups both have are compared, and any of these differences can explain a verdict."
            )
            lines.append("")
        }
        return lines
    }

    /// What the verdicts compare, when it is not the time as measured: one paragraph.
    func basisParagraph() -> [String] {
        let conditions = self.comparison.conditions
        guard !conditions.reasons.isEmpty else { return [] }
        let what =
            switch (conditions.basis, conditions.exchangeUnjudged) {
            case (.work, true):
                "the verdicts compare the work: each step's CPU time and each exchange's (`exchange.work`), not the exchange's time, which is not judged"
            case (.work, false):
                "the steps are compared on their CPU time and each exchange's work (`exchange.work`) beside the exchange's time"
            case (.time, true):
                "the exchange's time and ops/s are not judged, and no run read its steps' CPU time to judge the work instead"
            case (.time, false): "the exchange's time is judged with its waiting"
            }
        let reasons = conditions.reasons.map(MarkdownReporter.prose).joined(separator: "; ")
        let remedy = conditions.remedy.map { " " + MarkdownReporter.capitalized(MarkdownReporter.prose($0)) + "." } ?? ""
        return ["**What is judged.** \(MarkdownReporter.capitalized(reasons)); so \(what).\(remedy)", ""]
    }

    /// `## Verdicts`: one item per candidate, each change as a sentence that names the slower
    /// side first.
    func verdicts() -> [String] {
        let comparison = self.comparison
        var lines = ["## Verdicts", ""] + self.basisParagraph()
        for (index, candidate) in comparison.candidates.enumerated() {
            var name = "- **\(MarkdownReporter.prose(candidate.label))**: "
            if let changed = comparison.machineChanged[index] {
                guard comparison.judgesDespiteMachineChange else {
                    lines.append(
                        name + "⚠️ **not judged**: \(MarkdownReporter.prose(changed)). Run both on the same quiet machine,"
                            + " or interleave parts of each and merge them (`lab merge`); `--despite-machine-change`"
                            + " judges them anyway."
                    )
                    continue
                }
                name += "⚠️ \(MarkdownReporter.prose(changed)); judged anyway (`--despite-machine-change`): "
            }
            let verdicts = comparison.rows.map { $0.cells[index].verdict }
            let judged = verdicts.filter { $0 == .noChange || $0.isChange }.count
            let slower = verdicts.filter { $0 == .slower }.count
            let faster = verdicts.filter { $0 == .faster }.count
            var text = name
            if slower + faster == 0 {
                text += "no significant change in any of the \(judged) steps judged"
            } else {
                text += [slower > 0 ? "🔴 **\(slower) slower**" : nil, faster > 0 ? "🟢 **\(faster) faster**" : nil]
                    .compactMap { $0 }.joined(separator: ", ") + " of the \(judged) steps judged"
            }
            text += Self.commonText(comparison.common[index]) + "."
            lines.append(text)
            for row in comparison.changes(candidate: index) {
                if let sentence = comparison.sentence(row, candidate: index) {
                    lines.append("  - \(MarkdownReporter.prose(sentence)) (p \(Self.pValue(row.cells[index].pValue)))")
                }
            }
            if let note = comparison.rows.first(where: { $0.step == .exchange })?.cells[index].note,
                note.hasPrefix("ops/s not judged")
            {
                lines.append("  - \(MarkdownReporter.prose(note)).")
            }
            for (key, other) in comparison.crossTransport[index].sorted(by: { $0.key < $1.key }) {
                lines.append("  - `\(key)` matched with `\(other)` (another transport).")
            }
            for extra in self.onlyInCandidate(index) {
                lines.append("  - Only in this run: \(extra).")
            }
        }
        return lines + [""]
    }

    /// One group's table: each step's baseline figures, then each candidate's with its ratios
    /// and verdict; its times in the one unit the baseline's p50s choose (`TimeUnit`).
    func groupTable(_ key: GroupKey) -> [String] {
        let comparison = self.comparison
        var lines = [
            "## " + MarkdownReporter.prose("\(key.flow) · \(key.suite) · \(key.provider) · \(key.transport)"), "",
        ]
        let rows = comparison.rows.filter { $0.key == key }
        let unit = TimeUnit.of(rows.map(\.baseline.p50))
        let baseline = MarkdownReporter.prose(comparison.baseline.label)
        var headers = ["Step", unit.heading("\(baseline) p50"), unit.heading("p99"), "ops/s"]
        var alignment = ":--|--:|--:|--:|"
        for candidate in comparison.candidates {
            headers += [
                unit.heading("\(MarkdownReporter.prose(candidate.label)) p50"), unit.heading("p99"), "ops/s", "verdict",
            ]
            alignment += "--:|--:|--:|:--|"
        }
        lines += ["| " + headers.joined(separator: " | ") + " |", "|" + alignment]
        for row in rows {
            var cells = [
                MarkdownReporter.prose(row.step.name) + (row.measure == .cpu ? " (CPU)" : ""),
                unit.format(row.baseline.p50), unit.format(row.baseline.p99),
                Numbers.fixed(row.baseline.opsPerSecond, 1, grouped: true),
            ]
            for (index, cell) in row.cells.enumerated() {
                guard let figures = cell.statistics else {
                    cells += ["—", "—", "—", cell.verdict.rawValue]
                    continue
                }
                cells += [
                    "\(unit.format(figures.p50)) (×\(Self.ratio(cell.p50Ratio)))",
                    "\(unit.format(figures.p99)) (×\(Self.ratio(cell.p99Ratio)))",
                    "\(Numbers.fixed(figures.opsPerSecond, 1, grouped: true)) (×\(Self.ratio(cell.opsRatio)))",
                    Self.verdictText(cell, against: comparison.common[index].applies),
                ]
            }
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        return lines + [""]
    }

    /// What candidate `index` has and the baseline lacks (a `discover` step, a whole group),
    /// which the rows, taken from the baseline, do not show.
    func onlyInCandidate(_ index: Int) -> [String] {
        let comparison = self.comparison
        let matched = Dictionary(
            comparison.crossTransport[index].map { ($0.value, $0.key) },
            uniquingKeysWith: { first, _ in first }
        )
        var extras: [String] = []
        for group in comparison.candidates[index].result.groups {
            let baseKey = matched[group.key] ?? group.key
            let known = Set(comparison.rows.filter { $0.key == baseKey }.map(\.step))
            if known.isEmpty {
                extras.append("`\(group.key)` (a whole group)")
                continue
            }
            for (step, histogram) in group.orderedSteps where !known.contains(step) {
                let p50 = Self.time(Double(histogram.valueAtPercentile(50)))
                extras.append(
                    "`\(group.key.flow) \(group.key.suite) \(group.key.provider) · \(step.name)` (p50 \(p50), \(histogram.totalCount) samples)"
                )
            }
        }
        return extras
    }
}
