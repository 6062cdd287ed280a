/// A length of time written with its unit in a scenario: `"250 ms"`, `"2s"`, `"30 min"`.
public struct TimeSpan: Sendable, Hashable, Comparable, ScenarioString, Encodable, CustomStringConvertible {
    /// The length in nanoseconds.
    public var nanoseconds: UInt64

    /// A span of `nanoseconds`.
    public init(nanoseconds: UInt64) {
        self.nanoseconds = nanoseconds
    }

    /// A span of `seconds`.
    public static func seconds(_ seconds: Double) -> TimeSpan {
        TimeSpan(nanoseconds: UInt64((seconds * 1e9).rounded()))
    }

    /// A span of `milliseconds`.
    public static func milliseconds(_ milliseconds: Double) -> TimeSpan {
        TimeSpan(nanoseconds: UInt64((milliseconds * 1e6).rounded()))
    }

    /// No time at all.
    public static let zero = TimeSpan(nanoseconds: 0)

    /// The units a span may be written in, with their size in nanoseconds.
    public static let units: [(names: [String], nanoseconds: Double)] = [
        (["ns"], 1),
        (["us", "µs"], 1e3),
        (["ms"], 1e6),
        (["s", "sec"], 1e9),
        (["m", "min"], 60e9),
        (["h"], 3600e9),
    ]

    /// Parses `"<number> <unit>"` (the space is optional), or several such terms from the
    /// largest unit down (`"1m30s"`, `"1 h 30 min"`, `"2s 500ms"`); `"0"` alone is allowed.
    public init?(parsing text: String) {
        let trimmed = text.trimmingCharacters(in: " ")
        if trimmed == "0" {
            self = .zero
            return
        }
        guard !trimmed.isEmpty else { return nil }
        var rest = Substring(trimmed)
        var nanoseconds = 0.0
        var previous = Double.infinity
        while !rest.isEmpty {
            let numberPart = rest.prefix { $0.isNumber || $0 == "." }
            rest = rest.dropFirst(numberPart.count).drop { $0 == " " }
            let unitPart = rest.prefix { $0.isLetter }
            rest = rest.dropFirst(unitPart.count).drop { $0 == " " }
            // Each term's unit smaller than the one before: "30s1m" and "1m1m" are mistakes.
            guard let number = Double(numberPart), number.isFinite, number >= 0,
                let unit = Self.units.first(where: { $0.names.contains(String(unitPart)) }),
                unit.nanoseconds < previous
            else { return nil }
            nanoseconds += number * unit.nanoseconds
            previous = unit.nanoseconds
        }
        guard nanoseconds < 1e18 else { return nil }
        self.nanoseconds = UInt64(nanoseconds.rounded())
    }

    /// What a valid duration above zero looks like.
    public static let positive = "a duration above zero such as \"500 ms\" or \"30 s\""
    /// What a valid span looks like.
    public static let expectation =
        "a duration such as \"250 ms\", \"2s\", \"30 min\" or \"1m30s\" (units ns, us, ms, s, m or min, h)"

    /// Encodes as the shortest exact string, e.g. `"250 ms"`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(self.description)
    }

    /// The span in seconds.
    public var seconds: Double { Double(self.nanoseconds) / 1e9 }

    /// `"250 ms"`, `"2 s"`, `"1.5 µs"`: the largest unit that keeps the number at least 1.
    public var description: String { Self.format(nanoseconds: Double(self.nanoseconds)) }

    /// Formats a time in nanoseconds with a readable unit and up to three significant decimals.
    public static func format(nanoseconds: Double) -> String {
        let scales: [(String, Double)] = [("h", 3600e9), ("min", 60e9), ("s", 1e9), ("ms", 1e6), ("µs", 1e3)]
        for (name, size) in scales where nanoseconds >= size {
            return "\(trimmed(nanoseconds / size)) \(name)"
        }
        return "\(trimmed(nanoseconds)) ns"
    }

    /// A number with at most three decimals and no trailing zeros.
    public static func trimmed(_ value: Double) -> String {
        let thousandths = (value * 1000).rounded()
        let whole = Int64(thousandths / 1000)
        var fraction = Int64(thousandths) - whole * 1000
        guard fraction != 0 else { return "\(whole)" }
        var digits = 3
        while fraction % 10 == 0 {
            fraction /= 10
            digits -= 1
        }
        let padded = String(repeating: "0", count: digits - String(fraction).count) + String(fraction)
        return "\(whole).\(padded)"
    }

    /// Orders by length.
    public static func < (lhs: TimeSpan, rhs: TimeSpan) -> Bool { lhs.nanoseconds < rhs.nanoseconds }
}

extension StringProtocol {
    /// The string without leading and trailing `character`s.
    package func trimmingCharacters(in character: Character) -> String {
        var slice = Substring(self)
        while slice.first == character { slice = slice.dropFirst() }
        while slice.last == character { slice = slice.dropLast() }
        return String(slice)
    }
}
