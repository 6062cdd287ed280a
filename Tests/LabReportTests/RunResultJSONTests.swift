import Foundation
import Histogram
import LabCore
import LabReport
import LabResults
import LabTestSupport
import Testing

/// `results.json` as `RunResult` writes and reads it (RunResult+Codable.swift, RunResult+JSON.swift).
@Suite(.tier(.unit)) struct RunResultJSONTests {
    /// Writes `result` with the JSON reporter and loads it back.
    static func roundTrip(_ result: RunResult) throws -> RunResult {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = try JSONReporter().write(result, to: directory)
        #expect(files.map(\.lastPathComponent) == ["results.json"])
        return try RunResult.read(from: directory.appendingPathComponent("results.json"))
    }

    /// Expects two histograms to be equal in every way a report can see.
    static func expectSame(
        _ actual: Histogram<UInt64>?,
        _ expected: Histogram<UInt64>?,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard let actual, let expected else {
            Issue.record("missing histogram", sourceLocation: sourceLocation)
            return
        }
        #expect(actual == expected, sourceLocation: sourceLocation)
        #expect(actual.min == expected.min, sourceLocation: sourceLocation)
        #expect(actual.maxRecorded == expected.maxRecorded, sourceLocation: sourceLocation)
        #expect(actual.minNonZero == expected.minNonZero, sourceLocation: sourceLocation)
        #expect(
            StepStatistics(actual, window: 1_000_000_000) == StepStatistics(expected, window: 1_000_000_000),
            sourceLocation: sourceLocation
        )
    }

    @Test func roundTripKeepsEverything() throws {
        let original = Fixture.result()
        let decoded = try Self.roundTrip(original)
        #expect(decoded.metadata == original.metadata)
        #expect(decoded.scenarioText == original.scenarioText)
        #expect(decoded.measuredNanoseconds == original.measuredNanoseconds)
        #expect(decoded.totalNanoseconds == original.totalNanoseconds)
        #expect(decoded.plannedIterations == original.plannedIterations)
        #expect(decoded.completedIterations == original.completedIterations)
        #expect(decoded.warmupIterations == original.warmupIterations)
        #expect(decoded.stoppedByDeadline == original.stoppedByDeadline)
        #expect(decoded.thresholds == original.thresholds)
        #expect(decoded.groups.map(\.key) == original.groups.map(\.key))
        for (group, source) in zip(decoded.groups, original.groups) {
            #expect(group.flowKind == source.flowKind)
            #expect(group.insecure == source.insecure)
            #expect(group.errors == source.errors)
            #expect(Set(group.steps.keys) == Set(source.steps.keys))
            for (step, histogram) in source.steps {
                Self.expectSame(group.steps[step], histogram)
                #expect(decoded.statistics(group, step) == original.statistics(source, step))
            }
        }
        // Fractions of a second survive to the millisecond.
        var precise = original
        precise.metadata.startedAt = Date(timeIntervalSince1970: 1_767_225_600.25)
        #expect(try Self.roundTrip(precise).metadata.startedAt == precise.metadata.startedAt)
    }

    @Test(
        arguments: [
            [],
            [0],
            [7],
            [0, 0, 7],
            [1000, 1001],
            // One bucket 64 ns wide holding both the minimum and the maximum.
            [100_000, 100_010, 100_020],
            [100_003, 100_003],
            [999, 123_456_789, 123_456_790, 123_456_791],
            [30_000_000_000, 1],
        ] as [[UInt64]]
    )
    func sparseHistogramRebuildsExactly(values: [UInt64]) throws {
        let original = Fixture.histogram(values)
        let sparse = SparseHistogram(original)
        #expect(sparse.significantDigits == 3)
        #expect(sparse.lowestDiscernibleValue == 1)
        #expect(sparse.counts.reduce(0) { $0 + $1.count } == UInt64(values.count))
        Self.expectSame(try sparse.histogram(), original)
        let data = try JSONEncoder().encode(sparse)
        Self.expectSame(try JSONDecoder().decode(SparseHistogram.self, from: data).histogram(), original)
    }

    @Test func rebuildsHistogramsWithAnotherLayout() throws {
        var original = Histogram<UInt64>(lowestDiscernibleValue: 1000, highestTrackableValue: 2000)
        original.autoResize = true
        var random = LCG(seed: 9)
        for _ in 0..<500 { original.record(1000 + random.next() % 5_000_000) }
        let rebuilt = try SparseHistogram(original).histogram()
        Self.expectSame(rebuilt, original)
        #expect(rebuilt.lowestDiscernibleValue == 1000)
    }

    @Test func storesHistogramsSparsely() throws {
        let data = try Fixture.result().jsonData()
        let text = String(decoding: data, as: UTF8.self)
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(root["format"] as? String == RunResult.format)
        #expect(root["errors"] as? Int == 3)
        let groups = try #require(root["groups"] as? [[String: Any]])
        let x25519 = try #require(groups.first { ($0["key"] as? [String: Any])?["suite"] as? String == "x25519" })
        let steps = try #require(x25519["steps"] as? [[String: Any]])
        #expect(
            steps.map { $0["step"] as? String } == [
                "keygen.client", "wrap", "unwrap", "encrypt", "decrypt", "verify", "exchange",
            ]
        )
        let histogram = try #require(steps.first?["histogram"] as? [String: Any])
        #expect(Set(histogram.keys) == ["significantDigits", "lowestDiscernibleValue", "counts"])
        #expect(histogram["significantDigits"] as? Int == 3)
        #expect(histogram["lowestDiscernibleValue"] as? Int == 1)
        let counts = try #require(histogram["counts"] as? [[Int]])
        #expect(!counts.isEmpty && counts.allSatisfy { $0.count == 2 })
        #expect(counts.reduce(0) { $0 + $1[1] } == 400)
        #expect(counts.map { $0[0] } == counts.map { $0[0] }.sorted())
        // Pretty-printed, keys sorted, ISO 8601 dates.
        #expect(text.contains("\n  \"completedIterations\" : 800,\n  \"errors\" : 3,\n"))
        #expect(text.contains("\"startedAt\" : \"2026-01-01T00:00:00.000Z\""))
    }

    @Test("Every millisecond survives any number of writes and reads (lab merge of merges)")
    func datesKeepTheirMillisecond() throws {
        var result = Fixture.result()
        result.groups = []
        for millisecond in stride(from: 0, to: 1000, by: 7) {
            let text =
                "2026-11-25T06:38:32." + String(repeating: "0", count: millisecond < 10 ? 2 : millisecond < 100 ? 1 : 0)
                + "\(millisecond)Z"
            result.metadata.startedAt = try Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text)
            for _ in 0..<3 {
                let data = try result.jsonData()
                #expect(String(decoding: data, as: UTF8.self).contains("\"startedAt\" : \"\(text)\""), "\(text)")
                result = try RunResult.decode(data)
            }
        }
    }

    @Test func acceptsDatesWithoutFractionsOfASecond() throws {
        let text = String(decoding: try Fixture.result().jsonData(), as: UTF8.self)
        let plain = text.replacingOccurrences(of: "\"2026-01-01T00:00:00.000Z\"", with: "\"2026-01-01T00:00:00Z\"")
        #expect(plain != text)
        #expect(try RunResult.decode(Data(plain.utf8)).metadata.startedAt == Fixture.startedAt)
        let wrong = text.replacingOccurrences(of: "\"2026-01-01T00:00:00.000Z\"", with: "\"yesterday\"")
        #expect(throws: LabError.self) { try RunResult.decode(Data(wrong.utf8)) }
    }

    @Test func mergingDecodedResultsEqualsMergingTheOriginals() throws {
        let first = Fixture.result(seed: 1)
        let second = Fixture.result(seed: 2)
        let decodedFirst = try Self.roundTrip(first)
        let decodedSecond = try Self.roundTrip(second)
        for index in first.groups.indices {
            var original = first.groups[index]
            original.merge(second.groups[index])
            var decoded = decodedFirst.groups[index]
            decoded.merge(decodedSecond.groups[index])
            #expect(decoded.errors == original.errors)
            for (step, histogram) in original.steps {
                Self.expectSame(decoded.steps[step], histogram)
                // Different seeds, so the merge really added something.
                #expect(histogram.totalCount == 2 * (first.groups[index].steps[step]?.totalCount ?? 0))
            }
        }
    }

    @Test func rejectsAnUnknownFormat() throws {
        let text = String(decoding: try Fixture.result().jsonData(), as: UTF8.self)
        let other = text.replacingOccurrences(of: "\"\(RunResult.format)\"", with: "\"crypto-lab/results/99\"")
        #expect(other != text)
        let error = try #require(throws: LabError.self) { try RunResult.decode(Data(other.utf8)) }
        #expect(error.code == .invalidScenario)
        #expect(error.message.contains("unknown results format 'crypto-lab/results/99'"))
        // Decoded directly, without the entry point's first look at the tag.
        let direct = try #require(throws: LabError.self) {
            try JSONDecoder().decode(RunResult.self, from: Data(other.utf8))
        }
        #expect(direct.code == .invalidScenario)
    }

    @Test func namesTheMissingKey() throws {
        let data = try Fixture.result().jsonData()
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var metadata = try #require(object["metadata"] as? [String: Any])
        metadata.removeValue(forKey: "build")
        object["metadata"] = metadata
        let broken = try JSONSerialization.data(withJSONObject: object)
        let error = try #require(throws: LabError.self) { try RunResult.decode(broken, source: "x.json") }
        #expect(error.message.contains("x.json is not a crypto-lab results document: metadata: missing key 'build'"))
    }

    @Test func rejectsAnImpossibleHistogram() throws {
        let data = try Fixture.result().jsonData()
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var groups = try #require(object["groups"] as? [[String: Any]])
        var steps = try #require(groups[0]["steps"] as? [[String: Any]])
        var histogram = try #require(steps[0]["histogram"] as? [String: Any])
        histogram["significantDigits"] = 9
        steps[0]["histogram"] = histogram
        groups[0]["steps"] = steps
        object["groups"] = groups
        let broken = try JSONSerialization.data(withJSONObject: object)
        let error = try #require(throws: LabError.self) { try RunResult.decode(broken) }
        #expect(error.message.contains("groups[0].steps[0].histogram.significantDigits"))
    }
}
