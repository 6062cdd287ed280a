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

    // MARK: Text from elsewhere

    // The one rule for text the lab did not write itself (a server's error codes and messages,
    // its serverStats strings, names and notes in a results.json, a scenario's fields): it is
    // shown, never obeyed. `printable` is the rule for a terminal or a log, `cell` for Markdown
    // (report.md, comparison.md, the GitHub summary, and through Ink report.html's Details),
    // `code` for Markdown's inline code. docs/hardening.md, "Text from a peer".

    /// Whether `scalar` is shown as its code rather than written: the C0 controls but line
    /// feed and tab (ESC, BEL, CR, BS), DEL, the C1 controls (CSI U+009B, OSC U+009D), and the
    /// bidirectional overrides and isolates (U+202A–U+202E, U+2066–U+2069), which reorder
    /// what a reader sees.
    public static func isShownAsCode(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0A, 0x09: false
        case 0x00..<0x20, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// `text` for a terminal or a log: each character `isShownAsCode` names shown as `\u{1B}`
    /// (or as `shown` makes its hexadecimal code) instead of acting; line breaks and tabs kept.
    public static func printable(_ text: String, as shown: (String) -> String = { "\\u{\($0)}" }) -> String {
        guard text.unicodeScalars.contains(where: Self.isShownAsCode) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if Self.isShownAsCode(scalar) {
                let code = String(scalar.value, radix: 16, uppercase: true)
                out += shown(String(repeating: "0", count: max(0, 4 - code.count)) + code)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// `text` as Markdown text that reads as written, in a table cell or in prose: control
    /// characters as `U+001B`, `&`, `<`, `>`, `[` and `]` as character references (no tag, no
    /// autolink, no link and no image: Ink passes tags through to report.html, and an image
    /// is fetched when the page opens), pipes escaped and line breaks turned into spaces.
    static func cell(_ text: String) -> String {
        var out = ""
        for character in Self.printable(text, as: { "U+" + $0 }) {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "[": out += "&#91;"
            case "]": out += "&#93;"
            case "|": out += "\\|"
            case "\n", "\r\n", "\r": out += " "
            default: out.append(character)
            }
        }
        return out
    }

    /// The same as `cell`: text from elsewhere in a sentence of Markdown.
    static func prose(_ text: String) -> String { Self.cell(text) }

    /// `text` as inline code, fenced with more backticks than it contains, safe in a table cell.
    static func code(_ text: String) -> String {
        let fence = Self.fence(for: text, minimum: 1)
        // Inside code Ink writes `<`, `>` and `&` as references itself, and Markdown reads no
        // link: only the controls, the pipes and the line breaks need anything.
        let shown = Self.printable(text, as: { "U+" + $0 }).replacingOccurrences(of: "|", with: "\\|")
            .replacingOccurrences(of: "\r\n", with: " ").replacingOccurrences(of: "\n", with: " ")
        let padded = shown.hasPrefix("`") || shown.hasSuffix("`") ? " \(shown) " : shown
        return fence + padded + fence
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
}
