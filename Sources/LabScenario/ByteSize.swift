/// Sizes in bytes as thresholds write them and reports show them.
public enum ByteSize {
    /// The units a size may carry, and their bytes: decimal `kB`/`MB`, binary `KiB`/`MiB`.
    public static let units: [(name: String, bytes: Double)] = [
        ("B", 1), ("kB", 1_000), ("KB", 1_000), ("KiB", 1_024), ("MB", 1_000_000), ("MiB", 1_048_576),
    ]

    /// The bytes in one `unit`; an empty unit is bytes; nil for a unit that is not a size.
    public static func scale(of unit: String) -> Double? {
        unit.isEmpty ? 1 : Self.units.first { $0.name == unit }?.bytes
    }

    /// `2,345 B`, `1.5 B` (an average), `1.21 MiB` from 1 MiB up.
    public static func format(_ bytes: Double) -> String {
        if bytes >= 1_048_576 {
            return "\(Self.grouped(bytes / 1_048_576, decimals: 2)) MiB"
        }
        let rounded = (bytes * 10).rounded() / 10
        return "\(Self.grouped(rounded, decimals: rounded == rounded.rounded() ? 0 : 1)) B"
    }

    /// A rate: `512 B/s`, `639.6 KiB/s`, `12.35 MiB/s`.
    public static func rate(_ bytesPerSecond: Double) -> String {
        if bytesPerSecond >= 1_048_576 { return "\(Self.grouped(bytesPerSecond / 1_048_576, decimals: 2)) MiB/s" }
        if bytesPerSecond >= 1_024 { return "\(Self.grouped(bytesPerSecond / 1_024, decimals: 1)) KiB/s" }
        return "\(Self.grouped(bytesPerSecond, decimals: 0)) B/s"
    }

    /// `value` with `decimals` decimals and its thousands grouped with commas.
    private static func grouped(_ value: Double, decimals: Int) -> String {
        let scale = [1.0, 10, 100][min(decimals, 2)]
        let whole = Int((value * scale).rounded())
        var integer = String(whole / Int(scale))
        var index = integer.count - 3
        while index > 0 {
            integer.insert(",", at: integer.index(integer.startIndex, offsetBy: index))
            index -= 3
        }
        guard decimals > 0 else { return integer }
        let fraction = String(whole % Int(scale))
        return integer + "." + String(repeating: "0", count: decimals - fraction.count) + fraction
    }
}
