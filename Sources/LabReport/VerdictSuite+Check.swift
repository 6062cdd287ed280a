public import Foundation
import LabCore
import LabResults

extension VerdictSuite {
    /// A counted gate (`lab check` of counted runs): a case per step, failed when it did more
    /// work than its allowance lets through; a step with too few samples passes, not judged.
    public init(counted report: CountedCheckReport) {
        let cases = report.check.rows.map { row in
            let ratio = "×\(Numbers.fixed(row.ratio, 4)) (allowed ±\(CountedCheckReport.percent(row.allowance)))"
            return Case(
                name: CountedCheckReport.label(row),
                seconds: 0,
                failure: row.verdict == .more
                    ? (
                        "more work: \(ratio)",
                        "\(CountedCheckReport.label(row)): \(Numbers.integer(UInt64(row.run))) instructions against the baseline's \(Numbers.integer(UInt64(row.baseline))), \(ratio)"
                    ) : nil
            )
        }
        self.init(
            name: "lab check",
            failureKind: "regression",
            cases: cases,
            properties: [("baseline", report.labels.baseline), ("run", report.labels.run)]
                + report.check.notes.enumerated().map { ("note.\($0.offset + 1)", $0.element) },
            seconds: 0
        )
    }

    /// A timed gate (`lab check` of runs with rounds): a case per step, failed when it was
    /// significantly slower beyond its threshold.
    public init(timed report: CheckReport) {
        let cases = report.check.rows.map { row in
            let ratio =
                "×\(Numbers.fixed(row.ratio, 3)), p = \(String(format: "%.2g", row.pValue)) (threshold +\(CheckReport.percent(row.threshold)))"
            return Case(
                name: CheckReport.label(row),
                seconds: 0,
                failure: row.verdict == .slower
                    ? ("slower: \(ratio)", "\(CheckReport.label(row)): slower, \(ratio)") : nil
            )
        }
        self.init(
            name: "lab check",
            failureKind: "regression",
            cases: cases,
            properties: [("baseline", report.labels.baseline), ("run", report.labels.run)]
                + report.check.notes.enumerated().map { ("note.\($0.offset + 1)", $0.element) },
            seconds: 0
        )
    }

    /// The formats `lab check --format` writes beside check.md and check.csv.
    public static let checkFormats = ["junit", "github"]

    /// Writes a gate's verdicts in `formats` (`checkFormats`) into `directory`:
    /// `check-junit.xml`; for `github`, `markdown` appended to `$GITHUB_STEP_SUMMARY` when
    /// set, and an `::error` line per regression on stdout. Returns the files written.
    public func writeCheck(formats: [String], markdown: String, to directory: URL?) throws -> [URL] {
        var written: [URL] = []
        if formats.contains("junit"), let directory {
            let url = directory.appendingPathComponent("check-junit.xml")
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
