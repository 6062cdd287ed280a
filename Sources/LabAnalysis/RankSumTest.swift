import Foundation
public import Histogram
import LabResults

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

/// How many times the second of two samples is the first, from the rank-sum test that judges
/// them: the Hodges–Lehmann estimate on a log scale (the factor that, applied to the second
/// sample, leaves no shift: U = n₁n₂/2) and its confidence interval (Moses: the factors at
/// which the same test, two-sided, would just reject at 1 − `confidence`). The interval is
/// what the U test says, so it excludes 1 exactly when that test rejects at that level.
public struct RatioEstimate: Sendable, Equatable {
    /// Second ÷ first.
    public var ratio: Double
    /// The interval's bounds.
    public var lower: Double
    public var upper: Double
    /// Its level, e.g. 0.95.
    public var confidence: Double

    /// Whether the interval lies wholly above or below 1.
    public var excludesOne: Bool { self.lower > 1 || self.upper < 1 }

    /// The estimate for two histograms (each sample at its bucket's highest equivalent value,
    /// as `RankSumTest` reads them); nil when either is empty.
    public static func of(
        _ first: Histogram<UInt64>,
        _ second: Histogram<UInt64>,
        confidence: Double = 0.95
    ) -> RatioEstimate? {
        guard first.totalCount > 0, second.totalCount > 0 else { return nil }
        let n1 = Double(first.totalCount)
        let n2 = Double(second.totalCount)
        // z of the two-sided level, and U's null standard deviation without ties: the bounds
        // are where U leaves the band n₁n₂/2 ± z·σ.
        let z = Self.normalQuantile(0.5 + confidence / 2)
        let sigma = (n1 * n2 * (n1 + n2 + 1) / 12).squareRoot()
        let middle = n1 * n2 / 2
        // The buckets once, then U by one merge of two ascending lists per trial factor: the
        // same U as `RankSumTest(first, second, scale:)`, without walking the histograms 180
        // times (that walk was 12 s of `lab merge` for the quickstart's six groups).
        let firstBuckets = Self.buckets(first)
        let secondBuckets = Self.buckets(second)
        func u(_ ratio: Double) -> Double { Self.u(firstBuckets, secondBuckets, scale: 1 / ratio) }
        // U falls as the factor grows; it is n₁n₂ below the smallest ratio of any two samples
        // and 0 above the largest.
        let low =
            log(Double(max(second.min, 1))) - log(Double(max(first.highestEquivalentForValue(first.max), 1))) - 0.01
        let high =
            log(Double(max(second.highestEquivalentForValue(second.max), 1))) - log(Double(max(first.min, 1))) + 0.01
        func solve(_ target: Double) -> Double {
            var (below, above) = (low, high)
            for _ in 0..<60 {
                let mid = (below + above) / 2
                if u(exp(mid)) > target { below = mid } else { above = mid }
            }
            return exp((below + above) / 2)
        }
        return RatioEstimate(
            ratio: solve(middle),
            lower: solve(middle + z * sigma),
            upper: solve(middle - z * sigma),
            confidence: confidence
        )
    }

    /// A histogram's samples as (value, count), ascending, each at its bucket's highest
    /// equivalent value, as `RankSumTest` reads them.
    package static func buckets(_ histogram: Histogram<UInt64>) -> [(value: Double, count: Double)] {
        histogram.recordedValues()
            .map { (Double(histogram.highestEquivalentForValue($0.value)), Double($0.count)) }
            .sorted { $0.value < $1.value }
    }

    /// U for `second`'s values times `scale` against `first`'s, both ascending: for each of
    /// the second's values, the first's samples below it and half of those equal to it, times
    /// its count (what `RankSumTest(counts:)` sums, in the same order).
    package static func u(
        _ first: [(value: Double, count: Double)],
        _ second: [(value: Double, count: Double)],
        scale: Double
    ) -> Double {
        var u = 0.0
        var below = 0.0
        var index = 0
        for (value, count) in second {
            let scaled = value * scale
            while index < first.count, first[index].value < scaled {
                below += first[index].count
                index += 1
            }
            let equal = index < first.count && first[index].value == scaled ? first[index].count : 0
            u += count * (below + equal / 2)
        }
        return u
    }

    /// The standard normal quantile (Acklam's rational approximation, relative error < 1.2e-9
    /// on (0, 1)).
    static func normalQuantile(_ p: Double) -> Double {
        let a = [
            -39.69683028665376, 220.9460984245205, -275.9285104469687, 138.3577518672690, -30.66479806614716,
            2.506628277459239,
        ]
        let b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572]
        let c = [
            -0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968,
            2.938163982698783,
        ]
        let d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416]
        func tail(_ q: Double) -> Double {
            (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5])
                / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
        }
        if p < 0.02425 { return tail((-2 * log(p)).squareRoot()) }
        if p > 1 - 0.02425 { return -tail((-2 * log(1 - p)).squareRoot()) }
        let q = p - 0.5
        let r = q * q
        return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q
            / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
    }
}
