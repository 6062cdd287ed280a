import Foundation
import LabCore
import LabReport
import LabResults
import LabTestSupport
import Testing

/// A flow entry's `"matrix"`: one group per combination, each with its parameters, and the
/// matrix's metric against its parameter in report.md and matrix.svg.
@Suite(.tier(.unit)) struct MatrixTests {
    static let payloads = [427, 4096, 65_536, 1_048_576]

    @Test("payloadBytes 427 B … 1 MiB × 2 suites: one group per cell, and a metric-vs-parameter chart")
    func payloadsTimesSuites() async throws {
        // Each client's picks are dealt from a deck of the 8 cells: 16 iterations run each
        // cell exactly twice per client.
        let result = try await TestPlan.run(
            """
            { "name": "matrix", "server": { "transport": "in-process" }, "clients": { "count": 2 },
              "load": { "iterations": 16 },
              "flows": [ { "flow": "cx", "matrix": { "suite": ["x25519", "pq"], "options.payloadBytes": \(Self.payloads) } } ],
              "report": { "matrixMetric": "bytes.received" } }
            """
        )
        #expect(result.errorCount == 0)
        #expect(result.groups.count == 8, "\(result.groups.map(\.key.flow))")
        for suite in ["x25519", "pq"] {
            var received: [Double] = []
            for payload in Self.payloads {
                let group = try #require(result.groups.first { $0.key.flow == "cx-\(suite)-\(payload)" })
                #expect(group.key.suite == suite && group.iterations == 4)
                #expect(group.parameters == ["suite": suite, "options.payloadBytes": "\(payload)"])
                received.append(try #require(group.bytesPerIteration?.received))
            }
            // The answer carries the payload encrypted (AES-GCM: as long as the plaintext), so
            // it grows with it, byte for byte but for the plist's length fields and offsets (wider past 64 KiB).
            for (index, payload) in Self.payloads.enumerated().dropFirst() {
                let grown = received[index] - received[0]
                #expect(abs(grown - Double(payload - Self.payloads[0])) <= 64, "\(suite): \(received)")
            }
        }

        let figures = try #require(MatrixFigures.of(result))
        #expect(figures.parameter == "options.payloadBytes" && figures.numeric && figures.unit == "bytes")
        #expect(figures.xs == Self.payloads.map(String.init))
        #expect(
            figures.series.map(\.label).sorted() == [
                "cx · suite=pq · swift-crypto · in-process", "cx · suite=x25519 · swift-crypto · in-process",
            ]
        )
        for series in figures.series {
            let suite = series.label.contains("pq") ? "pq" : "x25519"
            for (x, value) in series.points {
                let group = result.groups.first { $0.key.flow == "cx-\(suite)-\(x)" }
                #expect(value == group?.bytesPerIteration?.received, "\(suite) \(x)")
            }
        }

        let files = MarkdownReporter(options: ReportOptions()).render(result)
        let report = try #require(files.first { $0.name == MarkdownReporter.fileName }?.text)
        #expect(report.contains("## Matrix") && report.contains("| Series | 427 | 4096 | 65536 | 1048576 |"))
        let chart = try #require(files.first { $0.name == MarkdownReporter.matrixChartName }?.text)
        #expect(
            chart.components(separatedBy: "data-x=\"427,4096,65536,1048576\"").count == 3,
            "two lines of four points"
        )

        // results.json keeps each cell's parameters and the metric.
        let reread = try RunResult.decode(try result.jsonData())
        #expect(reread.matrixMetric == "bytes.received" && MatrixFigures.of(reread) == figures)
    }

    @Test("A matrix that does not plan names the file's entry and the cell")
    func problemsNameTheCell() throws {
        #expect(throws: LabError.self) {
            try TestPlan.from(
                #"{ "name": "m", "flows": [ { "flow": "cx", "matrix": { "options.payloadBytes": [427, -1] } } ] }"#
            )
        }
        do {
            _ = try TestPlan.from(
                #"{ "name": "m", "flows": [ { "flow": "cx", "matrix": { "options.payloadBytes": [427, -1] } } ] }"#
            )
        } catch let error as LabError {
            #expect(
                error.message.contains("$.flows[0][options.payloadBytes=-1].options.payloadBytes"),
                "\(error.message)"
            )
            #expect(!error.message.contains("payloadBytes=427]"), "\(error.message)")
        }
    }
}
