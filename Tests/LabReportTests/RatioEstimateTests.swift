import Histogram
import LabAnalysis
import LabTestSupport
import Testing

/// The ratio estimate's U, taken by one merge of two bucket lists (`RatioEstimate.u`), is the
/// U the rank-sum test counts through its table of values, at every trial factor, ties and all.
@Suite(.tier(.unit)) struct RatioEstimateTests {
    /// A histogram of `count` samples drawn from a log-normal-ish spread around `median`,
    /// from a fixed seed.
    static func histogram(median: Double, count: Int, seed: UInt64) -> Histogram<UInt64> {
        var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
        var state = seed
        for _ in 0..<count {
            // xorshift64*: a spread of ×0.5 to ×4 around the median.
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            let unit = Double((state &* 2_685_821_657_736_338_717) >> 11) / Double(1 << 53)
            histogram.record(UInt64(median * 0.5 * (1 + 7 * unit * unit)))
        }
        return histogram
    }

    @Test("At every trial factor, the merge's U is the rank-sum test's", arguments: [1 as UInt64, 7, 42])
    func mergeMatchesTheTest(seed: UInt64) {
        let first = Self.histogram(median: 250_000, count: 400, seed: seed)
        let second = Self.histogram(median: 1_000_000, count: 300, seed: seed &+ 1)
        let (a, b) = (RatioEstimate.buckets(first), RatioEstimate.buckets(second))
        // Factors that make scaled values land on the first's exactly (1, 2, 0.5) tie them.
        for scale in [1.0, 0.5, 0.25, 0.2513, 2, 1 / 3.9, 1e-3, 1e3] {
            #expect(RatioEstimate.u(a, b, scale: scale) == RankSumTest(first, second, scale: scale).u, "scale \(scale)")
        }
        // The same histogram against itself: every value ties, U is n²/2.
        #expect(RatioEstimate.u(a, a, scale: 1) == 400 * 400 / 2)
    }

    @Test("The estimate finds the factor between two samples, inside its interval")
    func estimateFindsTheFactor() throws {
        let first = Self.histogram(median: 250_000, count: 400, seed: 3)
        let second = Self.histogram(median: 1_000_000, count: 400, seed: 3)
        let estimate = try #require(RatioEstimate.of(first, second))
        #expect(abs(estimate.ratio - 4) < 0.05 && estimate.lower <= estimate.ratio && estimate.ratio <= estimate.upper, "\(estimate)")
    }
}
