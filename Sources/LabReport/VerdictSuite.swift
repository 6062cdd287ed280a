public import Foundation
import LabCharts
import LabCore
public import LabResults

/// Pass/fail verdicts as CI systems read them: a run's thresholds, or a gate's steps
/// (`lab check`), as JUnit test cases and GitHub `::error` annotations.
public struct VerdictSuite: Sendable {
    /// One verdict: a test case, failed or not.
    public struct Case: Sendable {
        /// What was judged: `cx.exchange.p99 < 50 ms`, `cx-x25519 x25519 swift-crypto · sign`.
        public var name: String
        /// Seconds it took, if it has a time of its own.
        public var seconds: Double
        /// Why it failed (one line), and the details; nil when it passed.
        public var failure: (message: String, details: String)?
    }

    /// The suite's name: the scenario's, or `lab check`.
    public var name: String
    /// The kind of failure, JUnit's `type` and the annotations' title: `threshold missed`.
    public var failureKind: String
    public var cases: [Case]
    /// Facts beside the verdicts: the lab's version and commit, the run id, tags, providers.
    public var properties: [(String, String)]
    public var seconds: Double
    public var startedAt: Date?
    public var hostname: String?

    /// The failed cases.
    public var failures: [Case] { self.cases.filter { $0.failure != nil } }

    /// `junit.xml`'s text.
    public func junit() -> String {
        let counts = "tests=\"\(self.cases.count)\" failures=\"\(self.failures.count)\" errors=\"0\" skipped=\"0\""
        let time = "time=\"\(Numbers.fixed(self.seconds, 3))\""
        var suite = "  <testsuite name=\(attribute(self.name)) \(counts) \(time)"
        if let startedAt = self.startedAt {
            // ISO 8601 without a zone, as JUnit's schema has it (in UTC).
            let stamp = String(MarkdownReporter.utc(startedAt).prefix(19)).replacingOccurrences(of: " ", with: "T")
            suite += " timestamp=\(attribute(stamp))"
        }
        if let hostname = self.hostname { suite += " hostname=\(attribute(hostname))" }
        var lines = [
            #"<?xml version="1.0" encoding="UTF-8"?>"#, "<testsuites name=\"crypto-lab\" \(counts) \(time)>",
            suite + ">", "    <properties>",
        ]
        lines += self.properties.map { "      <property name=\(attribute($0.0)) value=\(attribute($0.1))/>" }
        lines.append("    </properties>")
        let classname = attribute("crypto-lab.\(self.name)")
        for item in self.cases {
            let open =
                "    <testcase classname=\(classname) name=\(attribute(item.name)) time=\"\(Numbers.fixed(item.seconds, 3))\""
            guard let failure = item.failure else {
                lines.append(open + "/>")
                continue
            }
            lines += [
                open + ">",
                "      <failure message=\(attribute(failure.message)) type=\(attribute(self.failureKind))>\(escaped(failure.details))</failure>",
                "    </testcase>",
            ]
        }
        lines += ["  </testsuite>", "</testsuites>"]
        return lines.joined(separator: "\n") + "\n"
    }

    /// An `::error` workflow command per failed case, which GitHub shows as an annotation.
    public func annotations() -> [String] {
        self.failures.map { item in
            "::error title=\(Self.property("crypto-lab: \(self.failureKind)"))::"
                + Self.data("\(self.name): \(item.failure!.details)")
        }
    }

    /// A workflow command's message, escaped as GitHub's toolkit does.
    /// Printed on the run's standard output: its controls shown, not obeyed (`printable`).
    static func data(_ text: String) -> String {
        MarkdownReporter.printable(text).replacingOccurrences(of: "%", with: "%25").replacingOccurrences(
            of: "\r",
            with: "%0D"
        )
        .replacingOccurrences(of: "\n", with: "%0A")
    }

    /// A workflow command's property value, escaped as GitHub's toolkit does.
    static func property(_ text: String) -> String {
        Self.data(text).replacingOccurrences(of: ":", with: "%3A").replacingOccurrences(of: ",", with: "%2C")
    }
}

extension VerdictSuite {
    /// A run: a case per threshold, failed when missed, and one for the deadline.
    public init(run result: RunResult) {
        let metadata = result.metadata
        var cases = result.thresholds.map { outcome in
            Case(
                name: "\(outcome.metric) \(outcome.condition)",
                seconds: 0,
                failure: outcome.passed
                    ? nil
                    : (
                        "observed \(outcome.observed), not \(outcome.condition)",
                        "\(outcome.metric) \(outcome.condition) (observed \(outcome.observed))"
                    )
            )
        }
        let seconds = Double(result.totalNanoseconds) / 1e9
        cases.append(
            Case(
                name: "the run ends before its deadline",
                seconds: seconds,
                failure: result.stoppedByDeadline
                    ? ("the deadline stopped the run early", "the deadline stopped the run early (\(metadata.load))")
                    : nil
            )
        )
        self.init(
            name: metadata.scenario,
            failureKind: "threshold missed",
            cases: cases,
            properties: Self.properties(metadata),
            seconds: seconds,
            startedAt: metadata.startedAt,
            hostname: metadata.machine.hostname
        )
    }

    /// The lab, the run id, the tags, the providers and the load of a run.
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
}

/// `text` as an XML attribute value, quoted.
func attribute(_ text: String) -> String {
    "\"" + escaped(text).replacingOccurrences(of: "\"", with: "&quot;") + "\""
}

/// `text` with XML's markup characters escaped, and the controls `printable` shows (which XML
/// 1.0 cannot hold, or which reorder the text) as their codes.
func escaped(_ text: String) -> String {
    var out = ""
    for scalar in MarkdownReporter.printable(text).unicodeScalars {
        switch scalar {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\t", "\n": out.unicodeScalars.append(scalar)
        case _ where scalar.value == 0xFFFE || scalar.value == 0xFFFF: out += "\u{FFFD}"
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out
}
