/// Any JSON value, kept as decoded: flow options travel in this form until their flow decodes them.
public enum JSONValue: Sendable, Hashable, Codable, CustomStringConvertible {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Decodes whatever JSON value is there.
    public init(from decoder: any Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {
            var values: [JSONValue] = []
            while !array.isAtEnd { values.append(try array.decode(JSONValue.self)) }
            self = .array(values)
        } else if let object = try? decoder.container(keyedBy: AnyCodingKey.self) {
            var values: [String: JSONValue] = [:]
            for key in object.allKeys { values[key.stringValue] = try object.decode(JSONValue.self, forKey: key) }
            self = .object(values)
        } else {
            let single = try decoder.singleValueContainer()
            if single.decodeNil() {
                self = .null
            } else if let bool = try? single.decode(Bool.self) {
                self = .bool(bool)
            } else if let number = try? single.decode(Double.self) {
                self = .number(number)
            } else {
                self = .string(try single.decode(String.self))
            }
        }
    }

    /// Encodes the value back to JSON.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .bool(let value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case .number(let value):
            var single = encoder.singleValueContainer()
            if value == value.rounded(), abs(value) < 9e15 {
                try single.encode(Int64(value))
            } else {
                try single.encode(value)
            }
        case .string(let value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case .array(let values):
            var array = encoder.unkeyedContainer()
            for value in values { try array.encode(value) }
        case .object(let values):
            var object = encoder.container(keyedBy: AnyCodingKey.self)
            for (key, value) in values { try object.encode(value, forKey: AnyCodingKey(key)) }
        }
    }

    /// A short description for messages: `"fast"`, `16`, `true`, `null`, `an array`, `an object`.
    public var description: String {
        switch self {
        case .null: return "null"
        case .bool(let value): return "\(value)"
        case .number(let value):
            return value == value.rounded() && abs(value) < 1e15 ? "\(Int64(value))" : "\(value)"
        case .string(let value): return "\"\(value)\""
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}
