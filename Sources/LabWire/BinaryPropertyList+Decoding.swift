import LabCore

extension BinaryPropertyList {
    /// Decodes `body`: a bplist00 whose top object is a dictionary of at most `maxKeys` string
    /// keys whose values are strings, data, integers, booleans (or reals, dates and UIDs, kept
    /// for the typed accessors to refuse). Anything else is a `.malformedMessage` error.
    static func decode(_ body: [UInt8]) throws -> [Entry] {
        try body.withUnsafeBufferPointer { bytes in
            var reader = try BinaryPropertyListReader(bytes)
            return try reader.topDictionary()
        }
    }

    /// The keys of `body`'s top dictionary, read as `decode` reads them, without its values:
    /// whether a body is msg/1 (it has the key `op`) does not depend on whether its values
    /// are ones a body may hold.
    static func keys(_ body: [UInt8]) throws -> [String] {
        try body.withUnsafeBufferPointer { bytes in
            var reader = try BinaryPropertyListReader(bytes)
            return try reader.topKeys()
        }
    }
}

/// Reads one body. Every byte it reads has been checked to lie inside the objects (before the
/// offset table) or inside the offset table first.
private struct BinaryPropertyListReader {
    typealias Marker = BinaryPropertyList.Marker
    typealias Value = BinaryPropertyList.Value

    private let bytes: UnsafeBufferPointer<UInt8>
    private let offsetSize: Int
    private let referenceSize: Int
    private let objectCount: Int
    private let topObject: Int
    /// Where the offset table begins; the objects lie between the header and here.
    private let objectsEnd: Int
    /// How many more bytes of strings and data the body may decode to. Offsets may point into
    /// one another's bytes, so without a budget 64 keys or values could each copy the same
    /// 5 MiB. Every object of a well-formed body has bytes of its own, and one used both as a
    /// key and as a value is decoded twice (a value shared by several keys, once), so twice
    /// the objects' bytes is enough for any honest body.
    private var budget: Int

    /// Reads and checks the header and the trailer.
    init(_ bytes: UnsafeBufferPointer<UInt8>) throws {
        self.bytes = bytes
        let header = BinaryPropertyList.magic.count
        // The smallest body: header, a one-byte object, a one-byte offset, the trailer.
        guard bytes.count >= header + 2 + BinaryPropertyList.trailerSize else {
            throw Self.malformed("its \(bytes.count) bytes are too few for a header, an object and a trailer")
        }
        guard bytes.starts(with: BinaryPropertyList.magic) else {
            throw Self.malformed("it does not begin with 'bplist00'")
        }
        let trailer = bytes.count - BinaryPropertyList.trailerSize
        let offsetSize = Int(bytes[trailer + 6])
        let referenceSize = Int(bytes[trailer + 7])
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else {
            throw Self.malformed(
                "its trailer gives offset size \(offsetSize) and reference size \(referenceSize); 1 to 8"
            )
        }
        let objectCount = Self.unsigned(bytes, at: trailer + 8, size: 8)
        let topObject = Self.unsigned(bytes, at: trailer + 16, size: 8)
        let tableOffset = Self.unsigned(bytes, at: trailer + 24, size: 8)
        // Each object takes at least one byte, so there cannot be more than the body has bytes.
        guard objectCount >= 1, objectCount <= UInt64(trailer), topObject < objectCount else {
            throw Self.malformed("its trailer gives \(objectCount) objects with the top one at \(topObject)")
        }
        guard tableOffset > UInt64(header), tableOffset <= UInt64(trailer),
            objectCount * UInt64(offsetSize) <= UInt64(trailer) - tableOffset
        else {
            throw Self.malformed("its offset table (at \(tableOffset), \(objectCount) entries) lies outside the body")
        }
        self.offsetSize = offsetSize
        self.referenceSize = referenceSize
        self.objectCount = Int(objectCount)
        self.topObject = Int(topObject)
        self.objectsEnd = Int(tableOffset)
        self.budget = 2 * Int(tableOffset)
    }

    /// Reads the top object, which must be a flat dictionary.
    mutating func topDictionary() throws -> [BinaryPropertyList.Entry] {
        let (count, references) = try self.topDictionaryLayout()
        var entries: [BinaryPropertyList.Entry] = []
        entries.reserveCapacity(count)
        for index in 0..<count {
            let key = try self.key(try self.reference(at: references + index * self.referenceSize), index: index)
            let valuePosition = references + (count + index) * self.referenceSize
            let object = try self.reference(at: valuePosition)
            // A value object that several keys share is decoded once: 64 references to one
            // large data object cost one copy, not 64.
            var shared: Value?
            for earlier in 0..<index
            where self.rawReference(at: references + (count + earlier) * self.referenceSize) == object {
                shared = entries[earlier].value
                break
            }
            let value = try shared ?? self.value(object, key: key)
            // At most 64 keys: comparing with each earlier one is at most 2,016 comparisons,
            // of keys whose bytes together are within the budget.
            guard !entries.contains(where: { $0.key == key }) else {
                throw Self.malformed("the key '\(key.prefix(64))' appears twice")
            }
            entries.append(BinaryPropertyList.Entry(key: key, value: value))
        }
        return entries
    }

    /// Reads the top dictionary's keys alone, not its values.
    mutating func topKeys() throws -> [String] {
        let (count, references) = try self.topDictionaryLayout()
        var keys: [String] = []
        keys.reserveCapacity(count)
        for index in 0..<count {
            keys.append(try self.key(try self.reference(at: references + index * self.referenceSize), index: index))
        }
        return keys
    }

    /// The top dictionary's number of keys and where its key references begin.
    private func topDictionaryLayout() throws -> (count: Int, references: Int) {
        let start = try self.offset(of: self.topObject)
        let marker = self.bytes[start]
        guard marker >> 4 == Marker.dictionary else {
            throw LabError(
                .malformedMessage,
                "The property list's top level is \(Self.typeName(marker)), not a dictionary"
            )
        }
        let (keys, references) = try self.length(at: start, of: .dictionary)
        guard keys <= UInt64(BinaryPropertyList.maxKeys) else {
            throw LabError(
                .malformedMessage,
                "The body's dictionary has \(keys) keys; at most \(BinaryPropertyList.maxKeys) are accepted"
            )
        }
        let count = Int(keys)
        guard 2 * count * self.referenceSize <= self.objectsEnd - references else {
            throw Self.malformed("its dictionary's \(count) keys and values run past the objects")
        }
        return (count, references)
    }

    /// Key number `index`, which must be a string.
    private mutating func key(_ object: Int, index: Int) throws -> String {
        let start = try self.offset(of: object)
        let marker = self.bytes[start]
        switch marker >> 4 {
        case Marker.asciiString, Marker.utf16String:
            return try self.string(at: start, of: .key(index))
        default:
            throw Self.malformed("key \(index) is \(Self.typeName(marker)); keys are strings")
        }
    }

    /// The value of `key`: one scalar object, never a container.
    private mutating func value(_ object: Int, key: String) throws -> Value {
        let start = try self.offset(of: object)
        let marker = self.bytes[start]
        let nibble = Int(marker & 0x0F)
        let what = Subject.value(key)
        switch marker >> 4 {
        case Marker.simple where marker == Marker.falseByte:
            return .bool(false)
        case Marker.simple where marker == Marker.trueByte:
            return .bool(true)
        case Marker.integer:
            return .integer(try self.integer(at: start, of: what))
        case Marker.real where nibble == 2 || nibble == 3:
            return .other(typeName: "a real", object: try self.object(at: start, size: 1 << nibble, of: what))
        case Marker.date where nibble == 3:
            return .other(typeName: "a date", object: try self.object(at: start, size: 8, of: what))
        case Marker.uid:
            return .other(typeName: "a UID", object: try self.object(at: start, size: nibble + 1, of: what))
        case Marker.data:
            let (count, payload) = try self.length(at: start, of: what)
            guard count <= UInt64(self.objectsEnd - payload) else {
                throw Self.malformed("\(what) holds \(count) bytes of data, which run past the objects")
            }
            try self.spend(Int(count), on: what)
            return .data(Array(UnsafeBufferPointer(rebasing: self.bytes[payload..<(payload + Int(count))])))
        case Marker.asciiString, Marker.utf16String:
            return .string(try self.string(at: start, of: what))
        case Marker.array, Marker.orderedSet, Marker.set, Marker.dictionary:
            throw LabError(
                .malformedMessage,
                "The body is not a flat binary property list: \(what) holds \(Self.typeName(marker)), "
                    + "a container; bodies are flat"
            )
        default:
            throw Self.malformed("\(what) holds \(Self.typeName(marker)), which is not a value")
        }
    }

    /// An integer object: 1, 2 or 4 bytes unsigned, 8 bytes signed, or 16 bytes signed if the
    /// value fits in 64 bits (plistlib writes 2^63 to 2^64 - 1 so; they do not fit an `Int`).
    private func integer(at start: Int, of what: Subject) throws -> Int {
        let nibble = Int(self.bytes[start] & 0x0F)
        guard nibble <= 4 else {
            throw Self.malformed("\(what) holds an integer of marker 0x\(Self.hex(self.bytes[start]))")
        }
        let size = 1 << nibble
        guard size <= self.objectsEnd - start - 1 else {
            throw Self.malformed("\(what) holds an integer of \(size) bytes, which run past the objects")
        }
        switch size {
        case 1, 2, 4:
            return Int(Self.unsigned(self.bytes, at: start + 1, size: size))
        case 8:
            return Int(Int64(bitPattern: Self.unsigned(self.bytes, at: start + 1, size: 8)))
        default:
            let high = Self.unsigned(self.bytes, at: start + 1, size: 8)
            let low = Int64(bitPattern: Self.unsigned(self.bytes, at: start + 9, size: 8))
            guard high == (low < 0 ? UInt64.max : 0) else {
                throw Self.malformed("\(what) holds an integer that does not fit in 64 bits")
            }
            return Int(low)
        }
    }

    /// An ASCII (`0x5n`, n characters) or UTF-16BE (`0x6n`, n code units) string object.
    private mutating func string(at start: Int, of what: Subject) throws -> String {
        let (count, payload) = try self.length(at: start, of: what)
        let available = UInt64(self.objectsEnd - payload)
        if self.bytes[start] >> 4 == Marker.asciiString {
            guard count <= available else {
                throw Self.malformed("\(what) holds an ASCII string of \(count) bytes, which run past the objects")
            }
            try self.spend(Int(count), on: what)
            let characters = UnsafeBufferPointer(rebasing: self.bytes[payload..<(payload + Int(count))])
            guard characters.allSatisfy({ $0 < 0x80 }) else {
                throw Self.malformed("\(what) holds an ASCII string with a byte above 0x7F")
            }
            return String(decoding: characters, as: UTF8.self)
        }
        guard count <= available / 2 else {
            throw Self.malformed("\(what) holds a UTF-16 string of \(count) code units, which run past the objects")
        }
        try self.spend(2 * Int(count), on: what)
        let bytes = self.bytes
        let units = (0..<Int(count)).lazy.map { index in
            UInt16(bytes[payload + 2 * index]) << 8 | UInt16(bytes[payload + 2 * index + 1])
        }
        guard let string = String(validating: units, as: UTF16.self) else {
            throw Self.malformed("\(what) holds a UTF-16 string that is not valid UTF-16")
        }
        return string
    }

    /// A scalar's whole encoded object: its marker and `size` bytes.
    private func object(at start: Int, size: Int, of what: Subject) throws -> [UInt8] {
        guard size <= self.objectsEnd - start - 1 else {
            throw Self.malformed("\(what) holds \(Self.typeName(self.bytes[start])) that runs past the objects")
        }
        return Array(UnsafeBufferPointer(rebasing: self.bytes[start..<(start + 1 + size)]))
    }

    /// The length in the low nibble of the marker at `start`, or in the integer object after
    /// it (nibble `0xF`), and where the object's contents begin. The caller checks the length
    /// against the bytes left.
    private func length(at start: Int, of what: Subject) throws -> (length: UInt64, contents: Int) {
        let nibble = self.bytes[start] & 0x0F
        guard nibble == Marker.lengthFollows else { return (UInt64(nibble), start + 1) }
        let integer = start + 1
        guard integer < self.objectsEnd, self.bytes[integer] >> 4 == Marker.integer,
            self.bytes[integer] & 0x0F <= 3
        else {
            throw Self.malformed("the length of \(what) is not an integer of 1 to 8 bytes")
        }
        let size = 1 << Int(self.bytes[integer] & 0x0F)
        guard size <= self.objectsEnd - integer - 1 else {
            throw Self.malformed("the length of \(what) runs past the objects")
        }
        return (Self.unsigned(self.bytes, at: integer + 1, size: size), integer + 1 + size)
    }

    /// Takes `count` bytes from the budget before they are copied.
    private mutating func spend(_ count: Int, on what: Subject) throws {
        guard count <= self.budget else {
            throw Self.malformed(
                "\(what) would take the strings and data decoded past twice the objects' \(self.objectsEnd) bytes "
                    + "(objects overlap)"
            )
        }
        self.budget -= count
    }

    /// Where `object` begins, from the offset table.
    private func offset(of object: Int) throws -> Int {
        let offset = Self.unsigned(self.bytes, at: self.objectsEnd + object * self.offsetSize, size: self.offsetSize)
        guard offset >= UInt64(BinaryPropertyList.magic.count), offset < UInt64(self.objectsEnd) else {
            throw Self.malformed("object \(object) is at \(offset), outside the objects")
        }
        return Int(offset)
    }

    /// The object reference at `position` (inside the objects), checked against the count.
    private func reference(at position: Int) throws -> Int {
        let object = self.rawReference(at: position)
        guard object < UInt64(self.objectCount) else {
            throw Self.malformed("it references object \(object) of \(self.objectCount)")
        }
        return Int(object)
    }

    private func rawReference(at position: Int) -> UInt64 {
        Self.unsigned(self.bytes, at: position, size: self.referenceSize)
    }

    /// The big-endian unsigned integer of `size` (1 to 8) bytes at `start`.
    private static func unsigned(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int, size: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in start..<(start + size) {
            value = value << 8 | UInt64(bytes[index])
        }
        return value
    }

    /// The name of the type a marker byte begins, for error messages.
    private static func typeName(_ marker: UInt8) -> String {
        switch marker >> 4 {
        case Marker.simple:
            switch marker {
            case 0x00: "null"
            case Marker.falseByte, Marker.trueByte: "a boolean"
            case 0x0F: "a fill byte"
            default: "an unknown object (marker 0x\(Self.hex(marker)))"
            }
        case Marker.integer: "an integer"
        case Marker.real: "a real"
        case Marker.date: "a date"
        case Marker.data: "data"
        case Marker.asciiString, Marker.utf16String: "a string"
        case Marker.uid: "a UID"
        case Marker.array: "an array"
        case Marker.orderedSet: "an ordered set"
        case Marker.set: "a set"
        case Marker.dictionary: "a dictionary"
        default: "an unknown object (marker 0x\(Self.hex(marker)))"
        }
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16, uppercase: true)
        return byte < 0x10 ? "0" + digits : digits
    }

    /// What an error message is about; its text is built only when an error is thrown.
    private enum Subject: CustomStringConvertible {
        case dictionary
        case key(Int)
        case value(String)

        var description: String {
            switch self {
            case .dictionary: "the dictionary"
            case .key(let index): "key \(index)"
            case .value(let key): "the key '\(key.prefix(64))'"
            }
        }
    }

    private static func malformed(_ reason: String) -> LabError {
        LabError(.malformedMessage, "The body is not a valid binary property list: \(reason)")
    }
}
