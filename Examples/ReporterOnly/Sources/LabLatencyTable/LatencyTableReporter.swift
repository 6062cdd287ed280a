import Foundation
import LabKit

/// `latency-tsv`: writes `latency.tsv`, one row per group and step with its sample count and
/// its p50, p95 and p99 in milliseconds, for a spreadsheet or `sort -t$'\t'`. The group's
/// names come from the run (a plugin's, a server's), so a tab, a line break or a control
/// character in them is written as its escape, never as a new cell or row.
public struct LatencyTableReporter: Reporter {
    public static let name = "latency-tsv"

    public init(options: ReportOptions) {}

    /// Writes `latency.tsv`.
    public func write(_ result: RunResult, to directory: URL) throws -> [URL] {
        [try Self.writeFile(Self.text(result), named: "latency.tsv", in: directory)]
    }

    /// The table's text: a header, then a row per group and step.
    public static func text(_ result: RunResult) -> String {
        var lines = ["flow\tsuite\tprovider\ttransport\tstep\tcount\tp50_ms\tp95_ms\tp99_ms"]
        for group in result.groups {
            for (step, _) in group.orderedSteps {
                guard let figures = result.statistics(group, step) else { continue }
                let names = [group.key.flow, group.key.suite, group.key.provider, group.key.transport, step.name]
                let quantiles: [Double?] = [figures.p50, figures.p95, figures.p99]
                let times = quantiles.map { $0.map { String(format: "%.3f", $0 / 1e6) } ?? "" }
                lines.append((names.map(Self.cell) + ["\(figures.count)"] + times).joined(separator: "\t"))
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `text` as one cell: backslash, tab, line breaks and other control characters escaped.
    static func cell(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": escaped += "\\\\"
            case "\t": escaped += "\\t"
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case _ where scalar.properties.generalCategory == .control || scalar.properties.generalCategory == .format:
                escaped += "\\u{\(String(scalar.value, radix: 16))}"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
