public import Foundation
import LabCore

/// `lab run --set PATH=VALUE`: one change to the scenario's JSON, made before it is read, so
/// that a variant of a run needs no file of its own and a problem it causes is still named
/// by its JSON path.
///
/// PATH is a JSON path into the document: keys separated by dots, array elements by index,
/// keys with dots in brackets (`load.iterations`, `flows[0].suite`,
/// `thresholds["cx.exchange.p99"]`, an optional leading `$.`). VALUE is JSON if it parses as
/// JSON (`100`, `true`, `{"rsaBits": 2048}`, `"text"`), otherwise the text itself; `null`
/// removes the key or the array element. Missing objects on the way are made; an array index must exist, or be
/// the array's length to append.
public struct ScenarioOverride: Sendable, Equatable {
    /// One step of a path.
    public enum Component: Sendable, Equatable, CustomStringConvertible {
        case key(String)
        case index(Int)

        public var description: String {
            switch self {
            case .key(let key):
                key.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" } ? ".\(key)" : "[\"\(key)\"]"
            case .index(let index): "[\(index)]"
            }
        }
    }

    /// Where, from the document's root.
    public var path: [Component]
    /// The value as given.
    public var value: String

    /// The path as a scenario problem names it: `$.flows[0].suite`.
    public var pathDescription: String { "$" + self.path.map(\.description).joined() }

    /// Parses `PATH=VALUE`; nil if it does not parse (`parse` says why).
    public init?(argument: String) {
        guard let parsed = try? Self.parse(argument) else { return nil }
        self = parsed
    }

    private init(path: [Component], value: String) {
        self.path = path
        self.value = value
    }

    /// Parses `PATH=VALUE`, or throws a `LabError` (`invalidScenario`) saying what is wrong:
    /// no `=`, no path before it, or a path that does not parse.
    public static func parse(_ argument: String) throws -> ScenarioOverride {
        guard let equals = argument.firstIndex(of: "=") else {
            throw LabError(
                .invalidScenario,
                "expected PATH=VALUE (a JSON path, '=', a JSON value, e.g. load.iterations=100), but there is no '='"
            )
        }
        let pathText = argument[..<equals]
        guard !pathText.isEmpty else {
            throw LabError(.invalidScenario, "expected PATH=VALUE, but there is no path before '='")
        }
        guard let path = Self.parsePath(pathText), !path.isEmpty else {
            throw LabError(
                .invalidScenario,
                "the path '\(pathText)' does not parse: keys joined by '.', indexes as [0], keys with dots as [\"a.b\"]"
            )
        }
        let value = String(argument[argument.index(after: equals)...])
        // A value that starts as JSON's containers or strings do is meant as JSON: held to it.
        if let first = value.first(where: { !$0.isWhitespace }), "{[\"".contains(first),
            let syntax = StrictJSON.check(value)
        {
            throw LabError(.invalidScenario, "--set \(pathText): the value is not valid JSON: \(syntax)")
        }
        return ScenarioOverride(path: path, value: value)
    }

    /// `PATH=VALUE` as given on the command line.
    public var argument: String {
        let path = self.pathDescription.dropFirst()
        return (path.hasPrefix(".") ? path.dropFirst() : path) + "=" + self.value
    }

    /// Whether `problemPath` (a scenario problem's JSON path) lies at or under this override's
    /// path: a problem the override made, not the file.
    public func covers(_ problemPath: String) -> Bool {
        let mine = self.pathDescription
        guard problemPath.hasPrefix(mine) else { return false }
        let rest = problemPath.dropFirst(mine.count)
        return rest.isEmpty || rest.hasPrefix(".") || rest.hasPrefix("[")
    }

    /// `load.iterations`, `flows[0].suite`, `thresholds["cx.exchange.p99"]`.
    static func parsePath(_ text: Substring) -> [Component]? {
        var rest = text.hasPrefix("$.") ? text.dropFirst(2) : text
        var path: [Component] = []
        while !rest.isEmpty {
            if rest.hasPrefix("[\"") {
                guard let close = rest.range(of: "\"]") else { return nil }
                let key = rest[rest.index(rest.startIndex, offsetBy: 2)..<close.lowerBound]
                guard !key.isEmpty else { return nil }
                path.append(.key(String(key)))
                rest = rest[close.upperBound...]
            } else if rest.hasPrefix("[") {
                guard let close = rest.firstIndex(of: "]"),
                    let index = Int(rest[rest.index(after: rest.startIndex)..<close]),
                    index >= 0
                else { return nil }
                path.append(.index(index))
                rest = rest[rest.index(after: close)...]
            } else {
                let key = rest.prefix { $0 != "." && $0 != "[" }
                guard !key.isEmpty else { return nil }
                path.append(.key(String(key)))
                rest = rest.dropFirst(key.count)
            }
            if rest.hasPrefix(".") {
                rest = rest.dropFirst()
                guard !rest.isEmpty, !rest.hasPrefix("[") else { return nil }
            } else if !rest.isEmpty, !rest.hasPrefix("[") {
                return nil
            }
        }
        return path
    }

    /// The value as JSON, or as a string when it is not (strict) JSON; nil for `null`.
    var json: Any? {
        guard StrictJSON.check(self.value) == nil,
            let parsed = try? JSONSerialization.jsonObject(with: Data(self.value.utf8), options: [.fragmentsAllowed])
        else { return self.value }
        return parsed is NSNull ? nil : parsed
    }

    /// `data` (a scenario's JSON text) with `overrides` made in order; throws naming the
    /// override that does not fit the document. Text that is not strict JSON is returned as it
    /// is, for `Scenario.decode` to name where it breaks.
    public static func apply(_ overrides: [ScenarioOverride], to data: Data) throws -> Data {
        guard !overrides.isEmpty, StrictJSON.check(data) == nil,
            var root = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        else { return data }
        for override in overrides {
            root = try override.set(in: root, at: override.path[...])
        }
        do {
            return try JSONSerialization.data(withJSONObject: root, options: [.prettyPrinted, .sortedKeys])
        } catch {
            throw LabError(.invalidScenario, "--set made a document that is not JSON: \(error)")
        }
    }

    /// `node` with the value set at `path`.
    private func set(in node: Any, at path: ArraySlice<Component>) throws -> Any {
        guard let first = path.first else { return self.json ?? NSNull() }
        let here = "$" + self.path[..<path.startIndex].map(\.description).joined()
        switch first {
        case .key(let key):
            guard var object = node as? [String: Any] else {
                throw LabError(.invalidScenario, "--set \(self.pathDescription): \(here) is not an object")
            }
            if path.count == 1 && self.json == nil {
                object[key] = nil
            } else {
                object[key] = try self.set(in: object[key] ?? [String: Any](), at: path.dropFirst())
            }
            return object
        case .index(let index):
            guard var array = node as? [Any] else {
                throw LabError(.invalidScenario, "--set \(self.pathDescription): \(here) is not an array")
            }
            guard index <= array.count else {
                throw self.pastTheEnd(of: array, at: here, named: self.path[..<path.startIndex].last, index: index)
            }
            if path.count == 1 && self.json == nil {
                if index < array.count { array.remove(at: index) }
                return array
            }
            let value = try self.set(in: index < array.count ? array[index] : [String: Any](), at: path.dropFirst())
            if index < array.count { array[index] = value } else { array.append(value) }
            return array
        }
    }

    /// `$.flows[3]: no such flow; $.flows has 1 element (index 0), and [1] appends one`.
    private func pastTheEnd(of array: [Any], at here: String, named name: Component?, index: Int) -> LabError {
        var noun = "element"
        if case .key(let key) = name, key.count > 1, key.hasSuffix("s") { noun = String(key.dropLast()) }
        let elements =
            switch array.count {
            case 0: "no elements"
            case 1: "1 element (index 0)"
            default: "\(array.count) elements (indexes 0…\(array.count - 1))"
            }
        return LabError(
            .invalidScenario,
            "--set \(self.pathDescription): \(here)[\(index)]: no such \(noun); \(here) has \(elements), "
                + "and [\(array.count)] appends one"
        )
    }
}
