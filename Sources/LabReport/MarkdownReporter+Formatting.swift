import Foundation
import Histogram
import LabCharts
import LabCore
import LabResults

// report.md's charts and the formatting its tables share.
extension MarkdownReporter {
    // MARK: Charts

    /// A distinct file name per group, in group order: `latency-<flow label>.svg`, with the suite,
    /// provider and transport added when labels repeat (merged runs), and a number after that.
    static func latencyChartNames(_ result: RunResult) -> [String] {
        let tiers: [(GroupKey) -> [String]] = [
            { [$0.flow] }, { [$0.flow, $0.suite, $0.provider] }, { [$0.flow, $0.suite, $0.provider, $0.transport] },
        ]
        let keys = result.groups.map(\.key)
        var used: Set<String> = [Self.throughputChartName]
        return keys.map { key in
            // The first tier that tells this group apart from every other.
            let tier =
                tiers.first { tier in keys.filter { SVG.slug(tier($0)) == SVG.slug(tier(key)) }.count == 1 } ?? tiers[2]
            let base = SVG.slug(tier(key))
            var name = "latency-\(base).svg"
            var counter = 2
            while used.contains(name) {
                name = "latency-\(base)-\(counter).svg"
                counter += 1
            }
            used.insert(name)
            return name
        }
    }

    // MARK: Formatting

    /// A time unit for a table.
    struct TimeUnit {
        /// `µs`.
        var name: String
        /// Nanoseconds in one unit.
        var nanoseconds: Double
        /// Decimals shown.
        var decimals: Int
    }

    /// The largest unit in which every non-zero median is at least 1, so no row reads `0.00`:
    /// chosen once per report, over every group's steps, so that every table has the same unit.
    static func unit(for medians: [Double]) -> TimeUnit {
        let units = [
            TimeUnit(name: "s", nanoseconds: 1e9, decimals: 3), TimeUnit(name: "ms", nanoseconds: 1e6, decimals: 2),
            TimeUnit(name: "µs", nanoseconds: 1e3, decimals: 2), TimeUnit(name: "ns", nanoseconds: 1, decimals: 0),
        ]
        guard let smallest = medians.filter({ $0 > 0 }).min() else { return units[2] }
        return units.first { smallest >= $0.nanoseconds } ?? units[3]
    }

    /// `cx · x25519 · swift-crypto · in-process`.
    static func label(_ key: GroupKey) -> String {
        ([key.flow] + Self.suiteAndProvider(key) + [key.transport]).joined(separator: " · ")
    }

    /// The suite and the provider, or just the provider for a flow without a suite (`-`).
    static func suiteAndProvider(_ key: GroupKey) -> [String] {
        key.suite == "-" ? [key.provider] : [key.suite, key.provider]
    }

    /// `800 of 1,000 planned`, or `800` for an open-model run.
    static func iterations(_ result: RunResult) -> String {
        let done = Numbers.integer(result.completedIterations)
        return result.plannedIterations.map { "\(done) of \(Numbers.integer($0)) planned" } ?? done
    }

    /// `3 (signatureInvalid 2, decryptFailed 1)`: most frequent kind first; with `messages`,
    /// each kind's first message after it (`other 2: "badRequest: The key 'suite' is missing"`).
    static func errors(_ total: UInt64, _ byKind: [String: UInt64], messages: [String: String] = [:]) -> String {
        guard total > 0 else { return "0" }
        let kinds = byKind.filter { $0.value > 0 }.sorted { ($1.value, $0.key) < ($0.value, $1.key) }
        return Numbers.integer(total) + " ("
            + kinds.map { kind in
                let message = messages[kind.key].map { ": \"\(Self.firstLine($0))\"" } ?? ""
                return "\(kind.key) \(Numbers.integer(kind.value))\(message)"
            }
            .joined(separator: ", ") + ")"
    }

    /// The first line of `message`, at most 200 characters: an error's text in a summary.
    static func firstLine(_ message: String) -> String {
        let line = message.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        return line.count > 200 ? String(line.prefix(199)) + "…" : line
    }

    /// `2026-01-01 00:00:00 UTC`.
    static func utc(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ value: Int?) -> String { (value ?? 0) < 10 ? "0\(value ?? 0)" : "\(value ?? 0)" }
        return "\(parts.year ?? 0)-\(two(parts.month))-\(two(parts.day)) "
            + "\(two(parts.hour)):\(two(parts.minute)):\(two(parts.second)) UTC"
    }

    /// Text made safe for a table cell: pipes escaped, line breaks turned into spaces.
    static func cell(_ text: String) -> String {
        text.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\r\n", with: " ")
            .replacingOccurrences(of: "\n", with: " ")
    }

    /// `text` as prose in Markdown that report.html renders (Ink passes tags through): a
    /// table-safe cell with `<` and `>` as entities and control characters as `U+001B`, so that
    /// a name from a results.json, a peer or a scenario reads as written and never acts.
    static func prose(_ text: String) -> String {
        Self.cell(Self.printable(text, as: { "U+" + $0 }))
            .replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }

    /// `text` for a terminal: control characters (ESC, BEL, the C1 range) shown as `\u{1B}`
    /// (or as `shown` makes their hexadecimal code) instead of acting, line breaks kept.
    public static func printable(_ text: String, as shown: (String) -> String = { "\\u{\($0)}" }) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            if scalar == "\n" || scalar == "\t" || !(scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)) {
                out.unicodeScalars.append(scalar)
            } else {
                let code = String(scalar.value, radix: 16, uppercase: true)
                out += shown(String(repeating: "0", count: max(0, 4 - code.count)) + code)
            }
        }
        return out
    }

    /// `text` as inline code, fenced with more backticks than it contains, safe in a table cell.
    static func code(_ text: String) -> String {
        let fence = Self.fence(for: text, minimum: 1)
        let padded = text.hasPrefix("`") || text.hasSuffix("`") ? " \(text) " : text
        return fence + Self.cell(padded) + fence
    }

    /// A run of backticks longer than any in `text`, and at least `minimum` long.
    static func fence(for text: String, minimum: Int) -> String {
        var longest = 0
        var current = 0
        for character in text {
            current = character == "`" ? current + 1 : 0
            longest = Swift.max(longest, current)
        }
        return String(repeating: "`", count: Swift.max(minimum, longest + 1))
    }

    /// Image alt text with brackets escaped.
    static func escapeAlt(_ text: String) -> String {
        text.replacingOccurrences(of: "[", with: "\\[").replacingOccurrences(of: "]", with: "\\]")
    }
}
