public import Foundation
import LabCharts
import LabCore
import LabResults

/// Writes a `RegressionCheck`: `check.md`, `check.csv`, and a table for the terminal.
public struct CheckReport: Sendable {
    /// The markdown file.
    public static let markdownName = "check.md"
    /// The CSV file.
    public static let csvName = "check.csv"
    /// The CSV header: one row per group and step.
    public static let columns = [
        "flow", "suite", "provider", "transport", "step", "baseline_cu", "run_cu", "ratio", "p_value",
        "rounds_baseline", "rounds_run", "threshold", "verdict",
    ]

    /// What to write.
    public var check: RegressionCheck
    /// The baseline's and the run's labels.
    public var labels: (baseline: String, run: String)

    /// A report of `check`.
    public init(_ check: RegressionCheck, baseline: String, run: String) {
        self.check = check
        self.labels = (baseline, run)
    }

    /// Writes both files into `directory`; returns their URLs.
    public func write(to directory: URL) throws -> [URL] {
        try Self.write(markdown: self.markdown(), csv: self.csv(), to: directory)
    }

    /// Writes `check.md` and `check.csv` into `directory` (made if missing); returns their URLs.
    static func write(markdown: String, csv: String, to directory: URL) throws -> [URL] {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw LabError(.storage, "Cannot create \(directory.path)", cause: UnderlyingError(describing: error))
        }
        // The same, as one page to open.
        let page = MarkdownPage.html(markdown: markdown, title: "Check — crypto-lab", images: [:])
        return try [(Self.markdownName, markdown), (Self.csvName, csv), (MarkdownPage.fileName, page)].map {
            name,
            text in
            let url = directory.appendingPathComponent(name)
            try writeText(text, to: url)
            return url
        }
    }

    /// One line: the verdict in words.
    public func summary() -> String {
        let regressions = self.check.regressions
        let judged = self.check.rows.filter { $0.verdict != .tooFewRounds }.count
        guard !regressions.isEmpty else {
            return
                "No regression in \(judged) steps (threshold +\(Self.percent(self.check.threshold)); +\(Self.percent(self.check.shortThreshold)) under \(TimeSpan.trimmed(self.check.shortStep)) cu; wider where the baselines' processes spread; α = \(self.check.alpha))."
        }
        return "REGRESSION in \(regressions.count) of \(judged) steps: "
            + regressions.map { "\(Self.label($0)) ×\(Numbers.fixed($0.ratio, 3))" }.joined(separator: ", ")
    }

    /// The terminal table.
    public func terminal() -> String {
        let width = max(24, self.check.rows.map { Self.label($0).count }.max() ?? 0) + 2
        var lines = ["\(self.labels.run) vs \(self.labels.baseline) (baseline), in calibration units:"]
        lines.append(
            "  " + "step".padded(width) + "baseline".padded(11) + "run".padded(11) + "ratio".padded(9)
                + "p".padded(10) + "verdict"
        )
        for row in self.check.rows {
            lines.append(
                "  " + Self.label(row).padded(width) + Numbers.fixed(row.baseline, 4).padded(11)
                    + Numbers.fixed(row.run, 4).padded(11) + ("×" + Numbers.fixed(row.ratio, 3)).padded(9)
                    + String(format: "%.2g", row.pValue).padded(10)
                    + (row.verdict == .slower || row.verdict == .faster
                        ? row.verdict.rawValue.uppercased() : Self.verdict(row))
            )
        }
        lines += self.check.notes.map { "  note: \($0)" }
        lines.append(self.summary())
        return lines.joined(separator: "\n")
    }

    /// `check.md`.
    public func markdown() -> String {
        let check = self.check
        var lines = [
            "# Regression check — crypto-lab", "",
            "**\(MarkdownReporter.cell(self.labels.run))** against the baseline **\(MarkdownReporter.cell(self.labels.baseline))**.",
            "",
            "Each round of a run gives every step one median, divided by the calibration unit the lab timed just before that round in the same process (the geometric mean of an RSA-2048 signature and an AES-128-CBC encryption of 16 KiB). A step **regressed** when its rounds are significantly slower than the baseline's (one-sided Mann–Whitney U, p < \(check.alpha)) *and* the estimated ratio (Hodges–Lehmann: the median of all run÷baseline ratios of rounds) exceeds ×\(Numbers.fixed(1 + check.threshold, 2)), or ×\(Numbers.fixed(1 + check.shortThreshold, 2)) for a step shorter than \(TimeSpan.trimmed(check.shortStep)) cu in the baseline (short steps move more between builds of the same code), or twice the largest offset one baseline process had from the pooled baselines, whichever is largest (the Threshold column).",
            "", "**\(self.summary())**", "",
            "| Group | Step | Baseline (cu) | Run (cu) | Ratio | p | Rounds | Threshold | Verdict |",
            "|:--|:--|--:|--:|--:|--:|--:|--:|:--|",
        ]
        for row in check.rows {
            let verdict =
                row.verdict == .slower ? "🔴 **slower**" : row.verdict == .faster ? "🟢 faster" : Self.verdict(row)
            lines.append(
                "| \(MarkdownReporter.cell(row.key.description)) | \(MarkdownReporter.cell(row.step)) | \(Numbers.fixed(row.baseline, 4)) | \(Numbers.fixed(row.run, 4)) | ×\(Numbers.fixed(row.ratio, 3)) | \(String(format: "%.2g", row.pValue)) | \(row.rounds.baseline) / \(row.rounds.run) | +\(Self.percent(row.threshold)) | \(verdict) |"
            )
        }
        if !check.notes.isEmpty {
            lines += ["", "## Notes", ""] + check.notes.map { "- \(MarkdownReporter.cell($0))" }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `check.csv`.
    public func csv() -> String {
        var lines = [Self.columns.joined(separator: ",")]
        for row in self.check.rows {
            let fields =
                Self.keyFields(row.key, step: row.step)
                + [
                    Numbers.fixed(row.baseline, 6), Numbers.fixed(row.run, 6), Numbers.fixed(row.ratio, 4),
                    String(format: "%.3g", row.pValue), String(row.rounds.baseline), String(row.rounds.run),
                    Numbers.fixed(row.threshold, 4), CSVReporter.quoted(row.verdict.rawValue),
                ]
            lines.append(fields.joined(separator: ","))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A verdict that is not a change, in words that say what the test found: "×1.204,
    /// significant, within the noise allowance of ±25%" rather than "no significant change".
    static func verdict(_ row: RegressionCheck.Row) -> String {
        switch row.verdict {
        case .withinAllowance:
            "×\(Numbers.fixed(row.ratio, 3)), significant, within the noise allowance of ±\(Self.percent(row.threshold))"
        default: row.verdict.rawValue
        }
    }

    /// The CSV's first columns, quoted: flow, suite, provider, transport, step.
    static func keyFields(_ key: GroupKey, step: String) -> [String] {
        [key.flow, key.suite, key.provider, key.transport, step].map(CSVReporter.quoted)
    }

    static func label(_ row: RegressionCheck.Row) -> String {
        "\(row.key.flow) \(row.key.suite) \(row.key.provider) · \(row.step)"
    }

    static func percent(_ fraction: Double) -> String {
        Numbers.fixed(fraction * 100, fraction * 100 == (fraction * 100).rounded() ? 0 : 1) + "%"
    }
}
