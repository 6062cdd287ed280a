import Foundation

extension Axis {
    /// How values map onto an axis, linearly or by their logarithm, between two ends, and the
    /// values worth a tick.
    ///
    /// The ends are in the scale's own units: the values themselves on a linear scale, their
    /// logarithms on a logarithmic one (so that decades and octaves are exact).
    public struct Scale: Sendable, Equatable {
        /// How a value becomes a distance along the axis.
        public enum Kind: Sendable, Equatable {
            /// The value itself.
            case linear
            /// The value's logarithm in `base`.
            case logarithmic(base: Double)
        }

        /// How a value becomes a distance along the axis.
        public var kind: Kind
        /// The low end, in the scale's units.
        public var low: Double
        /// The high end, in the scale's units.
        public var high: Double
        /// The values to mark, in order.
        public var ticks: [Double]
        /// On a logarithmic scale, the least value drawn where it is: smaller ones (and zero) are drawn at it. Nil: none.
        public var floor: Double?
        /// Whether values beyond the ends are drawn at the ends.
        public var clamped: Bool

        /// A scale from `low` to `high` in its own units (logarithms on a logarithmic scale).
        public init(
            _ kind: Kind,
            from low: Double,
            to high: Double,
            ticks: [Double],
            floor: Double? = nil,
            clamped: Bool = false
        ) {
            self.kind = kind
            self.low = low
            self.high = high
            self.ticks = ticks
            self.floor = floor
            self.clamped = clamped
        }

        /// Where `value` falls between the ends: 0 at the low end, 1 at the high end.
        public func fraction(_ value: Double) -> Double {
            var measure = value
            if case .logarithmic(let base) = self.kind {
                let drawn = self.floor.map { Swift.max(value, $0) } ?? value
                measure =
                    switch base {
                    case 10: log10(drawn)
                    case 2: log2(drawn)
                    default: log(drawn) / log(base)
                    }
            }
            if self.clamped { measure = Swift.max(self.low, Swift.min(self.high, measure)) }
            return (measure - self.low) / (self.high - self.low)
        }
    }
}

extension Axis.Scale {
    /// Linear from 0 to the first multiple of a round step at or above `highest` (1 when
    /// `highest` is not above 0): the step is the least of 1, 2, 5 × 10^k ÷ `resolution` that
    /// makes at most `divisions` of them (`resolution` 1: whole steps, at least 1), and every
    /// multiple is a tick.
    public static func zeroToRound(covering highest: Double, divisions: Double, resolution: Double = 1) -> Self {
        let top = highest > 0 ? highest : 1
        let step = Self.roundStep(top / divisions, resolution: resolution)
        let maximum = (top / step).rounded(.up) * step
        return Self(
            .linear,
            from: 0,
            to: maximum,
            ticks: Self.multiples(of: step, from: 0, through: maximum * (1 + 1e-9))
        )
    }

    /// Linear from `low` to `high`, with a tick at every multiple of a round step between them:
    /// the least of 1, 2, 5 × 10^k ÷ `resolution` that makes at most `divisions` steps
    /// (`resolution` 1000: steps as fine as a thousandth).
    public static func stepped(from low: Double, to high: Double, divisions: Double, resolution: Double) -> Self {
        let step = Self.roundStep(Swift.max((high - low) / divisions, 1e-9), resolution: resolution)
        let first = (low / step).rounded(.up) * step
        return Self(.linear, from: low, to: high, ticks: Self.multiples(of: step, from: first, through: high + 1e-9))
    }

    /// Linear from `low` to `high`, cut into `divisions` equal steps, a tick at each cut and at both ends.
    public static func divided(from low: Double, to high: Double, into divisions: Double) -> Self {
        Self(
            .linear,
            from: low,
            to: high,
            ticks: stride(from: low, through: high, by: (high - low) / divisions).map { $0 }
        )
    }

    /// Logarithmic (base 10) over the whole decades that hold `low` and `high` (at least one
    /// decade), a tick at each power of ten; values under `floor` are drawn at it.
    public static func decades(from low: Double, to high: Double, floor: Double) -> Self {
        let first = log10(Swift.max(low, floor)).rounded(.down)
        let last = Swift.max(log10(Swift.max(high, floor)).rounded(.up), first + 1)
        return Self(
            .logarithmic(base: 10),
            from: first,
            to: last,
            ticks: (Int(first)...Int(last)).map { pow(10, Double($0)) },
            floor: floor
        )
    }

    /// Logarithmic (base 10) from the largest of 1, 2, 5 × 10^k at or under `lowest` to the
    /// smallest at or above `highest` (values under 1 count as 1), a tick at each of them in
    /// between, or only at the powers of ten when that would be more than `maximumTicks`.
    public static func roundLogarithmic(from lowest: Double, to highest: Double, maximumTicks: Int) -> Self {
        let low = NiceNumbers.floor(Swift.max(lowest, 1))
        var high = NiceNumbers.ceiling(highest)
        if high <= low { high = NiceNumbers.ceiling(low * 1.000_001) }
        var ticks = NiceNumbers.series(from: low, to: high)
        if ticks.count > maximumTicks { ticks = ticks.filter { log10($0).rounded() == log10($0) } }
        return Self(.logarithmic(base: 10), from: log10(low), to: log10(high), ticks: ticks, floor: 1)
    }

    /// The least of 1, 2, 5 × 10^k ÷ `resolution` at or above `least`.
    private static func roundStep(_ least: Double, resolution: Double) -> Double {
        NiceNumbers.ceiling(least * resolution) / resolution
    }

    /// `first`, `first + step`, … up to `limit`, added up step by step.
    private static func multiples(of step: Double, from first: Double, through limit: Double) -> [Double] {
        var values: [Double] = []
        var value = first
        while value <= limit {
            values.append(value)
            value += step
        }
        return values
    }
}
