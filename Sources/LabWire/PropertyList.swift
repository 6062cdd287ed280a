import LabCore

/// Binary property-list bodies (`bplist00`) with a top-level dictionary of string keys.
///
/// Built on the native codec `BinaryPropertyList`; the typed accessors turn every shape
/// problem into a `LabError` naming the key and the type that was expected.
public struct PropertyListDictionary: Sendable {
    /// The 8 bytes every binary property list begins with.
    public static let magic: [UInt8] = BinaryPropertyList.magic

    /// The dictionary's keys and values, each key once, in the order set or decoded.
    private var entries: [BinaryPropertyList.Entry]

    /// An empty dictionary to fill and encode.
    public init() {
        // Room for a cx/1 response's seven keys without growing.
        self.entries = []
        self.entries.reserveCapacity(8)
    }

    /// Decodes a body; throws `.malformedMessage` unless it is a binary plist dictionary.
    public init(decoding body: [UInt8]) throws {
        guard body.starts(with: Self.magic) else {
            throw LabError(
                .malformedMessage,
                "The body is not a binary property list (it does not begin with 'bplist00')"
            )
        }
        self.entries = try BinaryPropertyList.decode(body)
    }

    /// The keys of `body`'s top-level dictionary, without decoding its values (which may be
    /// ones `init(decoding:)` refuses, such as a container); nil unless `body` is a binary
    /// property list whose top level is a dictionary of string keys.
    public static func topLevelKeys(of body: [UInt8]) -> [String]? {
        guard body.starts(with: Self.magic) else { return nil }
        return try? BinaryPropertyList.keys(body)
    }

    /// Encodes as a binary property list, keys in sorted order.
    public func encoded() throws -> [UInt8] {
        try BinaryPropertyList.encode(self.entries)
    }

    /// Whether `key` is present.
    public func contains(_ key: String) -> Bool { self.value(key) != nil }

    /// Sets a string value.
    public mutating func set(_ key: String, string: String) { self.set(key, .string(string)) }
    /// Sets a data value.
    public mutating func set(_ key: String, data: [UInt8]) { self.set(key, .data(data)) }
    /// Sets an integer value (never a boolean).
    public mutating func set(_ key: String, integer: Int) { self.set(key, .integer(integer)) }
    /// Sets a boolean value.
    public mutating func set(_ key: String, bool: Bool) { self.set(key, .bool(bool)) }

    private mutating func set(_ key: String, _ value: BinaryPropertyList.Value) {
        if let index = self.entries.firstIndex(where: { $0.key == key }) {
            self.entries[index].value = value
        } else {
            self.entries.append(BinaryPropertyList.Entry(key: key, value: value))
        }
    }

    private func value(_ key: String) -> BinaryPropertyList.Value? {
        self.entries.first(where: { $0.key == key })?.value
    }

    /// A required string.
    public func string(_ key: String) throws -> String {
        guard let value = try self.optionalString(key) else { throw Self.missing(key, "a string") }
        return value
    }

    /// An optional string.
    public func optionalString(_ key: String) throws -> String? {
        switch self.value(key) {
        case nil: return nil
        case .string(let string): return string
        case let value?: throw Self.wrongType(key, "a string", value)
        }
    }

    /// Required data.
    public func data(_ key: String) throws -> [UInt8] {
        guard let value = try self.optionalData(key) else { throw Self.missing(key, "data") }
        return value
    }

    /// Optional data.
    public func optionalData(_ key: String) throws -> [UInt8]? {
        switch self.value(key) {
        case nil: return nil
        case .data(let bytes): return bytes
        case let value?: throw Self.wrongType(key, "data", value)
        }
    }

    /// A required integer. A boolean or a real is refused: the plist types differ.
    public func integer(_ key: String) throws -> Int {
        guard let value = try self.optionalInteger(key) else { throw Self.missing(key, "an integer") }
        return value
    }

    /// An optional integer, refused as `integer(_:)` refuses.
    public func optionalInteger(_ key: String) throws -> Int? {
        switch self.value(key) {
        case nil: return nil
        case .integer(let integer): return integer
        case let value?: throw Self.wrongType(key, "an integer", value)
        }
    }

    /// An optional boolean.
    public func optionalBool(_ key: String) throws -> Bool? {
        switch self.value(key) {
        case nil: return nil
        case .bool(let bool): return bool
        case let value?: throw Self.wrongType(key, "a boolean", value)
        }
    }

    private static func missing(_ key: String, _ expected: String) -> LabError {
        LabError(.malformedMessage, "The key '\(key)' is missing; expected \(expected)")
    }

    private static func wrongType(_ key: String, _ expected: String, _ value: BinaryPropertyList.Value) -> LabError {
        LabError(.malformedMessage, "The key '\(key)' holds \(value.typeName); expected \(expected)")
    }
}
