public import Histogram
import LabCore

/// A histogram as `results.json` stores it: its layout and each non-empty bucket as `[value, count]`.
///
/// Decoding rebuilds a histogram `==` to the original with the same exact minimum and maximum, so
/// percentiles, merges and every `StepStatistics` figure come out the same. Each bucket is written at
/// its highest equivalent value, except the buckets holding the exact minimum and maximum, which are
/// written at those values (a bucket holding both is split into two entries).
public struct SparseHistogram: Codable, Sendable, Equatable {
    /// Significant decimal digits, 0 to 5 (the lab records with 3).
    public var significantDigits: Int
    /// The lowest value distinguished from 0 (the lab records with 1).
    public var lowestDiscernibleValue: UInt64
    /// Each recorded value and how many times it was recorded, in increasing order of value.
    public var counts: [Bucket]

    /// One `[value, count]` pair, encoded as a two-element array.
    public struct Bucket: Codable, Sendable, Equatable {
        /// A value in nanoseconds.
        public var value: UInt64
        /// How many samples fell in the value's bucket.
        public var count: UInt64

        /// A pair.
        public init(value: UInt64, count: UInt64) {
            self.value = value
            self.count = count
        }

        /// Encodes as `[value, count]`.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.unkeyedContainer()
            try container.encode(self.value)
            try container.encode(self.count)
        }

        /// Decodes `[value, count]`.
        public init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            self.value = try container.decode(UInt64.self)
            self.count = try container.decode(UInt64.self)
            guard container.isAtEnd else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "expected [value, count]")
            }
        }
    }

    /// The sparse form of `histogram`.
    public init(_ histogram: Histogram<UInt64>) {
        self.significantDigits = Int(histogram.numberOfSignificantValueDigits.rawValue)
        self.lowestDiscernibleValue = histogram.lowestDiscernibleValue
        self.counts = []
        guard histogram.totalCount > 0 else { return }
        // `min` is exact unless a zero was recorded (then it is 0 and the exact non-zero minimum is
        // not observable, so neither `==` nor any figure depends on it); `maxRecorded` is always exact.
        let lowest = histogram.min
        let highest = histogram.maxRecorded
        for bucket in histogram.recordedValues() {
            let count = UInt64(bucket.count)
            let holdsLowest = histogram.valuesAreEquivalent(bucket.value, lowest)
            let holdsHighest = histogram.valuesAreEquivalent(bucket.value, highest)
            switch (holdsLowest, holdsHighest) {
            case (true, true) where count > 1 && lowest != highest:
                self.counts.append(Bucket(value: lowest, count: count - 1))
                self.counts.append(Bucket(value: highest, count: 1))
            case (true, _):
                self.counts.append(Bucket(value: lowest, count: count))
            case (false, true):
                self.counts.append(Bucket(value: highest, count: count))
            case (false, false):
                self.counts.append(Bucket(value: bucket.value, count: count))
            }
        }
    }

    /// Rebuilds the histogram (auto-resizing, like the runner's); `path` names this value in errors.
    public func histogram(path: String = "histogram") throws -> Histogram<UInt64> {
        guard let digits = SignificantDigits(rawValue: Int8(clamping: self.significantDigits)),
            (0...5).contains(self.significantDigits)
        else {
            throw LabError(.invalidScenario, "\(path).significantDigits must be 0 to 5, not \(self.significantDigits)")
        }
        // Larger units leave the histogram no room for its sub-buckets (it would trap).
        guard self.lowestDiscernibleValue >= 1, self.lowestDiscernibleValue < 1 << 40 else {
            throw LabError(
                .invalidScenario,
                "\(path).lowestDiscernibleValue must be 1 to 2^40, not \(self.lowestDiscernibleValue)"
            )
        }
        // Made to span its largest value at once (`Histograms`): grown bucket by bucket, a
        // rebuild resized it once per power of two of its values, each time slowly.
        let largest = self.counts.lazy.map(\.value).filter { $0 <= UInt64.max / 4 }.max() ?? 0
        var histogram = Histograms.empty(digits: digits, lowest: self.lowestDiscernibleValue, spanning: largest)
        for (index, bucket) in self.counts.enumerated() where bucket.count > 0 {
            // Past this, the histogram's bucket arithmetic overflows; no time in nanoseconds gets near it.
            guard bucket.value <= UInt64.max / 4, histogram.record(bucket.value, count: bucket.count) else {
                throw LabError(.invalidScenario, "\(path).counts[\(index)]: value \(bucket.value) is out of range")
            }
        }
        return histogram
    }
}
