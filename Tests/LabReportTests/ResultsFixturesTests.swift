import Foundation
import LabCore
import LabReport
import LabResults
import LabTestSupport
import Testing

/// `results.json` documents as the lab wrote them, committed under Fixtures/: each still
/// reads, the current ones write back byte for byte, and an older one (written before
/// traffic, CPU time, intervals and the lab's provenance were kept) reads with those empty.
@Suite(.tier(.unit)) struct ResultsFixturesTests {
    /// Tests/LabReportTests/Fixtures.
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    /// Documents the current lab wrote (docs in Fixtures/README.md).
    static let current = ["closed-cpu-intervals.json", "rounds-calibrated.json", "matrix.json", "open-stages.json"]

    /// The gate's first baseline (Benchmarks/gate/run-1.json at 97bd2b1, 2026-11-24).
    static let older = "older-counted-gate-2026-11-24.json"

    /// Documents of older formats: the gate's first baseline, and its baseline of f7e3039
    /// (recorded before each step's figures had a p95).
    static let olderOnes = [Self.older, "older-counted-gate-before-p95.json"]

    static func data(_ name: String) throws -> Data {
        try Data(contentsOf: Self.folder.appendingPathComponent(name))
    }

    static func read(_ name: String) throws -> RunResult {
        try RunResult.read(from: Self.folder.appendingPathComponent(name))
    }

    static func written(_ result: RunResult) throws -> Data {
        try result.jsonData() + Data("\n".utf8)
    }

    @Test(arguments: Self.current + Self.olderOnes)
    func everyDocumentReads(name: String) throws {
        let result = try Self.read(name)
        #expect(!result.groups.isEmpty)
        #expect(result.groups.allSatisfy { !$0.steps.isEmpty })
    }

    @Test(
        "A document the lab wrote is written back the same, byte for byte, but for a mean beyond its min or max",
        arguments: Self.current
    )
    func writesTheSameDocument(name: String) throws {
        let original = try Self.meansWithinSamples(try Self.data(name))
        let again = try Self.written(try Self.read(name))
        // As parsed JSON first, so that a difference names its key.
        let parsed = try JSONSerialization.jsonObject(with: original) as? NSDictionary
        let reparsed = try JSONSerialization.jsonObject(with: again) as? NSDictionary
        #expect(parsed != nil && parsed == reparsed)
        #expect(again == original)
    }

    @Test("An older document is written back the same but for the figures added since (p95)", arguments: Self.olderOnes)
    func olderDocumentWritesBack(name: String) throws {
        let original =
            try JSONSerialization.jsonObject(with: try Self.meansWithinSamples(try Self.data(name))) as? NSDictionary
        let again = try JSONSerialization.jsonObject(with: try Self.written(try Self.read(name)))
        #expect(original != nil && original == Self.withoutP95(again) as? NSDictionary)
    }

    /// `document` with each step's mean kept within its min and max, as the lab now writes it:
    /// before, the mean of the histogram's bucket middles could lie beyond them (a step of one
    /// sample of 18,693 ns had a mean of 18,696), and a document that has one is written back
    /// with the min or the max there instead.
    static func meansWithinSamples(_ document: Data) throws -> Data {
        let text = String(decoding: document, as: UTF8.self)
        let number = "(-?[0-9][0-9.eE+-]*)"
        let expression = try NSRegularExpression(
            pattern: "\"max\" : \(number),(\\s*)\"mean\" : \(number),(\\s*)\"min\" : \(number)"
        )
        var result = ""
        var last = text.startIndex
        for match in expression.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
            let parts = (1...5).compactMap { Range(match.range(at: $0), in: text).map { String(text[$0]) } }
            guard parts.count == 5, let max = Double(parts[0]), let mean = Double(parts[2]), let min = Double(parts[4]),
                let whole = Range(match.range, in: text)
            else { continue }
            let kept = mean < min ? parts[4] : mean > max ? parts[0] : parts[2]
            result += text[last..<whole.lowerBound]
            result += "\"max\" : \(parts[0]),\(parts[1])\"mean\" : \(kept),\(parts[3])\"min\" : \(parts[4])"
            last = whole.upperBound
        }
        return Data((result + text[last...]).utf8)
    }

    /// `json` without the `p95` of each step's `statistics`.
    static func withoutP95(_ json: Any) -> Any {
        if var object = json as? [String: Any] {
            if var statistics = object["statistics"] as? [String: Any] {
                statistics.removeValue(forKey: "p95")
                object["statistics"] = statistics
            }
            return object.mapValues(Self.withoutP95)
        }
        if let array = json as? [Any] { return array.map(Self.withoutP95) }
        return json
    }

    @Test("An older document reads: what it lacks is empty, what it has survives a write")
    func olderDocumentReads() throws {
        let result = try Self.read(Self.older)
        #expect(result.metadata.lab == nil)
        #expect(result.metadata.counter != nil)
        #expect(result.cpu == nil && result.intervals == nil && result.stages == nil && result.matrixMetric == nil)
        #expect(result.rounds.isEmpty)
        #expect(result.calibration != nil && result.memory != nil)
        for group in result.groups {
            #expect(group.traffic.isEmpty && group.setupTraffic.isEmpty)
            #expect(group.packets.isEmpty && group.setupPackets.isEmpty)
            #expect(group.errorMessages.isEmpty && group.parameters.isEmpty)
            #expect(!group.details.isEmpty)
        }
        // Written again and read back: the same measurements.
        let reread = try RunResult.decode(try Self.written(result))
        #expect(reread.groups.map(\.key) == result.groups.map(\.key))
        for (group, source) in zip(reread.groups, result.groups) {
            #expect(group.steps == source.steps)
            #expect(group.iterations == source.iterations && group.errors == source.errors)
            #expect(group.outcomes == source.outcomes)
        }
        #expect(reread.metadata == result.metadata && reread.calibration == result.calibration)
    }
}
