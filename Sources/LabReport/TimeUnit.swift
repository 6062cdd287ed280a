import LabCharts

/// The one time unit of a table (ns, µs, ms or s): chosen once from the table's own figures,
/// named once in each time column's heading (`p50 (ms)`), and every time cell written in it,
/// with thousands separated and a fixed number of decimals, so that a column reads at a
/// glance and no cell needs a unit of its own. report.md, report.html, comparison.md, the
/// GitHub summary and a sweep's sweep.md choose their tables' units with it; the CSV and
/// JSON files keep nanoseconds.
public struct TimeUnit: Sendable, Equatable {
    /// `ms`.
    public var name: String
    /// Nanoseconds in one unit.
    public var nanoseconds: Double
    /// Decimals shown.
    public var decimals: Int

    /// Seconds, milliseconds, microseconds and nanoseconds, the largest first.
    static let all = [
        TimeUnit(name: "s", nanoseconds: 1e9, decimals: 2), TimeUnit(name: "ms", nanoseconds: 1e6, decimals: 2),
        TimeUnit(name: "µs", nanoseconds: 1e3, decimals: 2), TimeUnit(name: "ns", nanoseconds: 1, decimals: 0),
    ]

    /// The unit of a table whose rows' typical figures (each row's p50, in nanoseconds) are
    /// `typical`: the largest in which their median reads at least 1, so that it has one to
    /// three digits before the point (the table's outliers may have more, with separators).
    /// Two decimals, three where the smallest non-zero figure would read under 0.1 (`0.031`
    /// rather than `0.03`), none for nanoseconds; microseconds for a table of zeros.
    public static func of(_ typical: [Double]) -> TimeUnit {
        let values = typical.filter { $0 > 0 && $0.isFinite }.sorted()
        guard let smallest = values.first else { return Self.all[2] }
        let middle = values.count / 2
        let median = values.count % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2
        var unit = Self.all.first { median >= $0.nanoseconds } ?? Self.all[3]
        if unit.decimals > 0, smallest / unit.nanoseconds < 0.1 { unit.decimals = 3 }
        return unit
    }

    /// `nanoseconds` in this unit, without the unit's name: `65,372.16`.
    public func format(_ nanoseconds: Double) -> String {
        Numbers.fixed(nanoseconds / self.nanoseconds, self.decimals, grouped: true)
    }

    /// A time column's heading: `p50 (ms)`.
    public func heading(_ name: String) -> String { "\(name) (\(self.name))" }
}
