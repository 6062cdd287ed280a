/// Locale-free number formatting, so reports are byte-identical wherever they are written.
public enum Numbers {
    /// `value` rounded to `decimals` places, e.g. `fixed(1.23456, 3)` → `"1.235"`; non-finite values print as `0`.
    public static func fixed(_ value: Double, _ decimals: Int, grouped: Bool = false) -> String {
        guard value.isFinite else { return Self.fixed(0, decimals, grouped: grouped) }
        var scale: Double = 1
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        // Past 2^63 a Double has no fractional digits left to show; clamp rather than trap.
        let units = scaled < 9.2e18 ? UInt64(scaled) : UInt64(9.2e18)
        let divisor = UInt64(scale)
        var whole = String(units / divisor)
        if grouped { whole = Self.group(whole) }
        let sign = value < 0 && units != 0 ? "-" : ""
        guard decimals > 0 else { return sign + whole }
        let fraction = String(units % divisor)
        return sign + whole + "." + String(repeating: "0", count: decimals - fraction.count) + fraction
    }

    /// An integer with thousands separated by commas: `12,345`.
    public static func integer(_ value: some BinaryInteger) -> String {
        value < 0 ? "-" + Self.group(String(value.magnitude)) : Self.group(String(value))
    }

    /// Inserts a comma every three digits from the right of a string of digits.
    private static func group(_ digits: String) -> String {
        var result = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { result.append(",") }
            result.append(character)
        }
        return result
    }
}
