import Foundation

/// Options for a flow that takes none: any key is a problem.
public struct EmptyOptions: Decodable, Sendable {
    /// No options.
    public init() {}

    /// Decodes strictly: an empty object.
    public init(from decoder: any Decoder) throws {
        _ = ScenarioObject(decoder, keys: [])
    }
}

extension Flow {
    /// Decodes this flow's options from an entry's raw `options`, reporting problems under
    /// `path`; `extensions` are the catalog's (`ScenarioObject.extensions`).
    public static func decodeOptions(
        _ value: JSONValue,
        at path: String,
        extensions: PluginExtensions = PluginExtensions()
    ) -> (options: Options?, problems: [ScenarioProblem]) {
        OptionsDecoding.decode(Options.self, from: value, at: path, extensions: extensions, what: "options for flow '\(Self.name)'")
    }
}

/// Decoding a value of the scenario's option types from JSON, strictly: the problems the
/// types record (`ScenarioObject`), each under `path`.
public enum OptionsDecoding {
    /// `T` from `value`, or nil with the problems; `what` words a value that is not one at all.
    public static func decode<T: Decodable>(
        _ type: T.Type,
        from value: JSONValue,
        at path: String,
        extensions: PluginExtensions = PluginExtensions(),
        what: String
    ) -> (options: T?, problems: [ScenarioProblem]) {
        let log = ProblemLog()
        let decoder = JSONDecoder()
        decoder.userInfo[ProblemLog.userInfoKey] = log
        decoder.userInfo[PluginExtensions.userInfoKey] = extensions
        do {
            let data = try JSONEncoder().encode(value)
            let options = try decoder.decode(T.self, from: data)
            return (options, Self.rebase(log.problems, at: path))
        } catch {
            let problems =
                log.problems.isEmpty ? [ScenarioProblem(path: "$", message: "expected \(what)")] : log.problems
            return (nil, Self.rebase(problems, at: path))
        }
    }

    private static func rebase(_ problems: [ScenarioProblem], at path: String) -> [ScenarioProblem] {
        problems.map { ScenarioProblem(path: path + $0.path.dropFirst(), message: $0.message) }
    }
}
