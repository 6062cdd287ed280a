import Foundation
import Histogram
import LabCore
import LabReport
import LabResults
import LabTestSupport
import Testing

/// `RunIntervals` in results.json, `timeseries.csv` and `lab merge`, on made-up intervals
/// whose every figure is known.
@Suite(.tier(.unit)) struct IntervalReportTests {
    static let key = GroupKey(flow: "cx", suite: "x25519", provider: "swift-crypto", transport: "in-process")
    static let origin = Date(timeIntervalSince1970: 1_767_225_600)

    /// An interval slice: `count` exchanges of `nanoseconds` each, and `errors` failures.
    static func slice(count: Int, nanoseconds: UInt64, errors: UInt64 = 0) -> RunIntervals.Slice {
        var histogram = RunIntervals.histogram()
        for offset in 0..<count { histogram.record(nanoseconds + UInt64(offset)) }
        var sign = RunIntervals.histogram()
        sign.record(nanoseconds / 4)
        return RunIntervals.Slice(
            steps: [.exchange: SparseHistogram(histogram), .sign: SparseHistogram(sign)],
            errors: errors
        )
    }

    /// Intervals 0, 1 and 3 (2 has nothing: a gap), 1 s wide, from `origin`.
    static func intervals(origin: Date = origin) -> RunIntervals {
        RunIntervals(
            width: 1_000_000_000,
            origin: origin,
            groups: [
                key: [
                    0: slice(count: 10, nanoseconds: 1_000_000),
                    1: slice(count: 20, nanoseconds: 2_000_000, errors: 2),
                    3: slice(count: 5, nanoseconds: 900_000_000),
                ]
            ]
        )
    }

    static func result(_ intervals: RunIntervals?, shard: String? = nil) -> RunResult {
        var result = Fixture.result(thresholds: false)
        result.intervals = intervals
        result.metadata.shard = shard
        return result
    }

    @Test("results.json keeps every interval exactly, and says where each starts")
    func documentRoundTrip() throws {
        let original = Self.result(Self.intervals())
        let data = try original.jsonData()
        let decoded = try RunResult.decode(data)
        #expect(decoded.intervals == original.intervals)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("\"start\" : \"2026-01-01T00:00:03.000Z\""), "interval 3's start for readers")
        #expect(text.contains("\"widthNanoseconds\" : 1000000000"))
    }

    @Test("A histogram pair is written on one line, and the document reads back the same")
    func pairsOnOneLine() throws {
        var original = Self.result(Self.intervals())
        // Text that looks like a pair stays as it is: strings are never touched.
        original.metadata.description = "[\n  1,\n  2\n] and [3, 4]"
        let data = try original.jsonData()
        let text = String(decoding: data, as: UTF8.self)
        // Exchanges of 1,000,000 to 1,000,009 ns: one bucket, split at the exact maximum.
        #expect(text.contains("[1000000, 9],\n") && text.contains("[1000009, 1]\n"), "[value, count] pairs on one line")
        #expect(text.firstMatch(of: /\[\n *[0-9]+,\n *[0-9]+\n *\]/) == nil, "no pair left on four lines")
        #expect(text.contains("\"description\" : \"[\\n  1,\\n  2\\n] and [3, 4]\""), "the string as it was")
        let decoded = try RunResult.decode(data)
        #expect(decoded.metadata.description == original.metadata.description)
        #expect(decoded.intervals == original.intervals)
        RunResultJSONTests.expectSame(decoded.groups[0].steps[.exchange], original.groups[0].steps[.exchange])
        // The same document through Foundation's own pretty printer parses to the same object.
        let reference = try JSONSerialization.jsonObject(with: data) as? NSDictionary
        let pretty = try JSONSerialization.data(withJSONObject: reference!, options: [.prettyPrinted, .sortedKeys])
        #expect(try JSONSerialization.jsonObject(with: pretty) as? NSDictionary == reference)
    }

    @Test("A document whose interval histogram is not in the interval layout is refused, naming where")
    func refusesAnotherLayout() throws {
        var histogram = Histogram<UInt64>(numberOfSignificantValueDigits: .three)
        histogram.record(5)
        var intervals = Self.intervals()
        intervals.groups[Self.key]![1]!.steps[.sign] = SparseHistogram(histogram)
        let data = try Self.result(intervals).jsonData()
        #expect {
            try RunResult.decode(data, source: "r.json")
        } throws: { error in
            let message = (error as? LabError)?.message ?? ""
            return message.contains("intervals.groups") && message.contains("[0].intervals[1].steps[0].histogram")
                && message.contains("2 significant digits")
        }
    }

    @Test("timeseries.csv: a row per interval, group and step, gaps included, failures on the exchange row")
    func timeseries() throws {
        let text = try #require(CSVReporter().renderTimeseries(Self.result(Self.intervals())))
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.first == CSVReporter.timeseriesColumns.joined(separator: ","))
        // 4 intervals (0 to 3, 2 empty) × 2 steps (sign before exchange, in report order).
        #expect(lines.count == 1 + 4 * 2)
        #expect(
            lines[1]
                == "0,2026-01-01T00:00:00.000Z,0.000,cx,x25519,swift-crypto,in-process,sign,1,0,1.0,250.000,250.000,250.000,250.000"
        )
        #expect(
            lines[4].hasPrefix("1,2026-01-01T00:00:01.000Z,1.000,cx,x25519,swift-crypto,in-process,exchange,20,2,20.0,")
        )
        #expect(
            lines[6]
                == "2,2026-01-01T00:00:02.000Z,2.000,cx,x25519,swift-crypto,in-process,exchange,0,0,0.0,0.000,0.000,0.000,0.000"
        )
        let stalled = lines[8].split(separator: ",")
        #expect(stalled[0] == "3" && stalled[7] == "exchange" && stalled[8] == "5")
        #expect(Double(stalled[13])! >= 900_000, "interval 3's p99 in µs: \(stalled[13])")
        #expect(CSVReporter().renderTimeseries(Self.result(nil)) == nil)
    }

    @Test("Merging shards adds their intervals by wall-clock time, to the nearest interval")
    func mergeAligns() throws {
        // The second shard's grid starts 1.3 s after the first's: its interval 0 is the
        // first's interval 1 (0.3 s off, said in a note).
        let first = Self.intervals()
        let second = Self.intervals(origin: Self.origin.addingTimeInterval(1.3))
        let merged = try RunMerge.merge(
            [Self.result(first, shard: "1/2"), Self.result(second, shard: "2/2")],
            sources: ["a", "b"]
        )
        let intervals = try #require(merged.result.intervals)
        #expect(intervals.origin == Self.origin)
        let slices = try #require(intervals.groups[Self.key])
        #expect(slices.keys.sorted() == [0, 1, 2, 3, 4])
        #expect(slices[0]?.iterations == 10)
        #expect(slices[1]?.iterations == 22 + 10, "the first's interval 1 and the second's 0")
        #expect(slices[2]?.iterations == 22)
        #expect(slices[3]?.iterations == 5)
        #expect(slices[4]?.iterations == 5)
        #expect(slices[1]?.errors == 2)
        #expect(merged.notes.contains { $0.contains("samples moved by up to 300 ms") }, "\(merged.notes)")

        // Shards 0.04 s apart (one --start-at): no interval moves, and no note.
        let close = try RunMerge.merge(
            [
                Self.result(first, shard: "1/2"),
                Self.result(Self.intervals(origin: Self.origin.addingTimeInterval(0.04)), shard: "2/2"),
            ],
            sources: ["a", "b"]
        )
        #expect(close.result.intervals?.groups[Self.key]?[1]?.iterations == 44)
        #expect(!close.notes.contains { $0.contains("intervals") }, "\(close.notes)")
    }

    @Test("Intervals are left out, with a note, for whole runs pooled and when a shard kept none; widths must agree")
    func mergeLeavesOut() throws {
        let whole = try RunMerge.merge(
            [Self.result(Self.intervals()), Self.result(Self.intervals())],
            sources: ["a", "b"]
        )
        #expect(whole.result.intervals == nil)
        #expect(whole.notes.contains { $0.contains("whole runs ran at different times") }, "\(whole.notes)")
        let missing = try RunMerge.merge(
            [Self.result(Self.intervals(), shard: "1/2"), Self.result(nil, shard: "2/2")],
            sources: ["a", "b"]
        )
        #expect(missing.result.intervals == nil)
        #expect(missing.notes.contains { $0.contains("b kept none") }, "\(missing.notes)")
        var wide = Self.intervals()
        wide.width = 10_000_000_000
        let widths = try RunMerge.merge(
            [Self.result(Self.intervals(), shard: "1/2"), Self.result(wide, shard: "2/2")],
            sources: ["a", "b"]
        )
        #expect(widths.result.intervals == nil)
        #expect(widths.notes.contains { $0.contains("different widths (a: 1 s, b: 10 s)") }, "\(widths.notes)")
    }

    @Test("A document with an interval width or index out of range is refused, naming the path")
    func refusesOutOfRange() throws {
        for (width, index, expected) in [
            (UInt64(1_000), 0, "expected an interval width from 100 ms to 1 h"),
            (UInt64(1_000_000_000), -1, "intervals[0].index: expected 0 to"),
            (UInt64(1_000_000_000), Int.max, "intervals[0].index: expected 0 to"),
        ] {
            let intervals = RunIntervals(
                width: width,
                origin: Self.origin,
                groups: [Self.key: [index: Self.slice(count: 1, nanoseconds: 5)]]
            )
            let data = try Self.result(intervals).jsonData()
            #expect {
                try RunResult.decode(data)
            } throws: { error in
                ((error as? LabError)?.message ?? "").contains(expected)
            }
        }
    }

    @Test("A group whose every iteration failed still has its failures in timeseries.csv")
    func failuresWithoutSamples() throws {
        var intervals = Self.intervals()
        let failing = GroupKey(flow: "cx", suite: "x25519", provider: "openssl", transport: "in-process")
        intervals.groups[failing] = [1: RunIntervals.Slice(errors: 7)]
        let text = try #require(CSVReporter().renderTimeseries(Self.result(intervals)))
        #expect(
            text.contains("\n1,2026-01-01T00:00:01.000Z,1.000,cx,x25519,openssl,in-process,exchange,0,7,0.0,"),
            "\(text)"
        )
    }

    @Test("The over-time chart draws a lone interval as a dot, and a run of them as a line")
    func loneIntervalIsADot() throws {
        let files = MarkdownReporter(options: ReportOptions()).render(Self.result(Self.intervals()))
        let svg = try #require(files.first { $0.name == MarkdownReporter.timelineChartName }?.text)
        // Intervals 0 and 1 have exchanges, 2 none, 3 some: a line, a gap, a dot.
        #expect(svg.contains("id=\"p50-cx-x25519-swift-crypto-in-process-0\" data-intervals=\"0 1\""))
        #expect(
            svg.contains("<circle ")
                && svg.contains("id=\"p50-cx-x25519-swift-crypto-in-process-1\" data-intervals=\"3\"")
        )
    }
}
