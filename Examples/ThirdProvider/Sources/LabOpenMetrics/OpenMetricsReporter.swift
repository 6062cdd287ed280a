public import Foundation
public import LabKit

/// `openmetrics`: writes `metrics.prom`, the run's step latencies in the Prometheus text
/// format, for node_exporter's textfile collector (or any tool that scrapes that format):
/// one summary per group and step, its quantiles in seconds, its count and its sum.
public struct OpenMetricsReporter: Reporter {
    /// `openmetrics`.
    public static let name = "openmetrics"
    /// The file it writes.
    public static let fileName = "metrics.prom"

    /// It has no options.
    public init(options: ReportOptions) {}

    public func write(_ result: RunResult, to directory: URL) throws -> [URL] {
        [try Self.writeFile(Self.text(result), named: Self.fileName, in: directory)]
    }

    /// The text of `metrics.prom`.
    public static func text(_ result: RunResult) -> String {
        var lines = [
            "# HELP lab_step_seconds The time of one step of a lab run.",
            "# TYPE lab_step_seconds summary",
        ]
        for group in result.groups {
            for (step, _) in group.orderedSteps {
                guard let figures = result.statistics(group, step) else { continue }
                let labels = [
                    ("scenario", result.metadata.scenario), ("flow", group.key.flow), ("suite", group.key.suite),
                    ("provider", group.key.provider), ("transport", group.key.transport), ("step", step.name),
                ]
                let base = labels.map { "\($0)=\"\(Self.escaped($1))\"" }.joined(separator: ",")
                for (quantile, nanoseconds) in [("0.5", figures.p50), ("0.9", figures.p90), ("0.99", figures.p99)] {
                    lines.append("lab_step_seconds{\(base),quantile=\"\(quantile)\"} \(nanoseconds / 1e9)")
                }
                lines.append("lab_step_seconds_count{\(base)} \(figures.count)")
                lines.append("lab_step_seconds_sum{\(base)} \(figures.mean * Double(figures.count) / 1e9)")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A label value with `\`, `"` and newlines escaped, as the format requires.
    static func escaped(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
