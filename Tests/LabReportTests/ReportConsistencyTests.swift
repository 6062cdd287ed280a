import Foundation
import LabCore
import LabReport
import LabResults
import LabTesting
import Testing

/// What report.md and its charts say agrees with itself and with the other reports.
@Suite(.tier(.unit)) struct ReportConsistencyTests {
    @Test("Every step table of one report is in one unit, though one group's steps take ms and another's µs")
    func oneUnitPerReport() throws {
        let (directory, _) = try MarkdownReporterTests.write(Fixture.result(), charts: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        let report = try MarkdownReporterTests.report(in: directory)
        let units = Set(
            report.split(separator: "\n").filter { $0.hasPrefix("| Step | Count | Errors | Min (") }.map { line in
                String(line.dropFirst("| Step | Count | Errors | Min (".count).prefix { $0 != ")" })
            }
        )
        #expect(units == ["µs"], "units: \(units)")
    }

    @Test("throughput.svg draws each group's ops/s as the tables and results.csv give it, not 1 s ÷ mean")
    func throughputChartIsTheTablesOps() throws {
        let result = Fixture.result()
        let (directory, _) = try MarkdownReporterTests.write(result)
        defer { try? FileManager.default.removeItem(at: directory) }
        let svg = try String(contentsOf: directory.appendingPathComponent("throughput.svg"), encoding: .utf8)
        for group in result.groups {
            let exchange = try #require(result.statistics(group, .exchange) ?? result.statistics(group, Step("login")))
            // The fixture's rates are under 1,000/s: no thousands separator.
            let drawn = String(format: "%.1f", exchange.opsPerSecond) + "/s"
            #expect(svg.contains(">\(drawn)<"), "\(group.key): \(drawn) not in the chart")
            let mean = String(format: "%.1f", 1e9 / exchange.mean) + "/s"
            #expect(!svg.contains(">\(mean)<"), "\(group.key): 1 s ÷ mean drawn")
        }
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
        let document = try ResultsDocument.decode(try ResultsDocument(result).encoded())
        #expect(try document.runResult().groups[index].errorMessages == result.groups[index].errorMessages)
    }
}
