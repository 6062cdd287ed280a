import ArgumentParser
import Foundation
import LabAnalysis
import LabCore
import LabKit
import LabReport
import LabResults

/// `lab merge SHARD…`: one report from the shards of a run (`lab run --shard K/N`).
struct Merge: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Merge shards' results.json into one report (report.html first): histograms merged exactly, counts summed.",
        discussion: """
            Every input must come from the same scenario; the scenario's thresholds are evaluated on the \
            merge. A split with shards missing is refused unless --allow-partial (a lost shard must \
            not pass for a whole run). A shard folder whose shard.json says it failed, was stopped \
            or never finished (no results.json) is a failed shard: the others are merged, the reports \
            say the merge is not the whole run and name it, and the merge exits 1, --allow-partial \
            or not. Exit codes: 0 all good; 1 bad input, shards missing or a shard failed; 2 a \
            threshold was missed.
            """
    )

    @Argument(
        help: "results.json files, or report folders holding one (a shard.json there says whether the shard finished)."
    )
    var runs: [String]

    @Option(help: "Write the merged reports here instead of Reports/<scenario>/<UTC timestamp>-merged/.")
    var out: String?

    @OptionGroup var replacing: ReplaceOption

    @Flag(name: .long, help: "Print nothing but errors.")
    var quiet = false

    @Flag(help: "Merge the shards given even when some of the split are missing (a note says which).")
    var allowPartial = false

    @Option(
        name: .customLong("format"),
        help: ArgumentHelp(
            "Also write this report (repeatable), beside \(ReporterRegistry.standardFormats.joined(separator: ", ")): \(LabCLI.catalog.reporters.names.filter { !ReporterRegistry.standardFormats.contains($0) }.joined(separator: ", ")).",
            valueName: "NAME"
        )
    )
    var formats: [String] = []

    func run() async throws {
        try await reportingErrors {
            guard !self.runs.isEmpty else { throw ValidationError("give the shards' results.json files") }
            let urls = self.runs.map(Compare.resultsURL)
            let inputs = try urls.map { (url: $0, input: try RunMerge.Input.read($0)) }
            let given = inputs.compactMap { url, input in
                if case .results(let result) = input { (result, url.path) } else { nil }
            }
            let failed = inputs.compactMap { if case .failed(let shard) = $0.input { shard } else { nil } }
            var standardError = StandardError()
            for shard in failed { print("failed shard: \(shard)", to: &standardError) }
            guard !given.isEmpty else {
                throw ValidationError("nothing to merge: every shard given failed (\(failed.count))")
            }
            for name in self.formats { _ = try LabCLI.catalog.reporters.make(name) }
            var merged = try RunMerge.merge(given.map(\.0), sources: given.map(\.1), failed: failed)
            if !merged.missingShards.isEmpty, !self.allowPartial {
                let total = inputs.count + merged.missingShards.count
                throw ValidationError(
                    "Shards missing: \(merged.missingShards.joined(separator: ", ")) (of \(total)); merge them all, or pass --allow-partial"
                )
            }
            merged.result.metadata.command = CommandLine.arguments.joined(separator: " ")
            // The scenario's thresholds, judged on the whole.
            merged.result.thresholds = Threshold.outcomes(try RunMerge.thresholds(for: merged.result), of: merged.result)
            let scenario = merged.result.metadata.scenario
            let directory =
                self.out.map { URL(fileURLWithPath: $0) }
                ?? URL(fileURLWithPath: Run.defaultDirectory(named: scenario, at: Date()).path + "-merged")
            let folder = try OutputFolder(directory, command: "merge", replace: self.replacing.replace)
            let standard = ReporterRegistry.standardFormats
            let formats = standard + self.formats.filter { !standard.contains($0) }
            let written = try LabCLI.catalog.reporters.writeReports(merged.result, formats: formats, charts: true, to: directory)
            try folder.record(written)
            for note in merged.notes { print("note: \(note)", to: &standardError) }
            if !self.quiet {
                print(Summary.text(merged.result))
                let names = written.map(\.lastPathComponent).filter { !$0.hasSuffix(".svg") }
                print("Merged reports in \(directory.relativePath)/: \(names.joined(separator: ", "))")
            }
            for outcome in merged.result.thresholds where !outcome.passed {
                print(
                    "threshold missed: \(outcome.metric) \(outcome.condition) (observed \(outcome.observed))",
                    to: &standardError
                )
            }
            // A failed shard fails the whole, whatever the thresholds say of the rest.
            if !failed.isEmpty { throw ExitCode(1) }
            if !merged.result.passed { throw ExitCode(2) }
        }
    }
}
