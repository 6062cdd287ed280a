import ArgumentParser
import Foundation
import LabAnalysis
import LabCore
import LabReport
import LabResults

/// `lab check RUN --baseline BASE`: the regression gate.
struct Check: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a run against a baseline, step by step; exit 2 on a regression.",
        discussion: """
            Counted runs (lab run --counted) are checked on instructions: a step regressed when its \
            median over the samples exceeds the baselines' by more than --count-floor (and at least \
            150 instructions) plus twice the baselines' spread between processes. Timed runs are checked over their rounds: \

            both runs need rounds ("load": {"rounds": 10}): each round gives every step one median, \
            divided by the calibration unit timed just before it in the same process. A step regressed \
            when its rounds are significantly slower (one-sided Mann–Whitney U, p < --alpha) and the \
            estimated ratio exceeds 1 + --threshold. Writes check.html, check.md and check.csv into --out \
            (default: the run's folder). Exit codes: 0 no regression; 1 bad input; 2 a step regressed.
            """
    )

    @Argument(help: "The run: a results.json, or a report folder holding one.")
    var run: String

    @Option(
        help:
            "A baseline: a results.json or a report folder; repeat it for runs of one build in separate processes (Benchmarks/gate/run-*.json), whose spread then widens each step's threshold."
    )
    var baseline: [String]

    @Option(help: "The smallest slowdown called a regression, e.g. 8%.")
    var threshold = "8%"

    @Option(help: "The one-sided test's significance level.")
    var alpha = 0.01

    @Option(help: "Steps shorter than this many calibration units in the baseline are short.")
    var shortStep = 0.5

    @Option(help: "The smallest slowdown called a regression in a short step.")
    var shortThreshold = "25%"

    @Option(
        help:
            "Counted runs (lab run --counted): the smallest change in a step's median instructions called a regression, beyond which the baselines' spread widens it."
    )
    var countFloor = "0.25%"

    @Option(help: "Write check.md and check.csv here (default: the run's folder, if it is one).")
    var out: String?

    @OptionGroup var replacing: ReplaceOption

    @Flag(name: .long, help: "Print only the one-line verdict (and errors).")
    var quiet = false

    @Option(
        name: .customLong("format"),
        help: ArgumentHelp(
            "Also write the verdicts for CI (repeatable): junit (check-junit.xml, a case per step) or github (check.md to $GITHUB_STEP_SUMMARY, ::error per regression).",
            valueName: "NAME"
        )
    )
    var formats: [String] = []

    func validate() throws {
        for name in self.formats where !VerdictSuite.checkFormats.contains(name) {
            throw ValidationError(
                "--format \(name): lab check writes \(VerdictSuite.checkFormats.joined(separator: " or ")) beside check.md and check.csv"
            )
        }
    }

    func run() async throws {
        try await reportingErrors {
            guard let threshold = Compare.fraction(self.threshold), threshold >= 0, threshold < 10 else {
                throw ValidationError("--threshold must be a percentage such as 8%; got '\(self.threshold)'")
            }
            guard self.alpha > 0, self.alpha < 1 else { throw ValidationError("--alpha must be between 0 and 1") }
            guard let shortThreshold = Compare.fraction(self.shortThreshold), shortThreshold >= 0, shortThreshold < 10
            else {
                throw ValidationError(
                    "--short-threshold must be a percentage such as 25%; got '\(self.shortThreshold)'"
                )
            }
            guard self.shortStep >= 0 else { throw ValidationError("--short-step must be 0 or more") }
            let runURL = Compare.resultsURL(self.run)
            guard !self.baseline.isEmpty else { throw ValidationError("give at least one --baseline") }
            let baseURLs = self.baseline.map(Compare.resultsURL)
            let run = try RunResult.read(from: runURL)
            let baselines = try baseURLs.map { try RunResult.read(from: $0) }
            let baselineLabel =
                baseURLs.count == 1 ? Compare.label(for: baseURLs[0], index: 0) : "\(baseURLs.count) baselines"
            if CountedCheck.isCounted(run) || baselines.contains(where: CountedCheck.isCounted) {
                guard let floor = Compare.fraction(self.countFloor), floor >= 0, floor < 1 else {
                    throw ValidationError("--count-floor must be a percentage such as 1%; got '\(self.countFloor)'")
                }
                let check = try CountedCheck(run: run, baselines: baselines, floor: floor)
                let report = CountedCheckReport(
                    check,
                    baseline: baselineLabel,
                    run: Compare.label(for: runURL, index: 1)
                )
                try self.publish(report)
                if !check.regressions.isEmpty { throw ExitCode(2) }
                return
            }
            let check = try RegressionCheck(
                run: run,
                baselines: baselines,
                threshold: threshold,
                alpha: self.alpha,
                shortStep: self.shortStep,
                shortThreshold: shortThreshold
            )
            let report = CheckReport(check, baseline: baselineLabel, run: Compare.label(for: runURL, index: 1))
            try self.publish(report)
            if !check.regressions.isEmpty { throw ExitCode(2) }
        }
    }

    /// Writes the check's files into its folder and lists them there, and prints its verdict.
    private func publish<Gate: GateFormat>(_ report: GateReport<Gate>) throws {
        let folder = try self.folder()
        var written = try folder.map { try report.write(to: $0.url) } ?? []
        print(MarkdownReporter.printable(self.quiet ? report.summary() : report.terminal()))
        written += try VerdictSuite(gate: report).writeCheck(
            formats: self.formats,
            markdown: report.markdown(),
            to: folder?.url
        )
        try folder?.record(written)
    }

    /// Where the check's files go, made ready: `--out`, or the run's folder (when the run was
    /// given as one), where they join the run's files and replace an earlier check's.
    private func folder() throws -> OutputFolder? {
        let runFolder = self.runFolder()
        guard let directory = self.out.map({ URL(fileURLWithPath: $0) }) ?? runFolder else { return nil }
        let intoRun = runFolder.map { $0.resolvingSymlinksInPath() == directory.resolvingSymlinksInPath() } ?? false
        return try OutputFolder(directory, command: "check", replace: self.replacing.replace, adding: intoRun)
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
