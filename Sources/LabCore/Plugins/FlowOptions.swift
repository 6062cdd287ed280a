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
    /// Decodes this flow's options from an entry's raw `options`, reporting problems under `path`.
    public static func decodeOptions(
        _ value: JSONValue,
        at path: String
    ) -> (options: Options?, problems: [ScenarioProblem]) {
        let log = ProblemLog()
        let decoder = JSONDecoder()
        decoder.userInfo[ProblemLog.userInfoKey] = log
        do {
            let data = try JSONEncoder().encode(value)
            let options = try decoder.decode(Options.self, from: data)
            return (options, Self.rebase(log.problems, at: path))
        } catch {
            let problems =
                log.problems.isEmpty
                ? [ScenarioProblem(path: "$", message: "expected options for flow '\(Self.name)'")] : log.problems
            return (nil, Self.rebase(problems, at: path))
        }
    }

    private static func rebase(_ problems: [ScenarioProblem], at path: String) -> [ScenarioProblem] {
        problems.map { ScenarioProblem(path: path + $0.path.dropFirst(), message: $0.message) }
    }
}
