public import Foundation
import LabCore
public import LabResults

/// Writes `junit.xml`: the run as a JUnit test suite, which Jenkins, GitLab, Azure Pipelines
/// and GitHub test-report actions read (`VerdictSuite`). Each threshold is a test case,
/// failed when it was missed; one more case fails when the deadline cut the run short. The
/// run's provenance (lab version and commit, run id, tags) is in the suite's properties.
public struct JUnitReporter: Reporter {
    /// `junit`.
    public static let name = "junit"
    /// The file it writes.
    public static let fileName = "junit.xml"

    /// A JUnit reporter; it has no options.
    public init(options: ReportOptions) {}

    public func write(_ result: RunResult, to directory: URL) throws -> [URL] {
        let url = directory.appendingPathComponent(Self.fileName)
        try writeText(VerdictSuite(run: result).junit(), to: url)
        return [url]
    }
}
