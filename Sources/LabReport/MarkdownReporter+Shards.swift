import Foundation
import LabCharts
import LabCore
public import LabResults

// A merge of shards in report.md (and through its Markdown, report.html): the shards that
// failed, first, and how well the merged ones overlapped.
extension MarkdownReporter {
    /// `This merge is not the whole run: shard 2/2 on lab-b: …; shard …`, or nil for a merge
    /// without failed shards; host and reason as given (the caller escapes them).
    public static func notWhole(_ metadata: RunMetadata) -> String? {
        guard let failed = metadata.failedShards, !failed.isEmpty else { return nil }
        return "This merge is not the whole run: " + failed.map(\.description).joined(separator: "; ")
    }

    /// The quote at the top of report.md for a merge with failed shards; none otherwise.
    static func notWholeBlock(_ result: RunResult) -> [String] {
        guard let text = Self.notWhole(result.metadata) else { return [] }
        return ["> ❌ **\(Self.prose(text))**", ""]
    }

    /// `Measured windows overlap 97.4% (intersection ÷ union); shards began within 12 ms of
    /// each other.`, or whichever half the merge recorded; nil for anything but a merge of
    /// two or more shards.
    public static func shardSentence(_ metadata: RunMetadata) -> String? {
        var parts: [String] = []
        if let overlap = metadata.shardWindowOverlap {
            parts.append("Measured windows overlap \(Numbers.fixed(overlap * 100, 1))% (intersection ÷ union)")
        }
        if let spread = metadata.shardStartSpread {
            // results.json keeps times to the millisecond.
            let within =
                spread < 0.001
                ? "1 ms (the resolution of results.json's times)" : TimeSpan.format(nanoseconds: spread * 1e9)
            parts.append("shards began within \(within) of each other")
        }
        guard var sentence = parts.joined(separator: "; ").nilIfEmpty else { return nil }
        sentence = sentence.prefix(1).uppercased() + sentence.dropFirst()
        return sentence + "."
    }

    /// The Shards section of a merge: the sentence, then each shard's host, start, measured
    /// window (from the earliest one's start) and iterations, the failed ones last.
    static func shards(_ result: RunResult) -> [String] {
        let metadata = result.metadata
        let windows = metadata.shardWindows ?? []
        let failed = metadata.failedShards ?? []
        guard !windows.isEmpty || !failed.isEmpty else { return [] }
        var lines = ["## Shards", ""]
        if let sentence = Self.shardSentence(metadata) { lines += [sentence, ""] }
        lines += [
            "| Shard | Host | Began | Measured window | Iterations | State |",
            "|:--|:--|:--|:--|--:|:--|",
        ]
        let origin = windows.map(\.measuredFrom).min()
        for window in windows {
            let offset = origin.map { window.measuredFrom.timeIntervalSince($0) } ?? 0
            let length = window.measuredTo.timeIntervalSince(window.measuredFrom)
            let cells = [
                Self.cell(window.shard), Self.cell(window.host),
                window.clientsStartedAt.map(RunResult.iso8601) ?? "—",
                (offset > 0 ? "+" + TimeSpan.format(nanoseconds: offset * 1e9) : "+0")
                    + " for \(TimeSpan.format(nanoseconds: length * 1e9))",
                Numbers.integer(window.iterations), "✅ merged",
            ]
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        for shard in failed {
            let cells = [Self.cell(shard.shard), Self.cell(shard.host), "—", "—", "—", "❌ failed: " + Self.cell(shard.reason)]
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        return lines + [""]
    }
}

extension String {
    /// The text, or nil if it is empty.
    fileprivate var nilIfEmpty: String? { self.isEmpty ? nil : self }
}
