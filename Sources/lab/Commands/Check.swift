import ArgumentParser
import Foundation
import LabCore
import LabReport

/// `lab check RUN --baseline BASE`: the regression gate.
struct Check: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a run against a baseline, step by step over its rounds; exit 2 on a regression.",
        discussion: """
            Both runs need rounds ("load": {"rounds": 10}): each round gives every step one median, \
            divided by the calibration unit timed just before it in the same process. A step regressed \
            when its rounds are significantly slower (one-sided Mann–Whitney U, p < --alpha) and the \
            estimated ratio exceeds 1 + --threshold. Writes check.md and check.csv into --out (default: \
            the run's folder). Exit codes: 0 no regression; 1 bad input; 2 a step regressed.
            """
    )

    @Argument(help: "The run: a results.json, or a report folder holding one.")
    var run: String

    @Option(help: "The baseline: a results.json (e.g. Benchmarks/baseline.json) or a report folder.")
    var baseline: String

    @Option(help: "The smallest slowdown called a regression, e.g. 8%.")
    var threshold = "8%"

    @Option(help: "The one-sided test's significance level.")
    var alpha = 0.01

    @Option(help: "Write check.md and check.csv here (default: the run's folder, if it is one).")
    var out: String?

    @Flag(name: .long, help: "Print only the one-line verdict (and errors).")
    var quiet = false

    func run() async throws {
        try await reportingErrors {
            guard let threshold = Compare.fraction(self.threshold), threshold >= 0, threshold < 10 else {
                throw ValidationError("--threshold must be a percentage such as 8%; got '\(self.threshold)'")
            }
            guard self.alpha > 0, self.alpha < 1 else { throw ValidationError("--alpha must be between 0 and 1") }
            let runURL = Compare.resultsURL(self.run)
            let baseURL = Compare.resultsURL(self.baseline)
            let check = try RegressionCheck(
                run: try ResultsDocument.load(from: runURL),
                baseline: try ResultsDocument.load(from: baseURL),
                threshold: threshold,
                alpha: self.alpha
            )
            let report = CheckReport(
                check,
                baseline: Compare.label(for: baseURL, index: 0),
                run: Compare.label(for: runURL, index: 1)
            )
            let directory = self.out.map { URL(fileURLWithPath: $0) } ?? self.runFolder()
            if let directory { _ = try report.write(to: directory) }
            print(self.quiet ? report.summary() : report.terminal())
            if !check.regressions.isEmpty { throw ExitCode(2) }
        }
    }

    /// The run's folder, when the run was given as one.
    private func runFolder() -> URL? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: self.run, isDirectory: &isDirectory), isDirectory.boolValue else {
            return nil
        }
        return URL(fileURLWithPath: self.run)
    }
}
