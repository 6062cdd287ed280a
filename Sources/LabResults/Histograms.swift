public import Histogram
import Synchronization

/// Empty histograms made fast, and recording that widens a histogram fast.
///
/// The histogram package's initializer and its growth (`resize`) are not inlinable, so from the
/// lab they run unspecialised: zeroing a new histogram, or appending zeros to grow one, goes
/// element by element through the runtime's value witnesses. In a run that made its interval
/// histograms each second and grew them at their first slow exchange, that work ran on the
/// clients' threads at each interval's start (perf, release, the quickstart with 100 ms
/// intervals: 4.9% of the measured seconds' CPU samples in `resize`, 2.2% in the
/// initializer), and rebuilding a stored histogram grew it once per power of two of its values.
///
/// Here a template of each layout and span is made once; an empty histogram is a copy of it,
/// given storage of its own by the package's inlinable `add` (specialised in the lab: a copy of
/// the counts and a loop of additions), and a histogram is widened by adding it into a wider
/// empty one. The counts, totals, minimum and maximum are the package's own throughout.
public enum Histograms {
    private struct Layout: Hashable {
        var digits: Int8
        var lowest: UInt64
        /// The span: up to 2^magnitude.
        var magnitude: Int
    }

    /// Each layout's template, and the smallest histogram of its digits and unit (whose
    /// addition gives a copy of the template storage of its own, at little cost).
    private static let templates = Mutex<[Layout: (template: Histogram<UInt64>, tiny: Histogram<UInt64>)]>([:])

    /// An empty, auto-resizing histogram of `digits` significant digits and a lowest
    /// discernible value of `lowest`, spanning at least up to `highest` (rounded up to a power
    /// of two), with storage of its own.
    public static func empty(
        digits: SignificantDigits,
        lowest: UInt64 = 1,
        spanning highest: UInt64
    ) -> Histogram<UInt64> {
        let magnitude = Swift.min(62, Swift.max(1, 64 - (highest | 1).leadingZeroBitCount))
        let layout = Layout(digits: digits.rawValue, lowest: lowest, magnitude: magnitude)
        let (template, tiny) = Self.templates.withLock { templates in
            if let made = templates[layout] { return made }
            var template = Histogram<UInt64>(
                lowestDiscernibleValue: lowest,
                highestTrackableValue: Swift.max(lowest &* 2, UInt64(1) << magnitude),
                numberOfSignificantValueDigits: digits
            )
            template.autoResize = true
            let tiny = Histogram<UInt64>(
                lowestDiscernibleValue: lowest,
                highestTrackableValue: lowest &* 2,
                numberOfSignificantValueDigits: digits
            )
            templates[layout] = (template, tiny)
            return (template, tiny)
        }
        var made = template
        // Shared with the template until written: written now, here, not at its first sample.
        made.add(tiny)
        return made
    }
}

extension Histogram where Count == UInt64 {
    /// Records `value` `count` times, first widening the histogram if `value` is past its span
    /// (`Histograms`: fast, where the package's own growth is slow). False if it cannot be
    /// recorded (the package's bucket arithmetic has a limit far past any time in nanoseconds).
    @discardableResult
    public mutating func recordWidening(_ value: UInt64, count: UInt64 = 1) -> Bool {
        self.widen(toHold: value)
        return self.record(value, count: count)
    }

    /// Adds `other` (the same layout), first widening the histogram to hold `other`'s maximum.
    public mutating func addWidening(_ other: Histogram<UInt64>) {
        self.widen(toHold: other.maxRecorded)
        self.add(other)
    }

    /// Widens an auto-resizing histogram to hold `value`, if it does not already.
    mutating func widen(toHold value: UInt64) {
        guard self.autoResize, value > self.highestTrackableValue, value <= UInt64.max / 4 else { return }
        var wider = Histograms.empty(
            digits: self.numberOfSignificantValueDigits,
            lowest: self.lowestDiscernibleValue,
            spanning: value
        )
        wider.add(self)
        self = wider
    }
}
