public import Foundation
import Histogram
public import LabAnalysis
import LabCharts
import LabCore
import LabResults

/// Writes a `Comparison`: `comparison.md` (with an SVG chart per candidate beside it),
/// `comparison.csv`, and a short table for the terminal.
public struct ComparisonReport: Sendable {
    /// The markdown file.
    public static let markdownName = "comparison.md"
    /// The CSV file.
    public static let csvName = "comparison.csv"
    /// The CSV header: one row per group, step and run (the baseline's ratios are 1).
    public static let columns = [
        "flow", "suite", "provider", "transport", "step", "run", "role", "count", "p50_us", "p99_us", "ops_per_s",
        "p50_ratio", "p99_ratio", "ops_ratio", "p_value", "verdict", "relative_ratio", "floor", "run_factor",
        "measure", "note",
    ]

    /// What to write.
    public var comparison: Comparison

    /// A report of `comparison`.
    public init(_ comparison: Comparison) {
        self.comparison = comparison
    }

    /// The chart file of candidate `index`.
    public func chartName(_ index: Int) -> String {
        "comparison-\(index + 1)-\(SVG.slug([self.comparison.candidates[index].label])).svg"
    }

    /// Writes every file into `directory`; returns their URLs.
    public func write(to directory: URL) throws -> [URL] {
        let markdown = self.markdown()
        var files = [(Self.markdownName, markdown), (Self.csvName, self.csv())]
        var charts: [String: any Chart] = [:]
        for index in self.comparison.candidates.indices {
            charts[self.chartName(index)] = self.chart(index)
            files.append((self.chartName(index), self.chart(index).render()))
        }
        // The same, as one page to open (its charts inside).
        files.append((MarkdownPage.fileName, MarkdownPage.html(markdown: markdown, title: "Comparison — crypto-lab", images: charts)))
        return try writeTexts(files, to: directory)
    }

    static func verdictText(_ cell: Comparison.Cell, against: Bool) -> String {
        let relative = against ? "×\(Self.ratio(cell.relativeRatio)) vs run, " : ""
        let p = "p \(Self.pValue(cell.pValue))"
        return switch cell.verdict {
        case .slower: "🔴 **slower**: \(cell.movesText) (\(relative)\(p))"
        case .faster: "🟢 **faster**: \(cell.movesText) (\(relative)\(p))"
        case .noChange: "no significant change" + (cell.pValue == nil ? "" : " (\(relative)\(p))")
        case .notJudged: "not judged" + (cell.note.map { ": " + MarkdownReporter.prose($0) } ?? "")
        case .tooFewSamples, .missing: cell.verdict.rawValue
        }
    }

    /// What the verdict line adds about a candidate as a whole: its common factor.
    static func commonText(_ common: Comparison.Common) -> String {
        guard common.steps >= 3 else { return "" }
        let share =
            "\(common.together) of \(common.steps) \(common.unit) within "
            + (common.unit == "steps" ? "their floor" : "half the floor") + " of it"
        guard common.applies else {
            return "; the steps moved apart (median p50 ×\(Self.ratio(common.median)), \(share)), each judged as measured"
        }
        let verdict =
            switch common.verdict {
            case .slower: "🔴 **slower as a whole**"
            case .faster: "🟢 **faster as a whole**"
            default: "as a whole within the noise floor"
            }
        return "; \(verdict): common factor ×\(Self.ratio(common.median)) (\(share)), each step judged against it"
    }

    static func time(_ nanoseconds: Double) -> String { TimeSpan.format(nanoseconds: nanoseconds) }

    static func ratio(_ value: Double?) -> String { value.map { Numbers.fixed($0, 3) } ?? "—" }

    static func percent(_ fraction: Double) -> String { TimeSpan.trimmed((fraction * 1000).rounded() / 10) + "%" }

    static func decimal(_ value: Double) -> String { TimeSpan.trimmed(value) }

    static func pValue(_ value: Double?) -> String {
        guard let value else { return "—" }
        return value < 1e-4 ? "< 0.0001" : Numbers.fixed(value, 4)
    }

    /// The terminal's table: each candidate's steps, flagged ones marked.
    public func terminal() -> String {
        let comparison = self.comparison
        var lines: [String] = []
        let width = max(24, comparison.rows.map { comparison.rowLabel($0).count + 6 }.max() ?? 0) + 2
        for (index, candidate) in comparison.candidates.enumerated() {
            lines.append("\(candidate.label) vs \(comparison.baseline.label) (baseline):")
            let found = comparison.differences(candidate: index)
            if !found.isEmpty {
                lines.append("  warning: not like for like: " + found.joined(separator: "; "))
            }
            if let changed = comparison.machineChanged[index] {
                guard comparison.judgesDespiteMachineChange else {
                    lines.append("  NOT JUDGED: \(changed)")
                    continue
                }
                lines.append("  warning: \(changed); judged anyway")
            }
            if index == 0, !comparison.conditions.reasons.isEmpty {
                lines.append(
                    "  judged on " + (comparison.conditions.basis == .work ? "work (CPU time)" : "the steps alone") + ": "
                        + comparison.conditions.reasons.joined(separator: "; ")
                )
                if let remedy = comparison.conditions.remedy { lines.append("  \(remedy)") }
            }
            let common = comparison.common[index]
            if common.applies {
                lines.append(
                    "  as a whole: ×\(Self.ratio(common.median)) (\(common.together) of \(common.steps) \(common.unit) together), "
                        + (common.verdict.isChange ? common.verdict.rawValue.uppercased() : common.verdict.rawValue)
                )
            }
            lines.append(
                "  " + "step".padded(width) + "p50 ×".padded(10) + "vs run ×".padded(10) + "p99 ×".padded(10)
                    + "ops/s ×".padded(10) + "verdict"
            )
            for row in comparison.rows {
                let cell = row.cells[index]
                lines.append(
                    "  " + (comparison.rowLabel(row) + (row.measure == .cpu ? " (CPU)" : "")).padded(width)
                        + Self.ratio(cell.p50Ratio).padded(10)
                        + Self.ratio(cell.relativeRatio).padded(10)
                        + Self.ratio(cell.p99Ratio).padded(10)
                        + Self.ratio(cell.opsRatio).padded(10)
                        + (cell.verdict.isChange
                            ? cell.verdict.rawValue.uppercased() + " (\(cell.movesText))" : cell.verdict.rawValue)
                )
            }
            for row in comparison.changes(candidate: index) {
                if let sentence = comparison.sentence(row, candidate: index) { lines.append("  " + sentence) }
            }
        }
        return lines.joined(separator: "\n")
    }

    // MARK: CSV

    /// `comparison.csv`.
    public func csv() -> String {
        let comparison = self.comparison
        var lines = [Self.columns.joined(separator: ",")]
        for row in comparison.rows {
            let key = [row.key.flow, row.key.suite, row.key.provider, row.key.transport, row.step.name]
            func line(
                _ run: String,
                _ role: String,
                _ figures: StepStatistics,
                _ cell: Comparison.Cell?,
                _ factor: Double
            ) -> String {
                let ratios = [cell?.p50Ratio ?? 1, cell?.p99Ratio ?? 1, cell?.opsRatio ?? 1].map {
                    Numbers.fixed($0, 4)
                }
                let fields =
                    (key + [run, role]).map(CSVReporter.quoted)
                    + [
                        String(figures.count), Numbers.fixed(figures.p50 / 1000, 3),
                        Numbers.fixed(figures.p99 / 1000, 3),
                        Numbers.fixed(figures.opsPerSecond, 1),
                    ] + (cell == nil ? ["1.0000", "1.0000", "1.0000"] : ratios)
                    + [
                        cell?.pValue.map { String(format: "%.3g", $0) } ?? "",
                        CSVReporter.quoted(cell?.verdict.rawValue ?? ""),
                        Numbers.fixed(cell?.relativeRatio ?? 1, 4),
                        cell.map { Numbers.fixed($0.floor, 2) } ?? "",
                        Numbers.fixed(factor, 4),
                        row.measure.rawValue,
                        CSVReporter.quoted(cell?.note ?? ""),
                    ]
                return fields.joined(separator: ",")
            }
            lines.append(line(comparison.baseline.label, "baseline", row.baseline, nil, 1))
            for (index, (candidate, cell)) in zip(comparison.candidates, row.cells).enumerated() {
                guard let figures = cell.statistics else { continue }
                lines.append(line(candidate.label, "candidate", figures, cell, comparison.common[index].factor))
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

extension String {
    /// The text left-aligned in `width` columns, with at least one space after it.
    func padded(_ width: Int) -> String {
        self.count >= width ? self + " " : self + String(repeating: " ", count: width - self.count)
    }
}
