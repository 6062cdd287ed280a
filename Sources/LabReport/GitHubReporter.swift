public import Foundation
import LabCharts
import LabCore
public import LabResults
import LabScenario

/// For GitHub Actions: writes `github-summary.md` (the outcome, the thresholds and each
/// group's exchange figures, in GitHub's markdown) and appends it to the job's summary page
/// when `$GITHUB_STEP_SUMMARY` names one; prints an `::error` workflow command for each
/// missed threshold, which GitHub shows as an annotation on the run.
public struct GitHubReporter: Reporter {
    /// `github`.
    public static let name = "github"
    /// The file it writes.
    public static let fileName = "github-summary.md"
    /// The variable GitHub Actions sets to the job summary's file.
    public static let summaryVariable = "GITHUB_STEP_SUMMARY"

    /// A GitHub reporter; it has no options.
    public init(options: ReportOptions) {}

    public func write(_ result: RunResult, to directory: URL) throws -> [URL] {
        let url = directory.appendingPathComponent(Self.fileName)
        let summary = Self.summary(result)
        try writeText(summary, to: url)
        if let path = ProcessInfo.processInfo.environment[Self.summaryVariable], !path.isEmpty {
            try Self.append(summary, to: URL(fileURLWithPath: path))
        }
        for line in VerdictSuite(run: result).annotations() { print(line) }
        return [url]
    }

    /// The summary's markdown.
    static func summary(_ result: RunResult) -> String {
        let metadata = result.metadata
        var lines = [
            "### crypto-lab: \(MarkdownReporter.cell(metadata.scenario)): \(result.passed ? "✅ passed" : "❌ failed")",
            "",
        ]
        var facts = ["\(Numbers.integer(result.completedIterations)) iterations", "\(result.errorCount) errors"]
        if let lab = metadata.lab { facts.append("lab \(MarkdownReporter.cell(lab.summary))") }
        if let id = metadata.runId { facts.append("run \(MarkdownReporter.code(id))") }
        lines += [facts.joined(separator: " · "), ""]
        if result.stoppedByDeadline { lines += ["⚠️ The deadline stopped the run early.", ""] }
        if !result.thresholds.isEmpty {
            lines += ["| threshold | observed | |", "|:--|--:|:--|"]
            for outcome in result.thresholds {
                let verdict = outcome.passed ? "✅ met" : "❌ **missed**"
                lines.append(
                    "| \(MarkdownReporter.code("\(outcome.metric) \(outcome.condition)")) | \(MarkdownReporter.cell(outcome.observed)) | \(verdict) |"
                )
            }
            lines.append("")
        }
        let groups = result.groups.compactMap { group in result.throughputRow(of: group).map { (group, $0) } }
        if !groups.isEmpty {
            let unit = TimeUnit.of(groups.map(\.1.statistics.p50))
            lines += [
                "| group | step | \(unit.heading("p50")) | \(unit.heading("p99")) | ops/s | errors | bytes out / in |",
                "|:--|:--|--:|--:|--:|--:|--:|",
            ]
            for (group, row) in groups {
                let figures = row.statistics
                let bytes = group.bytesPerIteration.map {
                    "\(ByteSize.format($0.sent)) / \(ByteSize.format($0.received))"
                }
                lines.append(
                    "| \(MarkdownReporter.cell(group.key.description)) | \(MarkdownReporter.cell(row.step.name)) | "
                        + "\(unit.format(figures.p50)) | \(unit.format(figures.p99)) | "
                        + "\(Numbers.fixed(figures.opsPerSecond, 1)) | \(group.errorCount) | \(bytes ?? "—") |"
                )
            }
            lines.append("")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Appends `text` to the file at `url`, creating it if needed.
    static func append(_ text: String, to url: URL) throws {
        do {
            if !FileManager.default.fileExists(atPath: url.path) {
                try Data().write(to: url)
            }
            let handle = try FileHandle(forWritingTo: url)
            defer { try? handle.close() }
            try handle.seekToEnd()
            try handle.write(contentsOf: Data(text.utf8))
        } catch {
            throw LabError(.storage, "Cannot append to \(url.path): \(FileReason.describe(error))")
        }
    }
}
