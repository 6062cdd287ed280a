public import Foundation
import LabCore
public import LabResults

/// Writes `junit.xml`: the run as a JUnit test suite, which Jenkins, GitLab, Azure Pipelines
/// and GitHub test-report actions read. Each threshold is a test case, failed when it was
/// missed; one more case fails when the deadline cut the run short. The run's provenance
/// (lab version and commit, run id, tags) is in the suite's properties.
public struct JUnitReporter: Reporter {
    /// `junit`.
    public static let name = "junit"
    /// The file it writes.
    public static let fileName = "junit.xml"

    /// A JUnit reporter; it has no options.
    public init(options: ReportOptions) {}

    public func write(_ result: RunResult, to directory: URL) throws -> [URL] {
        let url = directory.appendingPathComponent(Self.fileName)
        try writeText(Self.render(result), to: url)
        return [url]
    }

    /// One test case: its name, and its failure message and details if it failed.
    struct Case {
        var name: String
        var seconds: Double
        var failure: (message: String, details: String)?
    }

    /// The document's text.
    static func render(_ result: RunResult) -> String {
        let metadata = result.metadata
        let suite = metadata.scenario
        var cases = result.thresholds.map { outcome in
            Case(
                name: "\(outcome.metric) \(outcome.condition)",
                seconds: 0,
                failure: outcome.passed
                    ? nil
                    : (
                        "observed \(outcome.observed), not \(outcome.condition)",
                        "threshold missed: \(outcome.metric) \(outcome.condition) (observed \(outcome.observed))"
                    )
            )
        }
        let seconds = Double(result.totalNanoseconds) / 1e9
        cases.append(
            Case(
                name: "the run ends before its deadline",
                seconds: seconds,
                failure: result.stoppedByDeadline ? ("the deadline stopped the run early", metadata.load) : nil
            )
        )
        let failures = cases.filter { $0.failure != nil }.count
        let counts = "tests=\"\(cases.count)\" failures=\"\(failures)\" errors=\"0\" skipped=\"0\""
        let time = "time=\"\(Numbers.fixed(seconds, 3))\""
        var lines = [
            #"<?xml version="1.0" encoding="UTF-8"?>"#,
            "<testsuites name=\"crypto-lab\" \(counts) \(time)>",
            "  <testsuite name=\(attribute(suite)) \(counts) \(time) timestamp=\(attribute(Self.timestamp(metadata.startedAt))) hostname=\(attribute(metadata.machine.hostname))>",
            "    <properties>",
        ]
        lines += Self.properties(metadata).map { "      <property name=\(attribute($0.0)) value=\(attribute($0.1))/>" }
        lines.append("    </properties>")
        for item in cases {
            let open =
                "    <testcase classname=\(attribute("crypto-lab.\(suite)")) name=\(attribute(item.name)) time=\"\(Numbers.fixed(item.seconds, 3))\""
            guard let failure = item.failure else {
                lines.append(open + "/>")
                continue
            }
            lines.append(open + ">")
            lines.append(
                "      <failure message=\(attribute(failure.message)) type=\"threshold\">\(escaped(failure.details))</failure>"
            )
            lines.append("    </testcase>")
        }
        lines += ["  </testsuite>", "</testsuites>"]
        return lines.joined(separator: "\n") + "\n"
    }

    /// The suite's properties: the lab, the run id, the tags, the providers and the load.
    static func properties(_ metadata: RunMetadata) -> [(String, String)] {
        var properties: [(String, String)] = []
        if let lab = metadata.lab {
            properties.append(("lab.version", lab.version))
            if let commit = lab.commit { properties.append(("lab.commit", commit)) }
            if let dirty = lab.dirty { properties.append(("lab.dirty", String(dirty))) }
        }
        if let id = metadata.runId { properties.append(("run.id", id)) }
        for (key, value) in (metadata.tags ?? [:]).sorted(by: { $0.key < $1.key }) {
            properties.append(("tag.\(key)", value))
        }
        for provider in metadata.providers { properties.append(("provider.\(provider.name)", provider.version)) }
        properties += [("transport", metadata.transport), ("load", metadata.load), ("build", metadata.build)]
        return properties
    }

    /// ISO 8601 without a zone, as JUnit's schema has it (in UTC).
    static func timestamp(_ date: Date) -> String {
        String(MarkdownReporter.utc(date).prefix(19)).replacingOccurrences(of: " ", with: "T")
    }
}

/// `text` as an XML attribute value, quoted.
func attribute(_ text: String) -> String {
    "\"" + escaped(text).replacingOccurrences(of: "\"", with: "&quot;") + "\""
}

/// `text` with XML's markup characters escaped, and characters XML 1.0 cannot hold replaced.
func escaped(_ text: String) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
        case _ where scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF: out += "\u{FFFD}"
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out
}
