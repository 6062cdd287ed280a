public import Foundation
public import LabAnalysis
import LabCharts
import LabCore
import LabResults

/// How a regression gate's report reads: its title and unit, its own columns in each format,
/// and its sentences. The writers (`GateReport`, `VerdictSuite(gate:)`) are the same for
/// every gate; a gate supplies only these.
public protocol GateFormat: RegressionGate {
    /// The markdown page's title: `Regression check`.
    static var title: String { get }
    /// What the terminal table's figures are in: `calibration units`.
    static var unit: String { get }
    /// What the summary counts: `steps`, `counted steps`.
    static var stepsNoun: String { get }
    /// The terminal table's own columns, between the step and the verdict, with their widths.
    static var terminalColumns: [(name: String, width: Int)] { get }
    /// The markdown table's own column headers, between the step and the verdict.
    static var markdownColumns: [String] { get }
    /// The CSV's own columns, between the step and the verdict.
    static var csvColumns: [String] { get }

    /// The paragraph that says how the gate decides, with its settings.
    var method: String { get }
    /// What the summary says in brackets when nothing regressed: the gate's settings.
    var allowance: String { get }
    /// A regressed row in the summary, after its label: `×1.150`.
    func summaryFigure(_ row: GateRow<Verdict, Figures>) -> String
    /// The row's own cells in the terminal table.
    func terminalCells(_ row: GateRow<Verdict, Figures>) -> [String]
    /// The row's own cells in the markdown table.
    func markdownCells(_ row: GateRow<Verdict, Figures>) -> [String]
    /// The row's own CSV fields.
    func csvFields(_ row: GateRow<Verdict, Figures>) -> [String]
    /// A verdict that is not a change, in words.
    func plainVerdict(_ row: GateRow<Verdict, Figures>) -> String
    /// Why a regressed row fails, in one line and in full, for CI.
    func failure(_ row: GateRow<Verdict, Figures>) -> (message: String, details: String)
}

/// `lab check`'s report of any gate: `check.md`, `check.csv`, `check.html`, and a table for
/// the terminal.
public struct GateReport<Gate: GateFormat>: Sendable {
    /// The markdown file.
    public static var markdownName: String { "check.md" }
    /// The CSV file.
    public static var csvName: String { "check.csv" }
    /// The page: check.md as HTML. Not `report.html`: a check writes into its run's folder by
    /// default, beside the run's own report.html.
    public static var pageName: String { "check.html" }
    /// The CSV header: one row per group and step.
    public static var columns: [String] {
        ["flow", "suite", "provider", "transport", "step"] + Gate.csvColumns + ["verdict"]
    }

    /// What to write.
    public var check: Gate
    /// The baseline's and the run's labels.
    public var labels: (baseline: String, run: String)

    /// A report of `check`.
    public init(_ check: Gate, baseline: String, run: String) {
        self.check = check
        self.labels = (baseline, run)
    }

    /// Writes `check.md`, `check.csv` and the same as one page into `directory` (made if
    /// missing); returns their URLs.
    public func write(to directory: URL) throws -> [URL] {
        let markdown = self.markdown()
        let page = MarkdownPage.html(markdown: markdown, title: "Check — crypto-lab", images: [:])
        let files = [(Self.markdownName, markdown), (Self.csvName, self.csv()), (Self.pageName, page)]
        return try writeTexts(files, to: directory)
    }

    /// One line: the verdict in words.
    public func summary() -> String {
        let regressions = self.check.regressions
        let judged = self.check.judgedCount
        guard !regressions.isEmpty else {
            return "No regression in \(judged) \(Gate.stepsNoun) (\(self.check.allowance))."
        }
        return "REGRESSION in \(regressions.count) of \(judged) \(Gate.stepsNoun): "
            + regressions.map { "\($0.label) \(self.check.summaryFigure($0))" }.joined(separator: ", ")
    }

    /// The terminal table.
    public func terminal() -> String {
        let width = max(24, self.check.rows.map(\.label.count).max() ?? 0) + 2
        let widths = Gate.terminalColumns.map(\.width)
        var lines = ["\(self.labels.run) vs \(self.labels.baseline) (baseline), in \(Gate.unit):"]
        lines.append("  " + "step".padded(width) + Gate.terminalColumns.map { $0.name.padded($0.width) }.joined() + "verdict")
        for row in self.check.rows {
            let cells = zip(self.check.terminalCells(row), widths).map { $0.padded($1) }.joined()
            let verdict =
                row.verdict.isRegression || row.verdict.isImprovement
                ? row.verdict.rawValue.uppercased() : self.check.plainVerdict(row)
            lines.append("  " + row.label.padded(width) + cells + verdict)
        }
        lines += self.check.notes.map { "  note: \($0)" }
        lines.append(self.summary())
        return lines.joined(separator: "\n")
    }

    /// `check.md`.
    public func markdown() -> String {
        let columns = Gate.markdownColumns
        var lines = [
            "# \(Gate.title) — crypto-lab", "",
            "**\(MarkdownReporter.cell(self.labels.run))** against the baseline **\(MarkdownReporter.cell(self.labels.baseline))**.",
            "", self.check.method, "", "**\(self.summary())**", "",
            "| Group | Step | " + columns.joined(separator: " | ") + " | Verdict |",
            "|:--|:--|" + String(repeating: "--:|", count: columns.count) + ":--|",
        ]
        for row in self.check.rows {
            let verdict =
                row.verdict.isRegression
                ? "🔴 **\(row.verdict.rawValue)**"
                : row.verdict.isImprovement ? "🟢 \(row.verdict.rawValue)" : self.check.plainVerdict(row)
            let cells =
                [MarkdownReporter.cell(row.key.description), MarkdownReporter.cell(row.step)]
                + self.check.markdownCells(row) + [verdict]
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        if !self.check.notes.isEmpty {
            lines += ["", "## Notes", ""] + self.check.notes.map { "- \(MarkdownReporter.cell($0))" }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `check.csv`.
    public func csv() -> String {
        var lines = [Self.columns.joined(separator: ",")]
        for row in self.check.rows {
            let key = [row.key.flow, row.key.suite, row.key.provider, row.key.transport, row.step]
            let fields =
                key.map(CSVReporter.quoted) + self.check.csvFields(row) + [CSVReporter.quoted(row.verdict.rawValue)]
            lines.append(fields.joined(separator: ","))
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// `lab check` of runs with rounds.
public typealias CheckReport = GateReport<RegressionCheck>

/// `lab check` of counted runs.
public typealias CountedCheckReport = GateReport<CountedCheck>
