public import Foundation
import LabCore

/// Writing and reading `results.json` (RunResult+Codable.swift is what it holds).
extension RunResult {
    /// The run as `results.json` holds it: pretty-printed, keys sorted, dates in ISO 8601 to
    /// the millisecond, each histogram's `[value, count]` pairs on one line.
    public func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = Self.dateEncoding
        return Self.collapsingPairs(try encoder.encode(self))
    }

    /// Reads the run saved in the `results.json` at `url`.
    public static func read(from url: URL) throws -> RunResult {
        let data = try InputFile.read(url.path)
        return try Self.decode(data, source: url.path)
    }

    /// Decodes a run from a `results.json`'s `data`; `source` names it in errors. Throws a
    /// `LabError` (`invalidScenario`) for a document of another format, one that does not
    /// decode (with the JSON path and what is wrong there), or an impossible histogram.
    public static func decode(_ data: Data, source: String = "results.json") throws -> RunResult {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = Self.dateDecoding
        // Check the tag first, so a document of another version says so instead of failing on a field.
        if let probe = try? decoder.decode(FormatProbe.self, from: data), let format = probe.format,
            format != Self.format
        {
            throw LabError(
                .invalidScenario,
                "\(source): unknown results format '\(format)'; this version of lab reads '\(Self.format)'"
            )
        }
        do {
            return try decoder.decode(RunResult.self, from: data)
        } catch let error as DecodingError {
            throw LabError(
                .invalidScenario,
                "\(source) is not a crypto-lab results document: \(Self.describe(error))",
                cause: UnderlyingError(describing: error)
            )
        }
    }

    /// ISO 8601 in UTC with milliseconds: `2026-01-01T00:00:00.000Z`.
    private static let dateStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    /// `date` as results.json writes it, rounded to the nearest millisecond. Foundation's
    /// style truncates, and a date it parsed from `.002Z` is a hair below that millisecond
    /// (binary fractions): formatted again it read `.001Z`, so half the instants lost a
    /// millisecond at each `lab merge`. The middle of the millisecond truncates to it.
    package static func iso8601(_ date: Date) -> String {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        return Date(timeIntervalSince1970: (milliseconds + 0.5) / 1000).formatted(Self.dateStyle)
    }

    /// Dates as results.json writes them (`iso8601`); shard.json's too.
    package static var dateEncoding: JSONEncoder.DateEncodingStrategy {
        .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Self.iso8601(date))
        }
    }

    /// Dates as results.json holds them: ISO 8601, with or without fractional seconds.
    package static var dateDecoding: JSONDecoder.DateDecodingStrategy {
        .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            for style in [Self.dateStyle, Date.ISO8601FormatStyle()] {
                if let date = try? style.parse(text) { return date }
            }
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription: "'\(text)' is not an ISO 8601 date"
            )
        }
    }

    /// Just the format tag.
    private struct FormatProbe: Decodable {
        var format: String?
    }

    /// `metadata.startedAt: …`: the JSON path and what is wrong there.
    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let path = GroupResult.jsonPath(context.codingPath)
            return path.isEmpty ? "(top level)" : path
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "\(path(context)): missing key '\(key.stringValue)'"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "\(path(context)): \(context.debugDescription)"
        @unknown default:
            return String(describing: error)
        }
    }

    /// `json` (as the pretty-printing encoder writes it) with each array of two numbers on one
    /// line: `[1292, 1]` for a histogram's `[value, count]` pair, where the encoder spends
    /// four lines and about 100 bytes. Histograms are most of a document: this makes it about
    /// a third of the size. Only a `[` followed by a line break can start a pair, and the
    /// encoder writes no raw line break inside a string, so no string is ever changed.
    static func collapsingPairs(_ json: Data) -> Data {
        let bytes = [UInt8](json)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count / 2)
        var index = 0
        while index < bytes.count {
            if let (first, second, after) = Self.pair(in: bytes, at: index) {
                output.append(UInt8(ascii: "["))
                output.append(contentsOf: bytes[first])
                output.append(contentsOf: [UInt8(ascii: ","), UInt8(ascii: " ")])
                output.append(contentsOf: bytes[second])
                output.append(UInt8(ascii: "]"))
                index = after
                continue
            }
            output.append(bytes[index])
            index += 1
        }
        return Data(output)
    }

    /// The array of two numbers that opens at `index`, each on its own line: the two numbers'
    /// ranges and the index after its `]`; nil if no such array opens there.
    private static func pair(in bytes: [UInt8], at index: Int) -> (Range<Int>, Range<Int>, Int)? {
        let newline = UInt8(ascii: "\n")
        guard bytes[index] == UInt8(ascii: "["), let (first, afterFirst) = Self.number(in: bytes, after: index + 1),
            afterFirst < bytes.count, bytes[afterFirst] == UInt8(ascii: ","),
            let (second, afterSecond) = Self.number(in: bytes, after: afterFirst + 1),
            afterSecond < bytes.count, bytes[afterSecond] == newline
        else { return nil }
        var close = afterSecond + 1
        while close < bytes.count, bytes[close] == UInt8(ascii: " ") { close += 1 }
        guard close < bytes.count, bytes[close] == UInt8(ascii: "]") else { return nil }
        return (first, second, close + 1)
    }

    /// After a line break and its indentation: the number there and the index after it.
    private static func number(in bytes: [UInt8], after index: Int) -> (Range<Int>, Int)? {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\n") else { return nil }
        var start = index + 1
        while start < bytes.count, bytes[start] == UInt8(ascii: " ") { start += 1 }
        var end = start
        while end < bytes.count, Self.isNumeric(bytes[end]) { end += 1 }
        return end > start ? (start..<end, end) : nil
    }

    /// Whether `byte` can be part of a JSON number.
    private static func isNumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
            || byte == UInt8(ascii: "+")
    }
}
