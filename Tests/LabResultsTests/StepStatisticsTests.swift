import Foundation
import Histogram
import LabCore
import LabResults
import LabTestSupport
import Testing

/// `StepStatistics` computes the mean and standard deviation itself (the package's own
/// properties run unspecialised): the figures must stay those of `Histogram.mean` and
/// `Histogram.stdDeviation`, to the bit, but for a mean the package puts beyond the samples.
@Suite(.tier(.unit)) struct StepStatisticsTests {
    @Test("Mean and standard deviation equal the histogram package's, to the bit", arguments: [2, 50, 10_000])
    func momentsMatchThePackage(samples: Int) {
        var histogram = Histogram<UInt64>(numberOfSignificantValueDigits: .three)
        histogram.autoResize = true
        // A fixed, spread-out set of samples: 1 ns to about 40 ms, some repeated.
        var value: UInt64 = 0x9E37_79B9
        for _ in 0..<samples {
            value = value &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            histogram.record(1 + (value >> 38) % 40_000_000)
        }
        let statistics = StepStatistics(histogram, window: 1_000_000_000)
        #expect(statistics.mean == histogram.mean)
        #expect(statistics.stddev == histogram.stdDeviation)
        #expect(statistics.count == UInt64(samples))
    }

    @Test(
        "The mean lies between the min and the max; one sample's mean is the sample, with no spread",
        arguments: [
            [248_873_754], [4_614_333], [1], [2_047],
            // In one coarse bucket (131,072 ns wide at 250 ms; its middle 248,840,192), above and below the middle.
            [248_873_754, 248_873_800], [248_840_000, 248_840_001, 248_840_002], [248_905_000, 248_905_100],
            // Far apart: a small exact value beside a coarse one.
            [1_000, 248_873_754], [1_322, 3_687, 5_517, 21_954],
        ] as [[UInt64]]
    )
    func meanWithinTheSamples(samples: [UInt64]) {
        var histogram = Histogram<UInt64>(numberOfSignificantValueDigits: .three)
        histogram.autoResize = true
        for sample in samples { histogram.record(sample) }
        let statistics = StepStatistics(histogram, window: 1_000_000_000)
        let low = Double(samples.min() ?? 0)
        let high = Double(samples.max() ?? 0)
        #expect(statistics.min == low && statistics.max == high)
        #expect(low <= statistics.mean && statistics.mean <= high, "mean \(statistics.mean) of \(samples)")
        #expect(low <= histogram.specialisedMean && histogram.specialisedMean <= high)
        if samples.count == 1 {
            #expect(statistics.mean == low && statistics.stddev == 0, "\(statistics)")
        }
        // The exact mean, to the histogram's resolution.
        let exact = samples.reduce(0.0) { $0 + Double($1) } / Double(samples.count)
        #expect(abs(statistics.mean - exact) <= exact * 5e-4, "\(statistics.mean) against \(exact)")
    }

    @Test("p95 lies between p90 and p99 as the histogram reads it; a document without it decodes, without it")
    func ninetyFifth() throws {
        var histogram = Histogram<UInt64>(numberOfSignificantValueDigits: .three)
        for value in 1...1_000 { histogram.record(UInt64(value) * 1_000) }
        let statistics = StepStatistics(histogram, window: 1_000_000_000)
        // 950 of 1,000 samples are at or under 950 µs: HdrHistogram's p95 is that bucket's.
        #expect(statistics.p95 == Double(histogram.valueAtPercentile(95)))
        #expect(abs((statistics.p95 ?? 0) - 950_000) <= 950)
        #expect(statistics.p90 < statistics.p95 ?? 0 && statistics.p95 ?? .infinity < statistics.p99)
        var object = try #require(
            try JSONSerialization.jsonObject(with: JSONEncoder().encode(statistics)) as? [String: Any]
        )
        #expect(object["p95"] != nil)
        object["p95"] = nil
        let older = try JSONDecoder().decode(StepStatistics.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(older.p95 == nil && older.p90 == statistics.p90)
    }

    @Test("An empty histogram has a mean and deviation of 0")
    func empty() {
        let statistics = StepStatistics(Histogram<UInt64>(numberOfSignificantValueDigits: .three), window: 1)
        #expect(statistics.mean == 0)
        #expect(statistics.stddev == 0)
    }
}
