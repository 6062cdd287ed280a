import Foundation
import Histogram
import LabCore
import LabReport
import LabResults

/// A test-only reporter, `tally`: one line per group and step with its sample count, in
/// `tally.txt`. It shows that a reporter is one file plus one registry line
/// (`TestPlugins.catalog`).
struct TallyReporter: Reporter {
    static let name = "tally"

    init(options: ReportOptions) {}

    func write(_ result: RunResult, to directory: URL) throws -> [URL] {
        var lines = ["iterations \(result.completedIterations)"]
        for group in result.groups {
            for (step, histogram) in group.orderedSteps {
                lines.append("\(group.key) \(step) \(histogram.totalCount)")
            }
        }
        let file = directory.appendingPathComponent("tally.txt")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: file, options: .atomic)
        return [file]
    }
}
