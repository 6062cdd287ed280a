import Foundation
import Histogram
import LabCore
import LabReport
import LabResults
import LabTestSupport
import SwiftCSV
import Testing

@Suite(.tier(.unit)) struct CSVReporterTests {
    /// The header docs/reports.md documents, spelled out so a change to `columns` is a test failure.
    static let documentedHeader =
        "flow,suite,provider,transport,step,count,errors,min_us,p50_us,p90_us,p99_us,p99_9_us,max_us,mean_us,"
        + "stddev_us,ops_per_s"

    @Test func writesTheDocumentedColumnsAndOneRowPerGroupAndStep() throws {
        let result = Fixture.result()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = try CSVReporter().write(result, to: directory)
        #expect(files.map(\.lastPathComponent) == ["results.csv"])
        let text = try String(contentsOf: directory.appendingPathComponent("results.csv"), encoding: .utf8)
        #expect(text.hasPrefix(Self.documentedHeader + "\n"))
        #expect(CSVReporter.columns.joined(separator: ",") == Self.documentedHeader)

        let csv = try NamedCSV(string: text, delimiter: .comma)
        #expect(csv.header == CSVReporter.columns)
        let expected = result.groups.flatMap { group in group.orderedSteps.map { (group, $0.step) } }
        #expect(csv.rows.count == expected.count)
        #expect(csv.rows.count == 7 + 4 + 2)
        for (row, (group, step)) in zip(csv.rows, expected) {
            #expect(row["flow"] == group.key.flow)
            #expect(row["suite"] == group.key.suite)
            #expect(row["provider"] == group.key.provider)
            #expect(row["transport"] == group.key.transport)
            #expect(row["step"] == step.name)
            #expect(row.count == CSVReporter.columns.count)
        }
    }

    @Test func valuesMatchTheHistograms() throws {
        let result = Fixture.result()
        let csv = try NamedCSV(string: CSVReporter().render(result), delimiter: .comma)
        let expected = result.groups.flatMap { group in group.orderedSteps.map { (group, $0.step, $0.histogram) } }
        try #require(csv.rows.count == expected.count)
        for (row, (group, step, histogram)) in zip(csv.rows, expected) {
            func micros(_ column: String) throws -> Double { try #require(Double(row[column] ?? "")) }
            let nanoseconds = 1000.0
            #expect(row["count"] == String(histogram.totalCount))
            let errors: UInt64 = step == .exchange || group.steps[.exchange] == nil ? group.errorCount : 0
            #expect(row["errors"] == String(errors))
            // Three decimals of a microsecond is the nanosecond: the figures are exact.
            #expect(try (micros("min_us") * nanoseconds).rounded() == Double(histogram.min))
            #expect(try (micros("p50_us") * nanoseconds).rounded() == Double(histogram.valueAtPercentile(50)))
            #expect(try (micros("p90_us") * nanoseconds).rounded() == Double(histogram.valueAtPercentile(90)))
            #expect(try (micros("p99_us") * nanoseconds).rounded() == Double(histogram.valueAtPercentile(99)))
            #expect(try (micros("p99_9_us") * nanoseconds).rounded() == Double(histogram.valueAtPercentile(99.9)))
            #expect(try (micros("max_us") * nanoseconds).rounded() == Double(histogram.maxRecorded))
            #expect(try abs(micros("mean_us") * nanoseconds - histogram.mean) <= 0.5)
            #expect(try abs(micros("stddev_us") * nanoseconds - histogram.stdDeviation) <= 0.5)
            let rate = Double(histogram.totalCount) / (Double(Fixture.measuredNanoseconds) / 1e9)
            #expect(try abs(micros("ops_per_s") - rate) <= 0.05)
        }
        // The insecure group's three failures count against its exchange row only.
        let classic = csv.rows.filter { $0["suite"] == "classic" }
        #expect(classic.map { $0["errors"] } == ["0", "0", "0", "3"])
    }

    @Test func quotesFieldsThatNeedIt() throws {
        let awkward = #"odd,"name""#
        let group = GroupResult(
            key: GroupKey(flow: "cx", suite: "line\nbreak", provider: awkward, transport: "in-process"),
            flowKind: "cx",
            insecure: false,
            steps: [.exchange: Fixture.histogram([1000, 2000])]
        )
        var result = Fixture.result()
        result.groups = [group]
        let text = CSVReporter().render(result)
        #expect(text.contains(#","line"# + "\n" + #"break","odd,""name""","#))
        let csv = try NamedCSV(string: text, delimiter: .comma)
        #expect(csv.rows.count == 1)
        #expect(csv.rows.first?["provider"] == awkward)
        #expect(csv.rows.first?["suite"] == "line\nbreak")
        #expect(csv.rows.first?["min_us"] == "1.000")
    }

    @Test func matchesItsSnapshot() throws {
        try expectSnapshot(CSVReporter().render(Fixture.result()), named: "results.csv")
    }
}
