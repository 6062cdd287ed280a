import ArgumentParser
import Foundation
import LabAnalysis
import LabCore
import LabReport
import LabResults

/// `lab compare BASE CANDIDATE…`: runs side by side, with noise-aware verdicts.
struct Compare: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compare runs' results.json: per step p50, p99 and ops/s ratios with noise-aware verdicts.",
        discussion: """
            The first run is the baseline. Each step's p50, p99 and its group's ops/s are judged: the p50 \
            moves when a Mann–Whitney U test over both runs' histograms is significant (p < --alpha) and it \
            moved by more than --threshold (--short-threshold for a step under 100 µs); the p99 when the \
            share of samples above the pooled p99 differs significantly and it moved by more than twice \
            that; ops/s (on the exchange row) when the runs' per-interval rates differ significantly and it \
            moved by more than --threshold. A step is slower when any figure moved the slow way; each \
            verdict is a sentence naming the slower side first. When a run was saturated or its exchanges \
            mostly waited, and every run read its steps' usage (report.stepUsage), steps are judged on their \
            CPU time and exchanges on their work (exchange.work); a saturated run's exchange time is not \
            judged. Runs whose threads waited for a core for shares 10 points apart, or whose reference \
            operations (the calibration, first against first and last against last) ran 5% apart, ran \
            on a machine that changed: nothing of them is judged (--despite-machine-change: judged, \
            and said). A warning names what else differs (scenario, transport, \
            load model, host, cores, build). When three quarters of a run's steps \
            moved together, their median ratio is reported as the run's common factor and each step is \
            judged against it (--absolute: never). Writes report.html (the comparison as one page, its \
            charts inside: open it first), comparison.md (with an SVG chart per candidate) and comparison.csv. Exit codes: 0 compared; 1 bad input; 2 with --fail-on-slower, a step or \
            a whole run got slower; 3 with --fail-on-slower, a candidate ran with other CPU to spare than \
            the baseline (another machine, or something beside it), so nothing of it was judged. A candidate that shares no group with the baseline is \
            bad input (exit 1). RUN#SELECTOR compares some groups of a run: #{provider=openssl}, \
            #cx{suite=x25519}; fields two selectors set differently are compared across, so \
            'lab compare R#{provider=swift-crypto} R#{provider=openssl}' sets each suite on one provider \
            against the same suite on the other. Selections of one run are judged as its report's \
            comparisons are: no common factor (the groups shared the process) and no ops/s verdict \
            (a group's ops/s is its share of the run, which follows the weights).
            """
    )

    @Argument(
        help:
            "results.json files, or report folders holding one, each optionally with #SELECTOR; the first is the baseline."
    )
    var runs: [String]

    @Option(name: .customLong("label"), help: "A name per run, in order (default: its folder's name).")
    var labels: [String] = []

    @Option(help: "Write the comparison here instead of Reports/compare/<UTC timestamp>/.")
    var out: String?

    @OptionGroup var replacing: ReplaceOption

    @Option(help: "The noise floor: the smallest p50 change called a change, e.g. 10%.")
    var threshold = "10%"

    @Option(help: "The noise floor of a step whose baseline p50 is under 100 µs.")
    var shortThreshold = "25%"

    @Flag(help: "Judge every step by its own ratio, never against a run's common factor.")
    var absolute = false

    @Flag(
        help:
            "Judge a candidate though its machine changed (other CPU to spare, or another speed by the runs' reference operations); the verdict still says it changed."
    )
    var despiteMachineChange = false

    @Option(help: "The U test's significance level.")
    var alpha = 0.001

    @Flag(help: "Exit 2 if any step of any candidate, or a candidate as a whole, is slower.")
    var failOnSlower = false

    @Flag(name: .long, help: "Print nothing but errors.")
    var quiet = false

    @Option(
        name: .customLong("format"),
        help: ArgumentHelp(
            "Also write the verdicts for CI (repeatable): junit (comparison-junit.xml, a case per candidate's step and run) or github (comparison.md to $GITHUB_STEP_SUMMARY, ::error per slower step).",
            valueName: "NAME"
        )
    )
    var formats: [String] = []

    func validate() throws {
        for name in self.formats where !VerdictSuite.checkFormats.contains(name) {
            throw ValidationError(
                "--format \(name): lab compare writes \(VerdictSuite.checkFormats.joined(separator: " or ")) beside comparison.md and comparison.csv"
            )
        }
    }

    func run() async throws {
        try await reportingErrors {
            guard self.runs.count >= 2 else { throw ValidationError("give a baseline and at least one run to compare") }
            guard self.labels.isEmpty || self.labels.count == self.runs.count else {
                throw ValidationError("give one --label per run (\(self.runs.count)), or none")
            }
            guard let threshold = Self.fraction(self.threshold), threshold >= 0, threshold < 10 else {
                throw ValidationError("--threshold must be a percentage such as 10%; got '\(self.threshold)'")
            }
            guard let shortThreshold = Self.fraction(self.shortThreshold), shortThreshold >= 0, shortThreshold < 10
            else {
                throw ValidationError(
                    "--short-threshold must be a percentage such as 25%; got '\(self.shortThreshold)'"
                )
            }
            guard self.alpha > 0, self.alpha < 1 else { throw ValidationError("--alpha must be between 0 and 1") }
            let (loaded, oneRun, across) = try self.loadRuns()
            var comparison = Comparison(
                baseline: loaded[0],
                candidates: Array(loaded.dropFirst()),
                threshold: threshold,
                shortThreshold: shortThreshold,
                commonShare: self.absolute || oneRun ? 2 : 0.75,
                alpha: self.alpha,
                judgesThroughput: !oneRun,
                despiteMachineChange: self.despiteMachineChange
            )
            comparison.across = across
            try Self.requireSomethingCompared(comparison)
            let directory =
                self.out.map { URL(fileURLWithPath: $0) } ?? Run.defaultDirectory(named: "compare", at: Date())
            let folder = try OutputFolder(directory, command: "compare", replace: self.replacing.replace)
            let report = ComparisonReport(comparison)
            let written =
                try report.write(to: directory)
                + VerdictSuite(comparison: comparison).writeCheck(
                    formats: self.formats,
                    markdown: report.markdown(),
                    to: directory,
                    prefix: "comparison"
                )
            try folder.record(written)
            if !self.quiet {
                // Labels, scenario names and hosts come from results.json files: shown, never obeyed.
                print(MarkdownReporter.printable(report.terminal()))
                print(
                    "Comparison in \(directory.relativePath)/: \(written.map(\.lastPathComponent).joined(separator: ", "))"
                )
            }
            let slower = comparison.candidates.indices.contains { comparison.isSlower(candidate: $0) }
            if self.failOnSlower, slower { throw ExitCode(2) }
            // A gate does not pass on runs it could not judge.
            let unjudged = comparison.candidates.indices.contains { comparison.isUnjudged(candidate: $0) }
            if self.failOnSlower, unjudged { throw ExitCode(3) }
        }
    }

    /// The runs named on the command line, each read, narrowed to its selection and labelled
    /// (labels made unique); whether they are selections of one run; the fields two
    /// selections set differently.
    private func loadRuns() throws -> (runs: [Comparison.Run], oneRun: Bool, across: [String]) {
        var loaded: [Comparison.Run] = []
        var selections: [GroupSelection?] = []
        var files: Set<String> = []
        for (index, argument) in self.runs.enumerated() {
            let (path, selection) = try GroupSelection.split(argument)
            let url = Self.resultsURL(path)
            files.insert(url.standardizedFileURL.path)
            var label = self.labels.isEmpty ? Self.label(for: url, index: index) : self.labels[index]
            var result = try RunResult.read(from: url)
            if let selection {
                result = try selection.apply(to: result, label: label)
                if self.labels.isEmpty { label += selection.description }
            }
            if index > 0, let selection, let base = selections[0] {
                result = GroupSelection.align(result, selection, to: loaded[0].result, base)
            }
            selections.append(selection)
            loaded.append(Comparison.Run(label: label, result: result))
        }
        // Selections of one run: judged as the run's own report judges its groups.
        let oneRun = files.count == 1 && selections.contains { $0 != nil }
        var seen: Set<String> = []
        for index in loaded.indices where !seen.insert(loaded[index].label).inserted {
            loaded[index].label += " (\(index + 1))"
        }
        // Fields two selections set differently: the sides are named by their values
        // ("openssl ×1.77 slower than swift-crypto"), and row labels leave them out.
        let across = GroupSelection.across(selections)
        if !across.isEmpty {
            for index in loaded.indices {
                loaded[index].name = across.compactMap { selections[index]?.filters[$0] }.joined(separator: " ")
            }
        }
        return (loaded, oneRun, across)
    }

    /// Throws, listing both sides' groups, when a candidate matched none of the baseline's:
    /// "no significant change in any of the 0 steps" would read as a pass.
    static func requireSomethingCompared(_ comparison: Comparison) throws {
        for (index, candidate) in comparison.candidates.enumerated() where comparison.comparesNothing(candidate: index)
        {
            func groups(_ run: Comparison.Run) -> [String] {
                let keys = run.result.groups.map { "    \($0.key)" }
                return keys.isEmpty ? ["    (no groups)"] : keys
            }
            let lines =
                [
                    "nothing to compare: '\(candidate.label)' has none of the baseline's groups"
                        + " (same flow label, suite and provider; the transport may differ)",
                    "  baseline '\(comparison.baseline.label)':",
                ] + groups(comparison.baseline) + ["  '\(candidate.label)':"] + groups(candidate)
            throw LabError(.invalidScenario, lines.joined(separator: "\n"))
        }
    }

    /// `path` itself, or `path/results.json` when it is a folder.
    static func resultsURL(_ path: String) -> URL {
        var isDirectory: ObjCBool = false
        let url = URL(fileURLWithPath: path)
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            return url.appendingPathComponent("results.json")
        }
        return url
    }

    /// The folder's name (`2026-11-22T101500Z`), or the file's without `.json` if not `results.json`.
    static func label(for url: URL, index: Int) -> String {
        if url.lastPathComponent == "results.json" {
            let folder = url.deletingLastPathComponent().lastPathComponent
            return folder.isEmpty || folder == "." ? "run \(index + 1)" : folder
        }
        return url.deletingPathExtension().lastPathComponent
    }

    /// `10%` → 0.1; a bare number is a fraction.
    static func fraction(_ text: String) -> Double? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.hasSuffix("%") { return Double(trimmed.dropLast()).map { $0 / 100 } }
        return Double(trimmed)
    }
}
