import LabCore

extension BinaryPropertyList {
    /// Encodes `values` as a bplist00 of one dictionary, keys sorted so that the bytes are
    /// reproducible, objects written as CoreFoundation writes them (equal strings are not
    /// shared). Throws `.malformedMessage` for more than `maxKeys` keys, which no reader of
    /// this codec would accept.
    static func encode(_ values: [Entry]) throws -> [UInt8] {
        guard values.count <= Self.maxKeys else {
            throw LabError(
                .malformedMessage,
                "Could not encode a property list of \(values.count) keys; at most \(Self.maxKeys) are accepted"
            )
        }
        let entries = values.sorted { $0.key < $1.key }
        let count = entries.count
        // Object 0 is the dictionary, objects 1...count its keys, then its values in the same order.
        let objectCount = 1 + 2 * count
        let referenceSize = Self.byteCount(UInt64(objectCount))
        var tableOffset = Self.magic.count + Self.headerSize(length: count) + 2 * count * referenceSize
        for entry in entries {
            tableOffset += Self.stringSize(entry.key) + Self.size(of: entry.value)
        }
        let offsetSize = Self.byteCount(UInt64(tableOffset))
        let total = tableOffset + objectCount * offsetSize + Self.trailerSize
        return [UInt8](unsafeUninitializedCapacity: total) { buffer, initialized in
            var writer = Writer(buffer, tableOffset: tableOffset, offsetSize: offsetSize)
            writer.append(Self.magic)
            writer.beginObject()
            writer.appendHeader(Marker.dictionary, length: count)
            for object in 1..<objectCount {
                writer.appendUnsigned(UInt64(object), size: referenceSize)
            }
            for entry in entries {
                writer.beginObject()
                writer.appendString(entry.key)
            }
            for entry in entries {
                writer.beginObject()
                writer.appendValue(entry.value)
            }
            precondition(writer.position == tableOffset, "the objects' sizes were miscounted")
            // The offset table was filled in as each object began; the trailer follows it.
            writer.position = tableOffset + objectCount * offsetSize
            writer.appendUnsigned(0, size: 6)  // five unused bytes and the sort version
            writer.appendByte(UInt8(offsetSize))
            writer.appendByte(UInt8(referenceSize))
            writer.appendUnsigned(UInt64(objectCount), size: 8)
            writer.appendUnsigned(0, size: 8)
            writer.appendUnsigned(UInt64(tableOffset), size: 8)
            precondition(writer.position == total, "the body's size was miscounted")
            initialized = total
        }
    }

    /// The encoded size of a value object.
    private static func size(of value: Value) -> Int {
        switch value {
        case .string(let string): Self.stringSize(string)
        case .data(let bytes): Self.headerSize(length: bytes.count) + bytes.count
        case .integer(let integer): 1 + Self.integerWidth(integer)
        case .bool: 1
        case .other(_, let object): object.count
        }
    }

    /// The encoded size of a string object: ASCII bytes, or else UTF-16 code units of 2 bytes.
    private static func stringSize(_ string: String) -> Int {
        if Self.isASCII(string) {
            return Self.headerSize(length: string.utf8.count) + string.utf8.count
        }
        let units = string.utf16.count
        return Self.headerSize(length: units) + 2 * units
    }

    /// The size of a marker with `length`: the marker byte, then an integer object if 15 or more.
    private static func headerSize(length: Int) -> Int {
        length < Int(Marker.lengthFollows) ? 1 : 2 + Self.byteCount(UInt64(length))
    }

    /// How many bytes an integer object holds: the fewest of 1, 2, 4, 8 for a non-negative
    /// value, always 8 for a negative one (CoreFoundation's rule: 1, 2 and 4 bytes are unsigned).
    fileprivate static func integerWidth(_ value: Int) -> Int {
        value < 0 ? 8 : Self.byteCount(UInt64(value))
    }

    fileprivate static func isASCII(_ string: String) -> Bool {
        string.utf8.allSatisfy { $0 < 0x80 }
    }
}

/// Writes a body into a buffer of the exact size; the encoder has counted every byte.
private struct Writer {
    typealias Marker = BinaryPropertyList.Marker

    private let buffer: UnsafeMutableBufferPointer<UInt8>
    private let tableOffset: Int
    private let offsetSize: Int
    private var objects = 0
    /// Where the next byte goes.
    var position = 0

    init(_ buffer: UnsafeMutableBufferPointer<UInt8>, tableOffset: Int, offsetSize: Int) {
        self.buffer = buffer
        self.tableOffset = tableOffset
        self.offsetSize = offsetSize
    }

    /// Records the next object's offset in the offset table.
    mutating func beginObject() {
        let entry = self.tableOffset + self.objects * self.offsetSize
        var value = UInt64(self.position)
        for index in (0..<self.offsetSize).reversed() {
            self.buffer[entry + index] = UInt8(truncatingIfNeeded: value)
            value >>= 8
        }
        self.objects += 1
    }

    mutating func append(_ bytes: [UInt8]) {
        for byte in bytes {
            self.appendByte(byte)
        }
    }

    mutating func appendByte(_ byte: UInt8) {
        self.buffer[self.position] = byte
        self.position += 1
    }

    /// `value` big-endian in `size` bytes.
    mutating func appendUnsigned(_ value: UInt64, size: Int) {
        var value = value
        for index in (0..<size).reversed() {
            self.buffer[self.position + index] = UInt8(truncatingIfNeeded: value)
            value >>= 8
        }
        self.position += size
    }

    /// A marker with `length` in its low nibble, or `0xF` and an integer object after it.
    mutating func appendHeader(_ type: UInt8, length: Int) {
        if length < Int(Marker.lengthFollows) {
            self.appendByte(type << 4 | UInt8(length))
        } else {
            self.appendByte(type << 4 | Marker.lengthFollows)
            self.appendInteger(length)
        }
    }

    /// An integer object (`0x1n`, 2^n bytes).
    mutating func appendInteger(_ value: Int) {
        let width = BinaryPropertyList.integerWidth(value)
        self.appendByte(Marker.integer << 4 | UInt8(width.trailingZeroBitCount))
        self.appendUnsigned(UInt64(bitPattern: Int64(value)), size: width)
    }

    /// A string object: `0x5n` and ASCII bytes, or `0x6n` and UTF-16BE code units.
    mutating func appendString(_ string: String) {
        if BinaryPropertyList.isASCII(string) {
            self.appendHeader(Marker.asciiString, length: string.utf8.count)
            for byte in string.utf8 {
                self.appendByte(byte)
            }
        } else {
            self.appendHeader(Marker.utf16String, length: string.utf16.count)
            for unit in string.utf16 {
                self.appendByte(UInt8(truncatingIfNeeded: unit >> 8))
                self.appendByte(UInt8(truncatingIfNeeded: unit))
            }
        }
    }

    mutating func appendValue(_ value: BinaryPropertyList.Value) {
        switch value {
        case .string(let string):
            self.appendString(string)
        case .data(let bytes):
            self.appendHeader(Marker.data, length: bytes.count)
            self.appendBytes(bytes)
        case .integer(let integer):
            self.appendInteger(integer)
        case .bool(let bool):
            self.appendByte(bool ? Marker.trueByte : Marker.falseByte)
        case .other(_, let object):
            self.appendBytes(object)
        }
    }

    /// `bytes` copied in one go.
    private mutating func appendBytes(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { source in
            guard let base = source.baseAddress, let target = self.buffer.baseAddress else { return }
            (target + self.position).initialize(from: base, count: source.count)
        }
        self.position += bytes.count
    }
}
