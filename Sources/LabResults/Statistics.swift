import Foundation
public import Histogram

/// The lab's one place for order statistics and its one rank test: every median, percentile
/// and U test in compare, check, the reports, merges and calibration comes from here.
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

/// The Wilcoxon–Mann–Whitney rank-sum (U) test between two samples, the one the lab uses:
/// `lab compare` on two runs' whole histograms, `lab check` on their rounds' medians.
///
/// Samples are given as values with a count on each side; equal values tie (a histogram's
/// samples tie by bucket). U counts the pairs where the second sample's value is larger,
/// ties counted half.
public struct RankSumTest: Sendable {
    /// U for the second sample.
    public private(set) var u: Double = 0
    /// The two samples' sizes.
    public let n1: Double
    public let n2: Double
    /// Σ (t³ − t) over the tied groups, for the variance's tie correction.
    private var ties: Double = 0
    /// Whether any two values are equal (across or within the samples).
    public private(set) var hasTies = false
    /// Each distinct value with its count in the first and second sample, ascending.
    private let values: [(value: Double, first: Double, second: Double)]

    /// Tests samples given as (value, count in the first, count in the second), in any order,
    /// a value at most once.
    public init(counts: [(value: Double, first: Double, second: Double)]) {
        self.values = counts.sorted { $0.value < $1.value }
        self.n1 = counts.reduce(0) { $0 + $1.first }
        self.n2 = counts.reduce(0) { $0 + $1.second }
        var below = 0.0
        for (_, a, b) in self.values {
            self.u += b * (below + a / 2)
            below += a
            let t = a + b
            self.ties += t * t * t - t
            if t > 1 { self.hasTies = true }
        }
    }

    /// Tests two plain samples.
    public init(_ first: [Double], _ second: [Double]) {
        var counts: [Double: (first: Double, second: Double)] = [:]
        for value in first { counts[value, default: (0, 0)].first += 1 }
        for value in second { counts[value, default: (0, 0)].second += 1 }
        self.init(counts: counts.map { ($0.key, $0.value.first, $0.value.second) })
    }

    /// Tests two histograms, each sample at its bucket's highest equivalent value; the second's
    /// values are multiplied by `scale` first (a run judged against its common factor).
    public init(_ first: Histogram<UInt64>, _ second: Histogram<UInt64>, scale: Double = 1) {
        // Both histograms bucket alike (3 significant digits), so equal values are one bucket.
        var counts: [Double: (first: Double, second: Double)] = [:]
        for bucket in first.recordedValues() {
            counts[Double(first.highestEquivalentForValue(bucket.value)), default: (0, 0)].first += Double(bucket.count)
        }
        for bucket in second.recordedValues() {
            let value = Double(second.highestEquivalentForValue(bucket.value)) * scale
            counts[value, default: (0, 0)].second += Double(bucket.count)
        }
        self.init(counts: counts.map { ($0.key, $0.value.first, $0.value.second) })
    }

    /// U ÷ (n₁ n₂): the probability that a sample of the second exceeds one of the first, ties
    /// counted half; 0.5 means no shift.
    public var superiority: Double { self.n1 > 0 && self.n2 > 0 ? self.u / (self.n1 * self.n2) : 0.5 }

    /// The variance of U under the null hypothesis, with the tie correction.
    private var variance: Double {
        let n = self.n1 + self.n2
        guard n > 1 else { return 0 }
        return self.n1 * self.n2 / 12 * ((n + 1) - self.ties / (n * (n - 1)))
    }

    /// The two-sided p-value by the normal approximation without continuity correction (as
    /// SciPy's `mannwhitneyu(method="asymptotic", use_continuity=False)`): for the hundreds of
    /// samples a run's histograms hold. 1 when either sample is empty or every value ties.
    public var twoSidedPValue: Double {
        let variance = self.variance
        guard self.n1 > 0, self.n2 > 0, variance > 0 else { return 1 }
        let z = (self.u - self.n1 * self.n2 / 2) / variance.squareRoot()
        return erfc(abs(z) / 2.0.squareRoot())
    }

    /// The one-sided p-value that the second sample is stochastically greater (or, with
    /// `greater: false`, smaller) than the first. Exact (the null distribution of U counted
    /// over all arrangements) when n·m ≤ 2,500 and no values tie; otherwise the normal
    /// approximation with continuity and tie corrections (as SciPy's `mannwhitneyu`).
    public func oneSidedPValue(greater: Bool) -> Double {
        guard self.n1 > 0, self.n2 > 0 else { return 1 }
        // U in the tested direction: pairs where the second's value is smaller, for `less`.
        let u = greater ? self.u : self.n1 * self.n2 - self.u
        let n = Int(self.n1)
        let m = Int(self.n2)
        if !self.hasTies, n * m <= 2_500 {
            let counts = Self.distribution(n, m)
            let total = counts.reduce(0, +)
            return counts[Int(u.rounded())...].reduce(0, +) / total
        }
        let variance = self.variance
        guard variance > 0 else { return 1 }
        let z = (u - 0.5 - self.n1 * self.n2 / 2) / variance.squareRoot()
        return 0.5 * erfc(z / 2.0.squareRoot())
    }

    /// How many of the C(n+m, n) arrangements give each U = 0 … n·m: the coefficients of the
    /// Gaussian binomial [n+m choose n]_q, by its Pascal recurrence.
    static func distribution(_ n: Int, _ m: Int) -> [Double] {
        let size = n * m + 1
        // row[k] = [N choose k]_q for the current N, k = 0 … n.
        var row: [[Double]] = Array(repeating: [], count: n + 1)
        row[0] = [1]
        for total in 1...(n + m) {
            var next = row
            for k in stride(from: min(n, total), through: 1, by: -1) {
                // [N choose k] = [N-1 choose k-1] + q^k [N-1 choose k]
                let shifted = row[k].isEmpty ? [] : Array(repeating: 0.0, count: k) + row[k]
                let left = row[k - 1]
                var sum = Array(repeating: 0.0, count: max(left.count, shifted.count))
                for (index, value) in left.enumerated() { sum[index] += value }
                for (index, value) in shifted.enumerated() { sum[index] += value }
                next[k] = sum
            }
            row = next
        }
        var result = row[n]
        if result.count < size { result += Array(repeating: 0, count: size - result.count) }
        return Array(result.prefix(size))
    }

    /// Whether the second sample has more of its values in the pooled top `share` (0.01: above
    /// the pooled p99) than the first, or fewer: the two-sided p-value of the two-proportion z
    /// test on the counts above the pooled percentile (ties at it count below). It judges a
    /// tail that moved, which the rank test, driven by the bulk of the samples, does not see.
    /// 1 when either side expects fewer than 5 samples up there.
    public func tailPValue(share: Double = 0.01) -> (pValue: Double, secondHasMore: Bool) {
        let n = self.n1 + self.n2
        guard self.n1 * share >= 5, self.n2 * share >= 5 else { return (1, false) }
        // The pooled percentile: walk down from the top until `share` of all samples lie above.
        var above = (first: 0.0, second: 0.0)
        for (_, a, b) in self.values.reversed() {
            if above.first + above.second + a + b > share * n { break }
            above.first += a
            above.second += b
        }
        let pooled = (above.first + above.second) / n
        let deviation = (pooled * (1 - pooled) * (1 / self.n1 + 1 / self.n2)).squareRoot()
        let difference = above.second / self.n2 - above.first / self.n1
        guard deviation > 0 else { return (1, false) }
        let z = difference / deviation
        return (erfc(abs(z) / 2.0.squareRoot()), difference > 0)
    }
}
