import Histogram
import LabCore
import LabResults
import LabTesting
import Testing

/// `StepStatistics` computes the mean and standard deviation itself (the package's own
/// properties run unspecialised): the figures must stay those of `Histogram.mean` and
/// `Histogram.stdDeviation`, to the bit.
@Suite(.tier(.unit)) struct StepStatisticsTests {
    @Test("Mean and standard deviation equal the histogram package's, to the bit", arguments: [1, 2, 50, 10_000])
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

    @Test("An empty histogram has a mean and deviation of 0")
    func empty() {
        let statistics = StepStatistics(Histogram<UInt64>(numberOfSignificantValueDigits: .three), window: 1)
        #expect(statistics.mean == 0)
        #expect(statistics.stddev == 0)
    }
}
