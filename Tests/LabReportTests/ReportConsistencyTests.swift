import Foundation
import Histogram
import LabCore
import LabReport
import LabResults
import LabTestSupport
import Testing

/// What report.md and its charts say agrees with itself and with the other reports.
@Suite(.tier(.unit)) struct ReportConsistencyTests {
    @Test("Each step table is in the unit its own steps choose: a group of ms steps in ms, beside one in µs")
    func oneUnitPerTable() throws {
        let (directory, _) = try MarkdownReporterTests.write(Fixture.result(), charts: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        let report = try MarkdownReporterTests.report(in: directory)
        let prefix = "| Step | Count | Errors | Min ("
        let units = report.split(separator: "\n").filter { $0.hasPrefix(prefix) }.map { line in
            String(line.dropFirst(prefix.count).prefix { $0 != ")" })
        }
        // classic (a 15 ms key generation, its median p50 1.4 ms), x25519 (43 µs), lockout (10 ms).
        #expect(units == ["ms", "µs", "ms"], "units: \(units)")
    }

    @Test("throughput.svg draws each group's speed, 1 s ÷ its mean exchange (or work), not its weighted ops/s")
    func throughputChartIsSpeed() throws {
        var result = Fixture.result()
        func check(_ result: RunResult, _ step: (GroupResult) -> Step, caption: String) throws {
            let (directory, _) = try MarkdownReporterTests.write(result)
            defer { try? FileManager.default.removeItem(at: directory) }
            // Without thousands separators, as the figures below are written.
            let svg = try String(contentsOf: directory.appendingPathComponent("throughput.svg"), encoding: .utf8)
                .replacingOccurrences(of: ",", with: "")
            for group in result.groups {
                let exchange = try #require(result.statistics(group, .exchange) ?? result.statistics(group, Step("login")))
                let drawnStep = group.steps[step(group)] != nil ? step(group) : Step("login")
                let speed = try #require(result.statistics(group, drawnStep))
                let drawn = String(format: "%.1f", 1e9 / speed.mean) + "/s"
                #expect(svg.contains(">\(drawn)<"), "\(group.key): \(drawn) not in the chart")
                let ops = String(format: "%.1f", exchange.opsPerSecond) + "/s"
                #expect(ops == drawn || !svg.contains(">\(ops)<"), "\(group.key): the weighted ops/s drawn")
            }
            let report = try MarkdownReporterTests.report(in: directory)
            #expect(report.contains(caption), "\(report)")
        }
        try check(result, { _ in .exchange }, caption: "What one client does back to back: 1 s ÷ the mean exchange time")
        // With every group's work read, the chart draws exchanges per CPU-second.
        for index in result.groups.indices {
            var work = StepDetail.histogram()
            let exchange = try #require(result.groups[index].steps[.exchange] ?? result.groups[index].steps[Step("login")])
            for value in exchange.recordedValues() {
                _ = work.record(UInt64(Double(value.value) * 0.37), count: value.count)
            }
            result.groups[index].steps[.work] = work
        }
        try check(result, { _ in .work }, caption: "Exchanges per CPU-second: 1 s ÷ the mean work of an exchange")
    }

    @Test("The summary gives each error kind with its first message")
    func errorsWithTheirFirstMessage() throws {
        var result = Fixture.result()
        let index = try #require(result.groups.firstIndex { $0.key.suite == "classic" })
        result.groups[index].errorMessages = ["signatureInvalid": "The signature does not verify | twice"]
        let (directory, _) = try MarkdownReporterTests.write(result, charts: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        let report = try MarkdownReporterTests.report(in: directory)
        #expect(
            report.contains(
                "| Errors | 3 (signatureInvalid 2: \"The signature does not verify \\| twice\", decryptFailed 1) |"
            )
        )
        let document = try RunResult.decode(try result.jsonData())
        #expect(document.groups[index].errorMessages == result.groups[index].errorMessages)
    }
}
