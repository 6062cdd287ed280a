public import LabCore

/// DNS-SD TXT record data (RFC 6763 §6): a sequence of length-prefixed `key=value` strings.
public enum TXTRecord {
    /// Encodes `records` as `key=value` strings in key order; no records encode as the one empty
    /// string that RFC 6763 §6.1 asks for.
    ///
    /// - Throws: `LabError` `.invalidScenario` for an empty key, a key with `=` or other than
    ///   printable ASCII, or a `key=value` over 255 bytes.
    public static func encode(_ records: [String: String]) throws(LabError) -> [UInt8] {
        var bytes: [UInt8] = []
        for (key, value) in records.sorted(by: { $0.key < $1.key }) {
            let printable = key.utf8.allSatisfy { (0x20...0x7E).contains($0) && $0 != UInt8(ascii: "=") }
            guard !key.isEmpty, printable else {
                throw LabError(
                    .invalidScenario,
                    "The TXT key '\(key)' must be one or more printable ASCII characters other than '='"
                )
            }
            let entry = Array(key.utf8) + [UInt8(ascii: "=")] + Array(value.utf8)
            guard entry.count <= 255 else {
                throw LabError(
                    .invalidScenario,
                    "The TXT record '\(key)=…' is \(entry.count) bytes long; at most 255 fit in one string"
                )
            }
            bytes.append(UInt8(entry.count))
            bytes += entry
        }
        if bytes.isEmpty { return [0] }
        guard bytes.count <= Int(UInt16.max) else {
            throw LabError(.invalidScenario, "The TXT records take \(bytes.count) bytes; at most 65535 fit")
        }
        return bytes
    }

    /// Decodes TXT record data.
    ///
    /// A key without `=` (a boolean attribute) gets the empty value, empty strings and strings
    /// starting with `=` are skipped, the first of keys that differ only in case wins
    /// (RFC 6763 §6.4), and a string cut short by the end of the data is dropped.
    public static func decode(_ bytes: [UInt8]) -> [String: String] {
        var records: [String: String] = [:]
        var seen: Set<String> = []
        var index = 0
        while index < bytes.count {
            let length = Int(bytes[index])
            let start = index + 1
            index = start + length
            guard length > 0, index <= bytes.count else { continue }
            let entry = bytes[start..<index]
            let separator = entry.firstIndex(of: UInt8(ascii: "="))
            let key = String(decoding: entry[..<(separator ?? index)], as: UTF8.self)
            guard !key.isEmpty, seen.insert(key.lowercased()).inserted else { continue }
            records[key] = separator.map { String(decoding: entry[($0 + 1)...], as: UTF8.self) } ?? ""
        }
        return records
    }
}
