/// Round numbers for axes: 1, 2 and 5 times a power of ten.
public enum NiceNumbers {
    /// The smallest of 1, 2, 5 × 10^k that is at least `value` (at least 1).
    public static func ceiling(_ value: Double) -> Double {
        guard value.isFinite, value < 1e300 else { return 1e300 }
        var decade: Double = 1
        while true {
            for factor in [1.0, 2, 5] where factor * decade >= value { return factor * decade }
            decade *= 10
        }
    }

    /// The largest of 1, 2, 5 × 10^k that is at most `value` (at least 1).
    public static func floor(_ value: Double) -> Double {
        var best: Double = 1
        var decade: Double = 1
        while decade <= value {
            for factor in [1.0, 2, 5] where factor * decade <= value { best = factor * decade }
            decade *= 10
        }
        return best
    }

    /// Every 1, 2, 5 × 10^k from `low` to `high`, inclusive.
    public static func series(from low: Double, to high: Double) -> [Double] {
        var values: [Double] = []
        var value = Self.ceiling(low)
        while value <= high * (1 + 1e-9) {
            values.append(value)
            value = Self.ceiling(value * 1.000_001)
        }
        return values
    }
}
