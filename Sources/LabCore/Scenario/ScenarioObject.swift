/// A JSON object being decoded strictly: unknown keys, missing keys and bad values are
/// recorded in the decoder's `ProblemLog` and decoding goes on, so every problem is found.
///
/// Model types use it in `init(from:)`; they never throw for a bad value, they record it
/// and keep their default.
public struct ScenarioObject {
    private let container: KeyedDecodingContainer<AnyCodingKey>?
    /// Where this object is.
    public let codingPath: [any CodingKey]
    /// Where problems go.
    public let log: ProblemLog
    /// The catalog's extensions (msg/1's kinds, …), for values whose choices plugins add.
    public let extensions: PluginExtensions

    /// Opens the object at `decoder`, recording unknown keys (anything not in `keys`).
    public init(_ decoder: any Decoder, keys: [String], expected: String = "an object") {
        self.codingPath = decoder.codingPath
        self.log = decoder.userInfo[ProblemLog.userInfoKey] as? ProblemLog ?? ProblemLog()
        self.extensions = decoder.userInfo[PluginExtensions.userInfoKey] as? PluginExtensions ?? PluginExtensions()
        do {
            let container = try decoder.container(keyedBy: AnyCodingKey.self)
            for key in container.allKeys where !keys.contains(key.stringValue) {
                let known = keys.map { "'\($0)'" }.joined(separator: ", ")
                self.log.add(
                    decoder.codingPath + [key],
                    "unknown key\(suggestion(for: key.stringValue, in: keys)); keys here: \(known)"
                )
            }
            self.container = container
        } catch {
            let found = (try? JSONValue(from: decoder)).map { ", found \($0)" } ?? ""
            self.log.add(decoder.codingPath, "expected \(expected)\(found)")
            self.container = nil
        }
    }

    /// Whether the object has `key`.
    public func contains(_ key: String) -> Bool {
        self.container?.contains(AnyCodingKey(key)) ?? false
    }

    /// The path of `key` in this object, for messages.
    public func path(_ key: String) -> String {
        JSONPath.string(self.codingPath + [AnyCodingKey(key)])
    }

    /// Records a problem at `key`.
    public func problem(_ key: String, _ message: String) {
        self.log.add(self.codingPath + [AnyCodingKey(key)], message)
    }

    /// The value at `key`, or nil if absent or bad (a bad one is recorded).
    ///
    /// `expected` names what belongs there; `isValid` adds range checks.
    public func optional<T: Decodable>(
        _ key: String,
        as type: T.Type = T.self,
        expected: String,
        isValid: (T) -> Bool = { _ in true }
    ) -> T? {
        guard let container = self.container, container.contains(AnyCodingKey(key)) else { return nil }
        let codingKey = AnyCodingKey(key)
        do {
            let value = try container.decode(T.self, forKey: codingKey)
            guard isValid(value) else {
                self.problem(key, "expected \(expected)\(self.found(key))")
                return nil
            }
            return value
        } catch DecodingError.dataCorrupted(let context)
            where context.debugDescription.hasPrefix(Self.ownMessagePrefix)
            && context.codingPath.count > self.codingPath.count
        {
            // A value type's own message (e.g. a duration that does not parse).
            self.log.add(context.codingPath, context.debugDescription)
        } catch {
            self.problem(key, "expected \(expected)\(self.found(key))")
        }
        return nil
    }

    /// The value at `key`, recording a problem if it is missing.
    public func required<T: Decodable>(
        _ key: String,
        as type: T.Type = T.self,
        expected: String,
        isValid: (T) -> Bool = { _ in true }
    ) -> T? {
        if self.container != nil, !self.contains(key) {
            self.problem(key, "missing; expected \(expected)")
            return nil
        }
        return self.optional(key, as: type, expected: expected, isValid: isValid)
    }

    /// The value at `key` as raw JSON, if present.
    public func raw(_ key: String) -> JSONValue? {
        guard let container = self.container else { return nil }
        return try? container.decode(JSONValue.self, forKey: AnyCodingKey(key))
    }

    /// `ScenarioString` messages start so; Foundation's own (e.g. for a bad enum value) do not.
    static let ownMessagePrefix = "expected "

    private func found(_ key: String) -> String {
        self.raw(key).map { ", found \($0)" } ?? ""
    }
}

/// A scalar that decodes from a string and says what it expected when it does not parse.
public protocol ScenarioString: Decodable {
    /// Parses `text`, or returns nil.
    init?(parsing text: String)
    /// What a valid value looks like, for messages.
    static var expectation: String { get }
}

extension ScenarioString {
    /// Decodes a string and parses it; a bad one is a `dataCorrupted` error carrying the expectation.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let found = (try? JSONValue(from: decoder)).map { ", found \($0)" } ?? ""
        guard let text = try? container.decode(String.self), let value = Self(parsing: text) else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: decoder.codingPath,
                    debugDescription: "expected \(Self.expectation)\(found)"
                )
            )
        }
        self = value
    }
}
