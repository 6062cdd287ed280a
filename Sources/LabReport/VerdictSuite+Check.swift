public import Foundation
public import LabAnalysis
import LabCharts
import LabCore
import LabResults

extension VerdictSuite {
    /// A gate (`lab check`): a case per step, failed when it regressed (slower beyond its
    /// threshold, or more work than its allowance lets through); a step the gate could not
    /// judge passes.
    public init<Gate: GateFormat>(gate report: GateReport<Gate>) {
        let check = report.check
        let cases = check.rows.map { row in
            Case(name: row.label, seconds: 0, failure: row.verdict.isRegression ? check.failure(row) : nil)
        }
        self.init(check: cases, labels: report.labels, notes: check.notes)
    }

    /// A gate's suite: its cases, with the baseline's and the run's labels and the check's
    /// notes as properties.
    private init(check cases: [Case], labels: (baseline: String, run: String), notes: [String]) {
        self.init(
            name: "lab check",
            failureKind: "regression",
            cases: cases,
            properties: [("baseline", labels.baseline), ("run", labels.run)]
                + notes.enumerated().map { ("note.\($0.offset + 1)", $0.element) },
            seconds: 0
        )
    }

    /// The formats `lab check --format` writes beside check.md and check.csv.
    public static let checkFormats = ["junit", "github"]

    /// Writes a gate's or a comparison's verdicts in `formats` (`checkFormats`) into
    /// `directory`: `<prefix>-junit.xml`; for `github`, `markdown` appended to
    /// `$GITHUB_STEP_SUMMARY` when set, and an `::error` line per failed case on stdout.
    /// Returns the files written.
    public func writeCheck(
        formats: [String],
        markdown: String,
        to directory: URL?,
        prefix: String = "check"
    ) throws -> [URL] {
        var written: [URL] = []
        if formats.contains("junit"), let directory {
            let url = directory.appendingPathComponent("\(prefix)-junit.xml")
            try writeText(self.junit(), to: url)
            written.append(url)
        }
        if formats.contains("github") {
            if let path = ProcessInfo.processInfo.environment[GitHubReporter.summaryVariable], !path.isEmpty {
                try GitHubReporter.append(markdown, to: URL(fileURLWithPath: path))
            }
            for line in self.annotations() { print(line) }
        }
        return written
    }
}

extension VerdictSuite {
    /// A comparison (`lab compare`): per candidate, a case for the run as a whole and one per
    /// step, failed when slower, as `--fail-on-slower` judges.
    public init(comparison: Comparison) {
        var cases: [Case] = []
        for (index, candidate) in comparison.candidates.enumerated() {
            if let changed = comparison.machineChanged[index], comparison.isUnjudged(candidate: index) {
                // A gate does not pass on a candidate it could not judge (`lab compare` exits 3).
                cases.append(
                    Case(
                        name: "\(candidate.label): as a whole",
                        seconds: 0,
                        failure: ("not judged: \(changed)", "\(candidate.label) was not judged: \(changed)")
                    )
                )
                continue
            }
            let common = comparison.common[index]
            let whole = "×\(Numbers.fixed(common.median, 3)), \(common.together) of \(common.steps) \(common.unit) together"
            cases.append(
                Case(
                    name: "\(candidate.label): as a whole",
                    seconds: 0,
                    failure: common.verdict == .slower
                        ? ("slower as a whole: \(whole)", "\(candidate.label) is slower as a whole: \(whole)") : nil
                )
            )
            for row in comparison.rows {
                let cell = row.cells[index]
                let name = "\(candidate.label): \(row.key.flow) \(row.key.suite) \(row.key.provider) · \(row.step.name)"
                let ratio =
                    "\(cell.movesText) (floor \(RegressionCheck.percent(cell.floor))), p = \(String(format: "%.2g", cell.pValue ?? 1))"
                cases.append(
                    Case(
                        name: name,
                        seconds: 0,
                        failure: cell.verdict == .slower
                            ? ("slower: \(ratio)", comparison.sentence(row, candidate: index).map { "\($0), \(ratio)" } ?? "\(name): slower, \(ratio)") : nil
                    )
                )
            }
        }
        self.init(
            name: "lab compare",
            failureKind: "slower",
            cases: cases,
            properties: [("baseline", comparison.baseline.label)]
                + comparison.candidates.enumerated().map { ("candidate.\($0.offset + 1)", $0.element.label) },
            seconds: 0
        )
    }
}
