import Foundation
import LabBuiltIns
import LabCore
import LabReport
import LabTestSupport
import Testing

@Suite(.tier(.unit)) struct ReporterRegistryTests {
    @Test func listsTheBuiltInReporters() throws {
        #expect(
            BuiltInPlugins.reporters.names == ["csv", "markdown", "html", "json", "junit", "github", "bmf", "hgrm"]
        )
        #expect(try BuiltInPlugins.reporters.make("csv") is CSVReporter)
        #expect(try BuiltInPlugins.reporters.make("json") is JSONReporter)
        let markdown = try BuiltInPlugins.reporters.make("markdown", options: ReportOptions(charts: false))
        #expect((markdown as? MarkdownReporter)?.charts == false)
    }

    @Test func rejectsAnUnknownName() throws {
        let error = try #require(throws: LabError.self) { try BuiltInPlugins.reporters.make("xml") }
        #expect(error.code == .unknownPlugin)
        #expect(
            error.message
                == "No reporter named 'xml'; known reporters: csv, markdown, html, json, junit, github, bmf, hgrm"
        )
    }

    @Test func writesEveryFormatIntoANewFolder() throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let directory = root.appendingPathComponent("Reports/report-fixture/20260101T000000Z")
        let files = try BuiltInPlugins.reporters.writeReports(
            Fixture.result(),
            formats: ["csv", "markdown", "json", "csv"],
            charts: true,
            to: directory
        )
        let names = files.map(\.lastPathComponent)
        #expect(names.first == "results.csv")
        #expect(names.last == "results.json")
        #expect(names.filter { $0 == "results.csv" }.count == 1)
        // Throughput, a latency chart per group, and x25519's other steps.
        #expect(names.filter { $0.hasSuffix(".svg") }.count == 5)
        let onDisk = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(Set(onDisk) == Set(names))
        #expect(onDisk.count == names.count)
    }

    @Test func checksEveryNameBeforeWriting() throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let directory = root.appendingPathComponent("out")
        #expect(throws: LabError.self) {
            try BuiltInPlugins.reporters.writeReports(Fixture.result(), formats: ["csv", "xml"], charts: false, to: directory)
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path))
    }
}
