import Foundation

/// The lab's one place for order statistics: every median and percentile in compare, check,
/// the reports, merges and calibration comes from here (the rank test, `RankSumTest`, is
/// LabAnalysis's).
///
/// **Percentiles** take the *nearest rank*: the p-th percentile of n sorted values is the
/// value at rank ⌈p/100 · n⌉ (1-based; the smallest value for p = 0). It is always one of the
/// values, never an average of two, and it is the convention of the HDR histograms every
/// report's p50, p90 and p99 are read from (`valueAtPercentile`), so a median taken here and a
/// p50 read off a histogram of the same samples agree. The **median** is the 50th percentile:
/// for an even count, the lower of the two middle values.
public enum Statistics {
    /// The `percentile`-th percentile (0–100) of `values` by nearest rank; nil for no values.
    public static func percentile<T: Comparable>(_ values: [T], _ percentile: Double) -> T? {
        guard !values.isEmpty else { return nil }
        return Self.percentile(sorted: values.sorted(), percentile)
    }

    /// The percentile of values already sorted in ascending order; nil for no values.
    public static func percentile<T>(sorted: [T], _ percentile: Double) -> T? {
        guard !sorted.isEmpty else { return nil }
        let rank = (min(max(percentile, 0), 100) / 100 * Double(sorted.count)).rounded(.up)
        return sorted[min(max(Int(rank) - 1, 0), sorted.count - 1)]
    }

    /// The median of `values` (nearest rank: the lower middle value of an even count); nil
    /// for no values.
    public static func median<T: Comparable>(_ values: [T]) -> T? {
        Self.percentile(values, 50)
    }
}
