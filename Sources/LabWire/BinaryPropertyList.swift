import LabCore

/// A native codec for the bodies of cx/1 and msg/1 (docs/protocol.md §1): Apple's binary property
/// list format `bplist00`, restricted to one flat dictionary of string keys.
///
/// The layout, as CoreFoundation's `CFBinaryPList.c` writes it: the 8-byte header, the objects,
/// an offset table (one big-endian offset per object), then a 32-byte trailer giving the
/// offset size, the object-reference size, the object count, the top object and the offset
/// table's position. An object begins with a marker byte: the high nibble is its type, the low
/// nibble its size or length (`0xF`: the length follows as an integer object).
///
/// Decoding reads straight from the body's bytes, checks every offset, length and reference
/// against the body, never follows a container and decodes each distinct object once, so it
/// takes time linear in the body's size. Encoding writes into one buffer of the exact size.
enum BinaryPropertyList {
    /// The most keys a body's dictionary may have.
    static let maxKeys = 64

    /// The 8 bytes a binary property list begins with.
    static let magic: [UInt8] = Array("bplist00".utf8)

    /// The size of the trailer that ends the body.
    static let trailerSize = 32

    /// One key and its value. A body's dictionary is a few keys (seven for a cx/1 response):
    /// kept in an array and searched in order, they cost no hashing. Decoding a cx/1 response
    /// took 2.3 µs instead of 2.9 µs with a hashed `Dictionary` (Benchmarks/, release, p50).
    struct Entry: Sendable, Equatable {
        var key: String
        var value: Value
    }

    /// A dictionary value.
    enum Value: Sendable, Equatable {
        /// A string (written as ASCII or UTF-16BE).
        case string(String)
        /// Bytes.
        case data([UInt8])
        /// An integer (a plist boolean is not one).
        case integer(Int)
        /// A boolean.
        case bool(Bool)
        /// A scalar the codec carries but the typed accessors refuse (a real, a date, a UID),
        /// kept as its encoded object so that re-encoding a decoded dictionary keeps it.
        case other(typeName: String, object: [UInt8])

        /// The type's name in an error message, e.g. "a string".
        var typeName: String {
            switch self {
            case .string: "a string"
            case .data: "data"
            case .integer: "an integer"
            case .bool: "a boolean"
            case .other(let typeName, _): typeName
            }
        }
    }

    /// Object type markers (the high nibble of the marker byte).
    enum Marker {
        static let simple: UInt8 = 0x0
        static let integer: UInt8 = 0x1
        static let real: UInt8 = 0x2
        static let date: UInt8 = 0x3
        static let data: UInt8 = 0x4
        static let asciiString: UInt8 = 0x5
        static let utf16String: UInt8 = 0x6
        static let uid: UInt8 = 0x8
        static let array: UInt8 = 0xA
        static let orderedSet: UInt8 = 0xB
        static let set: UInt8 = 0xC
        static let dictionary: UInt8 = 0xD

        /// The low nibble that says the length follows as an integer object.
        static let lengthFollows: UInt8 = 0xF
        static let falseByte: UInt8 = 0x08
        static let trueByte: UInt8 = 0x09
    }

    /// The fewest bytes (1, 2, 4 or 8) that hold `value`, as CoreFoundation and plistlib size
    /// object references and offsets.
    static func byteCount(_ value: UInt64) -> Int {
        if value < 1 << 8 { return 1 }
        if value < 1 << 16 { return 2 }
        if value < 1 << 32 { return 4 }
        return 8
    }
}
