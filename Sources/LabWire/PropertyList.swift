import Foundation
import LabCore

/// Binary property-list bodies (`bplist00`) with a top-level dictionary of string keys.
///
/// Built on Foundation's `PropertyListSerialization`; the typed accessors turn every
/// shape problem into a `LabError` naming the key and the type that was expected.
public struct PropertyListDictionary: Sendable {
    /// The 8 bytes every binary property list begins with.
    public static let magic: [UInt8] = Array("bplist00".utf8)

    /// The dictionary's values, as Foundation decoded them.
    nonisolated(unsafe) private var values: [String: Any]

    /// An empty dictionary to fill and encode.
    public init() {
        self.values = [:]
    }

    /// Decodes a body; throws `.malformedMessage` unless it is a binary plist dictionary.
    public init(decoding body: [UInt8]) throws {
        guard body.starts(with: Self.magic) else {
            throw LabError(
                .malformedMessage,
                "The body is not a binary property list (it does not begin with 'bplist00')"
            )
        }
        try BinaryPropertyListShape.requireFlatDictionary(body)
        let object: Any
        do {
            object = try PropertyListSerialization.propertyList(from: Data(body), options: [], format: nil)
        } catch {
            throw LabError(
                .malformedMessage,
                "The body is not a valid binary property list",
                cause: UnderlyingError(describing: error)
            )
        }
        guard let dictionary = object as? [String: Any] else {
            throw LabError(
                .malformedMessage,
                "The property list's top level is \(Self.typeName(object)), not a dictionary"
            )
        }
        self.values = dictionary
    }

    /// Encodes as a binary property list.
    public func encoded() throws -> [UInt8] {
        do {
            return Array(try PropertyListSerialization.data(fromPropertyList: self.values, format: .binary, options: 0))
        } catch {
            throw LabError(
                .malformedMessage,
                "Could not encode a property list",
                cause: UnderlyingError(describing: error)
            )
        }
    }

    /// Whether `key` is present.
    public func contains(_ key: String) -> Bool { self.values[key] != nil }

    /// Sets a string value.
    public mutating func set(_ key: String, string: String) { self.values[key] = string }
    /// Sets a data value.
    public mutating func set(_ key: String, data: [UInt8]) { self.values[key] = Data(data) }
    /// Sets an integer value (never a boolean).
    public mutating func set(_ key: String, integer: Int) { self.values[key] = NSNumber(value: integer) }
    /// Sets a boolean value.
    public mutating func set(_ key: String, bool: Bool) { self.values[key] = bool }

    /// A required string.
    public func string(_ key: String) throws -> String {
        guard let value = try self.optionalString(key) else { throw Self.missing(key, "a string") }
        return value
    }

    /// An optional string.
    public func optionalString(_ key: String) throws -> String? {
        guard let value = self.values[key] else { return nil }
        guard let string = value as? String else { throw Self.wrongType(key, "a string", value) }
        return string
    }

    /// Required data.
    public func data(_ key: String) throws -> [UInt8] {
        guard let value = try self.optionalData(key) else { throw Self.missing(key, "data") }
        return value
    }

    /// Optional data.
    public func optionalData(_ key: String) throws -> [UInt8]? {
        guard let value = self.values[key] else { return nil }
        guard let data = value as? Data else { throw Self.wrongType(key, "data", value) }
        return Array(data)
    }

    /// A required integer. A boolean or a real is refused: the plist types differ.
    public func integer(_ key: String) throws -> Int {
        guard let value = self.values[key] else { throw Self.missing(key, "an integer") }
        // Foundation decodes plist booleans as `Bool` and integers and reals as `NSNumber`
        // (an NSNumber also answers `as? Bool`), so test the dynamic type, then the number's C type.
        guard !(type(of: value) is Bool.Type), let number = value as? NSNumber,
            Self.integerTypes.contains(number.objCType.pointee), let integer = Int(exactly: number)
        else {
            throw Self.wrongType(key, "an integer", value)
        }
        return integer
    }

    /// An optional integer, refused as `integer(_:)` refuses.
    public func optionalInteger(_ key: String) throws -> Int? {
        self.values[key] == nil ? nil : try self.integer(key)
    }

    /// `objCType` codes of the integer types: c C s S i I l L q Q.
    private static let integerTypes: Set<CChar> = Set("cCsSiIlLqQ".utf8.map { CChar(bitPattern: $0) })

    /// An optional boolean.
    public func optionalBool(_ key: String) throws -> Bool? {
        guard let value = self.values[key] else { return nil }
        guard type(of: value) is Bool.Type, let bool = value as? Bool else {
            throw Self.wrongType(key, "a boolean", value)
        }
        return bool
    }

    private static func missing(_ key: String, _ expected: String) -> LabError {
        LabError(.malformedMessage, "The key '\(key)' is missing; expected \(expected)")
    }

    private static func wrongType(_ key: String, _ expected: String, _ value: Any) -> LabError {
        LabError(.malformedMessage, "The key '\(key)' holds \(typeName(value)); expected \(expected)")
    }

    private static func typeName(_ value: Any) -> String {
        switch value {
        case is String: "a string"
        case is Data: "data"
        case _ where type(of: value) is Bool.Type: "a boolean"
        case let number as NSNumber where !integerTypes.contains(number.objCType.pointee): "a real"
        case is NSNumber: "an integer"
        case is [Any]: "an array"
        case is [String: Any]: "a dictionary"
        case is Date: "a date"
        default: "\(type(of: value))"
        }
    }
}
