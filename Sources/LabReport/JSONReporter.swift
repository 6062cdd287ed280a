public import Foundation
import LabCore
public import LabResults

/// Writes `results.json`: the whole run, histograms included (`RunResult.jsonData()`).
public struct JSONReporter: Reporter {
    /// `json`.
    public static let name = "json"
    /// The file this reporter writes.
    public static let fileName = "results.json"

    /// A JSON reporter; it has no options.
    public init(options: ReportOptions) {}

    /// Writes `results.json` into `directory`.
    public func write(_ result: RunResult, to directory: URL) throws -> [URL] {
        let url = directory.appendingPathComponent(Self.fileName)
        let data = try result.jsonData()
        try writeData(data + Data("\n".utf8), to: url)
        return [url]
    }
}
