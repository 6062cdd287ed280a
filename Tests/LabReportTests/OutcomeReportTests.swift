import Foundation
import LabBuiltIns
import LabCore
import LabReport
import LabResults
import LabTestSupport
import SwiftCSV
import Testing

/// Outcome counts in every report: `results.json`, `report.md`, `outcomes.csv`.
@Suite(.tier(.unit)) struct OutcomeReportTests {
    /// The fixture with outcomes counted by the lockout group and by the x25519 group.
    static func result() -> RunResult {
        var result = Fixture.result()
        for index in result.groups.indices {
            switch result.groups[index].key.flow {
            case "lockout": result.groups[index].outcomes = ["postponed": 12, "attempts": 120, "locked": 3]
            case "cx" where result.groups[index].key.suite == "x25519":
                result.groups[index].outcomes = ["guessed": 0, "missed": 1_400]
            default: break
            }
        }
        return result
    }

    @Test func jsonRoundTripKeepsOutcomes() throws {
        let original = Self.result()
        let decoded = try RunResultJSONTests.roundTrip(original)
        #expect(decoded.groups.map(\.key) == original.groups.map(\.key))
        #expect(decoded.groups.map(\.outcomes) == original.groups.map(\.outcomes))
        let root = try #require(
            try JSONSerialization.jsonObject(with: try original.jsonData()) as? [String: Any]
        )
        let groups = try #require(root["groups"] as? [[String: Any]])
        let lockout = try #require(groups.first { ($0["key"] as? [String: Any])?["flow"] as? String == "lockout" })
        #expect(lockout["outcomes"] as? [String: Int] == ["attempts": 120, "locked": 3, "postponed": 12])
    }

    @Test func jsonWithoutOutcomesStillLoads() throws {
        // A document as written before outcomes existed: no `outcomes` key in any group.
        let data = try Self.result().jsonData()
        var root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let groups = try #require(root["groups"] as? [[String: Any]])
        root["groups"] = groups.map { group in
            var group = group
            group.removeValue(forKey: "outcomes")
            return group
        }
        let old = try JSONSerialization.data(withJSONObject: root)
        #expect(!String(decoding: old, as: UTF8.self).contains("outcomes"))
        let result = try RunResult.decode(old)
        #expect(result.groups.count == 3)
        #expect(result.groups.allSatisfy { $0.outcomes.isEmpty })
        #expect(result.groups.map(\.iterations) == Fixture.result().groups.map(\.iterations))
    }

    @Test func markdownHasAnOutcomesTableWhenGroupsCountedAny() throws {
        let report = try #require(MarkdownReporter().render(Self.result()).first?.text)
        let sections = report.split(separator: "\n").filter { $0.hasPrefix("## ") }
        #expect(
            sections == [
                "## Summary", "## Thresholds", "## Flow cx", "## Flow lockout", "## Outcomes", "## Charts",
                "## Scenario",
            ]
        )
        let table = """
            | Flow | Suite | Provider | Transport | attempts | guessed | locked | missed | postponed |
            |:--|:--|:--|:--|--:|--:|--:|--:|--:|
            | cx | x25519 | swift-crypto | in-process | — | 0 | — | 1,400 | — |
            | lockout | - | swift-crypto | in-process | 120 | — | 3 | — | 12 |

            """
        #expect(report.contains("## Outcomes\n\n"))
        #expect(report.contains("\n" + table), "\(report)")
        // The group that counted nothing has no row.
        #expect(!report.contains("| cx | classic |"))
    }

    @Test func markdownHasNoOutcomesSectionWithoutOutcomes() throws {
        let report = try #require(MarkdownReporter().render(Fixture.result()).first?.text)
        #expect(!report.contains("Outcomes"))
    }

    @Test func csvWritesOutcomesBesideResults() throws {
        let result = Self.result()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = try CSVReporter().write(result, to: directory)
        #expect(files.map(\.lastPathComponent) == ["results.csv", "outcomes.csv"])
        let onDisk = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(Set(onDisk) == ["results.csv", "outcomes.csv"])
        let text = try String(contentsOf: directory.appendingPathComponent("outcomes.csv"), encoding: .utf8)
        #expect(
            text == """
                flow,suite,provider,transport,outcome,count
                cx,x25519,swift-crypto,in-process,guessed,0
                cx,x25519,swift-crypto,in-process,missed,1400
                lockout,-,swift-crypto,in-process,attempts,120
                lockout,-,swift-crypto,in-process,locked,3
                lockout,-,swift-crypto,in-process,postponed,12

                """
        )
        let csv = try NamedCSV(string: text, delimiter: .comma)
        #expect(csv.header == CSVReporter.outcomeColumns)
        #expect(csv.header == ["flow", "suite", "provider", "transport", "outcome", "count"])
        #expect(csv.rows.count == 5)
        // results.csv is the same with or without outcomes.
        let results = try String(contentsOf: directory.appendingPathComponent("results.csv"), encoding: .utf8)
        #expect(results == CSVReporter().render(Fixture.result()))
    }

    @Test func csvWritesNoOutcomesFileWithoutOutcomes() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = try CSVReporter().write(Fixture.result(), to: directory)
        #expect(files.map(\.lastPathComponent) == ["results.csv"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["results.csv"])
        #expect(CSVReporter().renderOutcomes(Fixture.result()) == nil)
    }

    @Test func writeReportsListsTheOutcomesFile() throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let directory = root.appendingPathComponent("out")
        let files = try BuiltInPlugins.reporters.writeReports(Self.result(), formats: ["csv", "markdown", "json"], charts: false, to: directory)
        #expect(files.map(\.lastPathComponent) == ["results.csv", "outcomes.csv", "report.md", "results.json"])
        #expect(
            Set(try FileManager.default.contentsOfDirectory(atPath: directory.path))
                == Set(files.map(\.lastPathComponent))
        )
    }
}
