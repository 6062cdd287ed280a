import Foundation
import Histogram
import LabCore
import LabResults
import LabTestSupport
import Testing

/// One convention for medians and percentiles (`Statistics`), used everywhere.
@Suite(.tier(.unit)) struct StatisticsTests {
    @Test("Nearest rank: the median of an even count is the lower middle value, never an average")
    func nearestRank() {
        #expect(Statistics.median([4.0, 1, 3, 2]) == 2)
        #expect(Statistics.median([5, 1, 3]) == 3)
        #expect(Statistics.median([Double]()) == nil)
        #expect(Statistics.percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90) == 9)
        #expect(Statistics.percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 91) == 10)
        #expect(Statistics.percentile([1, 2, 3], 0) == 1)
        #expect(Statistics.percentile([1, 2, 3], 100) == 3)
    }

    @Test("The median agrees with a histogram's p50 of the same samples, and every median of the lab with it")
    func agreesWithHistograms() {
        var values: [UInt64] = []
        var histogram = Histogram<UInt64>(numberOfSignificantValueDigits: .three)
        for index in 0..<100 {
            // Values under 2,048 are exact in a 3-digit histogram.
            let value = UInt64(100 + 13 * index % 1_900)
            values.append(value)
            histogram.record(value)
        }
        let median = Statistics.median(values)
        #expect(median == histogram.valueAtPercentile(50))
        #expect(Statistics.percentile(values, 99) == histogram.valueAtPercentile(99))
        #expect(CalibrationSample.median(values) == median)
        #expect(WorkCounts(instructions: values, allocations: values).medianInstructions == median)
    }
}
