import LabCore
import LabReport
import LabResults
import LabScenario

/// The few lines `lab run` prints at the end: the exchange figures per group and the thresholds,
/// with the controls in names and messages from elsewhere shown (`MarkdownReporter.printable`).
enum Summary {
    static func text(_ result: RunResult) -> String {
        var lines: [String] = []
        let seconds = Double(result.measuredNanoseconds) / 1e9
        lines.append(
            "\(result.metadata.scenario): \(result.completedIterations) iterations in \(TimeSpan.trimmed(seconds)) s measured, \(result.errorCount) errors"
        )
        if let notWhole = MarkdownReporter.notWhole(result.metadata) { lines.append("  FAILED: " + notWhole) }
        if let shards = MarkdownReporter.shardSentence(result.metadata) { lines.append("  shards: " + shards) }
        let flowWidth = max(8, result.groups.map(\.key.flow.count).max() ?? 0) + 1
        let suiteWidth = max(8, result.groups.map(\.key.suite.count).max() ?? 0) + 1
        let providerWidth = max(8, result.groups.map(\.key.provider.count).max() ?? 0) + 1
        var header = "  " + "flow".padding(flowWidth) + "suite".padding(suiteWidth)
        header +=
            "provider".padding(providerWidth) + "exchange p50".padding(14) + "p99".padding(14) + "ops/s".padding(10)
        header += "bytes out / in"
        lines.append(header)
        for group in result.groups {
            guard let statistics = result.statistics(group, .exchange) else { continue }
            var line = "  " + group.key.flow.padding(flowWidth) + group.key.suite.padding(suiteWidth)
            line += group.key.provider.padding(providerWidth)
            line += TimeSpan.format(nanoseconds: statistics.p50).padding(14)
            line += TimeSpan.format(nanoseconds: statistics.p99).padding(14)
            line += TimeSpan.trimmed((statistics.opsPerSecond * 10).rounded() / 10).padding(10)
            if let bytes = group.bytesPerIteration {
                line += "\(ByteSize.format(bytes.sent)) / \(ByteSize.format(bytes.received))"
            }
            lines.append(line.trimmingTrailingSpaces + (group.insecure ? "  (insecure)" : ""))
        }
        if result.errorCount > 0 {
            let messages = result.errorMessagesByKind
            for (kind, count) in result.errorsByKind.sorted(by: { ($1.value, $0.key) < ($0.value, $1.key) }) {
                // On one line: a server's message with line breaks could write lines that look like the lab's.
                let first = messages[kind].map {
                    ", first: " + $0.split(whereSeparator: \.isNewline).joined(separator: " ")
                }
                lines.append("  errors: \(kind) \(count)" + (first ?? ""))
            }
        }
        if let memory = MarkdownReporter.memorySummary(result) { lines.append("  memory: " + memory) }
        if let cpu = result.cpu {
            if let text = MarkdownReporter.processCPU(cpu) {
                lines.append("  cpu: " + text + (cpu.includesServer ? ", clients and server" : ", clients"))
            }
            if let server = cpu.server, let text = MarkdownReporter.serverCPU(server) {
                lines.append("  server cpu: " + text)
            }
            if let warning = cpu.warning { lines.append("  warning: " + warning) }
        }
        for outcome in result.thresholds {
            let verdict = outcome.passed ? "met   " : "MISSED"
            lines.append("  \(verdict) \(outcome.metric) \(outcome.condition) (observed \(outcome.observed))")
        }
        return MarkdownReporter.printable(lines.joined(separator: "\n"))
    }
}

extension String {
    /// The text without the spaces at its end.
    fileprivate var trimmingTrailingSpaces: String {
        String(self.reversed().drop { $0 == " " }.reversed())
    }
}
