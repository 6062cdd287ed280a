public import Foundation

/// A strict check of JSON text (RFC 8259) that says where it breaks and what was expected
/// there: Foundation's parsers on Linux accept trailing commas and more, and name a break by
/// its byte offset. Refused: trailing commas, comments, `NaN`, `Infinity`, single quotes,
/// unquoted keys, leading zeros, control characters and bad escapes in strings, lone
/// surrogates, bytes that are not UTF-8, a byte-order mark, a key twice in one object.
public enum StrictJSON {
    /// Where the text breaks: a line and column (from 1, in characters) and what was expected.
    public struct SyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
        public var line: Int
        public var column: Int
        public var message: String
        /// `line 4, column 3: expected ',' or '}' after the value of "clients", found '"load"'`.
        public var description: String { "line \(self.line), column \(self.column): \(self.message)" }
    }

    /// Nil if `data` is one JSON value (surrounded by whitespace at most), else the first break.
    public static func check(_ data: Data) -> SyntaxError? {
        var scanner = Scanner(bytes: Array(data))
        do { try scanner.run() } catch { return error }
        return nil
    }

    /// Nil if `text` is JSON (`check(_:)`).
    public static func check(_ text: String) -> SyntaxError? { Self.check(Data(text.utf8)) }
}

/// The check itself: one pass with a stack of open containers, no recursion.
private struct Scanner {
    /// An open object or array: what messages call it (`"clients"`, `"flows"[2]`, `the document`),
    /// its values so far, whether `run` has yet to read one, its last key, where each key starts.
    struct Container {
        var isObject: Bool
        var name: String
        var count = 0
        var isNew = true
        var key = ""
        var keys: [String: Int] = [:]
    }

    let bytes: [UInt8]
    var index = 0
    var stack: [Container] = []
    var byte: UInt8? { self.index < self.bytes.count ? self.bytes[self.index] : nil }

    mutating func run() throws(StrictJSON.SyntaxError) {
        if let bad = self.firstNonUTF8() {
            throw self.error(at: bad, "expected UTF-8 text, found the byte 0x\(String(self.bytes[bad], radix: 16))")
        }
        if self.bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            throw self.error(at: 0, "expected JSON, found a byte-order mark (U+FEFF): save the file without one")
        }
        try self.value(expected: "a JSON value")
        while true {
            self.skipWhitespace()
            guard let top = self.stack.last else {
                if self.byte != nil { throw self.error("expected the end of the file after the document's value") }
                return
            }
            let close = top.isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
            if top.isNew {
                self.stack[self.stack.count - 1].isNew = false
                if self.byte == close {
                    self.index += 1
                    self.stack.removeLast()
                } else if top.isObject { try self.member() } else { try self.value(expected: "a value or ']'") }
                continue
            }
            let after = top.isObject ? "the value of \"\(top.key)\"" : "element [\(top.count - 1)] of \(top.name)"
            switch self.byte {
            case close:
                self.index += 1
                self.stack.removeLast()
            case UInt8(ascii: ","):
                self.index += 1
                self.skipWhitespace()
                if self.byte == close {
                    throw self.error("expected \(top.isObject ? "a key" : "a value") after ',', found \(self.found())")
                }
                if top.isObject { try self.member() } else { try self.value(expected: "a value after ','") }
            default:
                let expected = "expected ',' or '\(Character(Unicode.Scalar(close)))' after \(after)"
                throw self.error("\(expected), found \(self.found())")
            }
        }
    }

    /// A value; an object or array is only opened, for `run` to go on with (no recursion).
    mutating func value(expected: String) throws(StrictJSON.SyntaxError) {
        self.skipWhitespace()
        if !self.stack.isEmpty { self.stack[self.stack.count - 1].count += 1 }
        switch self.byte {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            self.stack.append(Container(isObject: self.byte == UInt8(ascii: "{"), name: self.childName))
            self.index += 1
        case UInt8(ascii: "\""): _ = try self.string()
        case UInt8(ascii: "-"), .some(UInt8(ascii: "0")...UInt8(ascii: "9")): try self.number()
        default:
            let word = self.word
            guard ["true", "false", "null"].contains(word) else {
                throw self.error("expected \(expected), found \(self.found())")
            }
            self.index += word.utf8.count
        }
    }

    /// What a container opened here is called: the key it is the value of, or its place in an array.
    var childName: String {
        guard let top = self.stack.last else { return "the document" }
        if top.isObject { return "\"\(top.key)\"" }
        let (name, deep) = ("\(top.name)[\(top.count - 1)]", "an array nested deep in arrays")
        return top.name == deep || name.count > 40 ? deep : name
    }

    /// `"key": value` in the innermost object; a key it already has is refused, naming both.
    mutating func member() throws(StrictJSON.SyntaxError) {
        let start = self.index
        guard self.byte == UInt8(ascii: "\"") else {
            throw self.error("expected a key in double quotes, found \(self.found())")
        }
        let key = try self.string()
        let top = self.stack.count - 1
        if let first = self.stack[top].keys[key] {
            let (line, column) = self.position(of: first)
            let twice = "the key \"\(key)\" appears twice in \(self.stack[top].name)"
            throw self.error(at: start, "\(twice), first at line \(line), column \(column)")
        }
        self.stack[top].keys[key] = start
        self.stack[top].key = key
        self.skipWhitespace()
        guard self.byte == UInt8(ascii: ":") else {
            throw self.error("expected ':' after the key \"\(key)\", found \(self.found())")
        }
        self.index += 1
        try self.value(expected: "the value of \"\(key)\"")
    }

    /// A string from its opening quote; its text, escapes resolved.
    mutating func string() throws(StrictJSON.SyntaxError) -> String {
        let start = self.index
        self.index += 1
        var scalars = String.UnicodeScalarView()
        while true {
            guard let byte = self.byte else {
                let (line, column) = self.position(of: start)
                let expected = "expected '\"' to close the string at line \(line), column \(column)"
                throw self.error("\(expected), found the end of the file")
            }
            switch byte {
            case UInt8(ascii: "\""):
                self.index += 1
                return String(scalars)
            case UInt8(ascii: "\\"): scalars.append(try self.escape())
            case 0..<0x20:
                throw self.error("expected an escape such as \\n or \\t, found \(self.found()) in a string")
            default:
                let length = byte < 0x80 ? 1 : byte < 0xE0 ? 2 : byte < 0xF0 ? 3 : 4
                let text = String(decoding: self.bytes[self.index..<self.index + length], as: UTF8.self)
                scalars.append(contentsOf: text.unicodeScalars)
                self.index += length
            }
        }
    }

    /// An escape from its backslash: one scalar, a surrogate pair joined.
    mutating func escape() throws(StrictJSON.SyntaxError) -> Unicode.Scalar {
        let simple: [UInt8: Unicode.Scalar] = [
            UInt8(ascii: "\""): "\"", UInt8(ascii: "\\"): "\\", UInt8(ascii: "/"): "/", UInt8(ascii: "b"): "\u{8}",
            UInt8(ascii: "f"): "\u{C}", UInt8(ascii: "n"): "\n", UInt8(ascii: "r"): "\r", UInt8(ascii: "t"): "\t",
        ]
        self.index += 1
        if let byte = self.byte, let scalar = simple[byte] {
            self.index += 1
            return scalar
        }
        guard self.byte == UInt8(ascii: "u") else {
            let escapes = #"\" \\ \/ \b \f \n \r \t or \u and 4 hex digits"#
            throw self.error("expected an escape (\(escapes)) after '\\', found \(self.found())")
        }
        let high = try self.hex4()
        if (0xDC00...0xDFFF).contains(high) {
            let lone = "found a lone low surrogate \\u\(String(format: "%04X", high))"
            throw self.error(at: self.index - 6, "expected a character, \(lone)")
        }
        guard (0xD800...0xDBFF).contains(high) else { return Unicode.Scalar(high)! }
        var low: UInt32 = 0
        if self.bytes[self.index...].starts(with: [0x5C, 0x75]) {
            self.index += 1
            low = try self.hex4()
        }
        guard (0xDC00...0xDFFF).contains(low) else {
            let after = "after the high surrogate \\u\(String(format: "%04X", high))"
            throw self.error("expected \\u and a low surrogate (DC00 to DFFF) \(after)")
        }
        return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))!
    }

    /// `u` and four hex digits.
    mutating func hex4() throws(StrictJSON.SyntaxError) -> UInt32 {
        self.index += 1
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = self.byte, let digit = Character(Unicode.Scalar(byte)).hexDigitValue else {
                throw self.error("expected 4 hex digits after \\u, found \(self.found())")
            }
            value = value * 16 + UInt32(digit)
            self.index += 1
        }
        return value
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    mutating func number() throws(StrictJSON.SyntaxError) {
        if self.byte == UInt8(ascii: "-") { self.index += 1 }
        let start = self.index
        try self.digits(after: "'-'")
        if self.bytes[start] == UInt8(ascii: "0"), self.index - start > 1 {
            let digits = String(decoding: self.bytes[start..<self.index], as: UTF8.self)
            throw self.error(at: start, "expected a number without leading zeros, found '\(digits)'")
        }
        if self.byte == UInt8(ascii: ".") {
            self.index += 1
            try self.digits(after: "the decimal point")
        }
        if self.byte == UInt8(ascii: "e") || self.byte == UInt8(ascii: "E") {
            self.index += 1
            if self.byte == UInt8(ascii: "+") || self.byte == UInt8(ascii: "-") { self.index += 1 }
            try self.digits(after: "the exponent's 'e'")
        }
    }

    mutating func digits(after what: String) throws(StrictJSON.SyntaxError) {
        let start = self.index
        while let byte = self.byte, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { self.index += 1 }
        if self.index == start { throw self.error("expected a digit after \(what), found \(self.found())") }
    }

    mutating func skipWhitespace() {
        while let byte = self.byte, [0x20, 0x09, 0x0A, 0x0D].contains(byte) { self.index += 1 }
    }

    /// The ASCII letters from here: a literal, or what a user meant as one.
    var word: String {
        let letters = self.bytes[self.index...].prefix { $0 < 0x80 && Character(Unicode.Scalar($0)).isLetter }
        return String(decoding: letters, as: UTF8.self)
    }

    /// What is here, for a message, with why JSON refuses it when it is something JSON lacks.
    func found() -> String {
        guard let byte = self.byte else { return "the end of the file" }
        let word = self.word
        switch word {
        case "NaN", "Infinity", "inf", "nan": return "'\(word)' (JSON has no NaN or Infinity)"
        case "True", "False", "None", "Null", "TRUE", "FALSE", "NULL":
            return "'\(word)' (JSON writes true, false and null)"
        case "": break
        default: return "'\(word)'"
        }
        switch byte {
        case UInt8(ascii: "/"): return "'/' (JSON has no comments)"
        case UInt8(ascii: "'"): return "\"'\" (JSON strings take double quotes)"
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
            let previous = self.bytes[..<self.index].last { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
            let note = previous == UInt8(ascii: ",") ? " (JSON allows no comma before it)" : ""
            return "'\(Character(Unicode.Scalar(byte)))'\(note)"
        case 0..<0x20, 0x7F: return "the control character U+\(String(format: "%04X", byte))"
        case UInt8(ascii: "\""):
            let rest = self.bytes[self.index...].dropFirst().prefix(30).prefix { $0 != 0x0A }
            let end = rest.firstIndex(of: UInt8(ascii: "\"")).map { $0 + 1 } ?? self.index + 1
            return "'\(String(decoding: self.bytes[self.index..<end], as: UTF8.self))'"
        default:
            let end = self.bytes[self.index...].dropFirst().firstIndex { $0 & 0xC0 != 0x80 } ?? self.bytes.count
            return "'\(String(decoding: self.bytes[self.index..<end], as: UTF8.self))'"
        }
    }

    /// A break at `offset`, here by default.
    func error(at offset: Int? = nil, _ message: String) -> StrictJSON.SyntaxError {
        let (line, column) = self.position(of: offset ?? self.index)
        return StrictJSON.SyntaxError(line: line, column: column, message: message)
    }

    /// The line and column (in characters) of a byte offset.
    func position(of offset: Int) -> (line: Int, column: Int) {
        let before = self.bytes[..<offset]
        let lineStart = (before.lastIndex(of: 0x0A) ?? -1) + 1
        let line = before.count(where: { $0 == 0x0A }) + 1
        return (line, self.bytes[lineStart..<offset].count(where: { $0 & 0xC0 != 0x80 }) + 1)
    }

    /// The offset of the first byte that is not part of well-formed UTF-8, if any.
    func firstNonUTF8() -> Int? {
        var (parser, iterator, offset) = (Unicode.UTF8.ForwardParser(), self.bytes.makeIterator(), 0)
        while case .valid(let encoded) = parser.parseScalar(from: &iterator) { offset += encoded.count }
        return offset < self.bytes.count ? offset : nil
    }
}
