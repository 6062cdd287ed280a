import Foundation
import Histogram
import LabResults
import LabTestSupport
import Testing

/// `Histograms`: empty histograms copied from a template, and widening by adding into a wider
/// one, give what the histogram package's own initializer and growth give.
@Suite(.tier(.unit)) struct HistogramsTests {
    /// Samples from 1 ns to about an hour, in no order: every power of two crossed.
    static let samples: [UInt64] = (0..<2_000).map { index in
        let magnitude = UInt64(index * 7919 % 42)
        return (UInt64(1) << magnitude) + UInt64(index * 104_729) % ((UInt64(1) << magnitude) | 1)
    }

    @Test("Recorded by widening, 1 ns to an hour: equal to the package's auto-resizing histogram, figure by figure")
    func wideningMatchesThePackage() {
        for digits: SignificantDigits in [.two, .three] {
            var package = Histogram<UInt64>(numberOfSignificantValueDigits: digits)
            var widened = Histograms.empty(digits: digits, spanning: 1 << 20)
            for sample in Self.samples {
                package.record(sample)
                widened.recordWidening(sample)
            }
            #expect(widened == package, "\(digits)")
            #expect(widened.totalCount == 2_000 && widened.min == package.min && widened.max == package.max)
            for percentile in [0.0, 50, 90, 99, 99.9, 100] {
                #expect(widened.valueAtPercentile(percentile) == package.valueAtPercentile(percentile), "p\(percentile)")
            }
            #expect(widened.autoResize, "still grows past what it spans")
        }
    }

    @Test("Each empty histogram has storage of its own: recording into one leaves the next one made empty")
    func eachHasItsOwnStorage() {
        var first = Histograms.empty(digits: .three, spanning: 1 << 20)
        first.recordWidening(1_000)
        first.recordWidening(1 << 30)
        let second = Histograms.empty(digits: .three, spanning: 1 << 20)
        #expect(second.totalCount == 0 && second.maxRecorded == 0)
        #expect(second == Histogram<UInt64>(numberOfSignificantValueDigits: .three))
        #expect(first.totalCount == 2)
        // It spans what it was asked to without growing: a sample at the span's top stays in.
        var spanning = Histograms.empty(digits: .two, spanning: 1 << 36)
        #expect(spanning.highestTrackableValue >= 1 << 36)
        let before = spanning.highestTrackableValue
        spanning.record(1 << 36)
        #expect(spanning.highestTrackableValue == before)
    }

    @Test("Adding a wider histogram widens first: the sum equals the package's, in either order")
    func addingWidens() {
        var narrow = Histograms.empty(digits: .three, spanning: 1 << 20)
        var wide = Histograms.empty(digits: .three, spanning: 1 << 20)
        var package = Histogram<UInt64>(numberOfSignificantValueDigits: .three)
        for sample in Self.samples {
            if sample < 1 << 20 { narrow.recordWidening(sample) } else { wide.recordWidening(sample) }
            package.record(sample)
        }
        var sum = narrow
        sum.addWidening(wide)
        var reversed = wide
        reversed.addWidening(narrow)
        #expect(sum == package && reversed == package)
    }

    @Test("A stored histogram rebuilds equal to the one written, from 1 ns to an hour")
    func sparseRebuilds() throws {
        var histogram = Histograms.empty(digits: .three, spanning: 1 << 20)
        for sample in Self.samples { histogram.recordWidening(sample) }
        let rebuilt = try SparseHistogram(histogram).histogram()
        #expect(rebuilt == histogram && rebuilt.min == histogram.min && rebuilt.maxRecorded == histogram.maxRecorded)
        #expect(try SparseHistogram(Histograms.empty(digits: .two, spanning: 2)).histogram().totalCount == 0)
    }
}
