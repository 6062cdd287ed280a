import Synchronization

/// One thing wrong with a scenario file: where (a JSON path such as `$.flows[1].suite`) and what was expected.
public struct ScenarioProblem: Sendable, Hashable, CustomStringConvertible {
    /// The JSON path of the offending value, e.g. `$.clients.count`.
    public var path: String
    /// What is wrong and what was expected there.
    public var message: String

    /// A problem at `path`.
    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    /// `$.clients.count: expected an integer from 1 to 100000, found "16"`.
    public var description: String { "\(self.path): \(self.message)" }
}

/// Collects every problem found while a scenario decodes, so all of them are reported at once.
///
/// Decoding puts one log in `userInfo`; object types record into it and go on with a
/// default instead of throwing at the first problem.
public final class ProblemLog: Sendable {
    private let entries = Mutex<[ScenarioProblem]>([])

    /// An empty log.
    public init() {}

    /// The problems recorded, in the order they were found.
    public var problems: [ScenarioProblem] { self.entries.withLock { $0 } }

    /// Records a problem at a coding path.
    public func add(_ path: [any CodingKey], _ message: String) {
        self.add(ScenarioProblem(path: JSONPath.string(path), message: message))
    }

    /// Records a problem.
    public func add(_ problem: ScenarioProblem) {
        self.entries.withLock { $0.append(problem) }
    }

    /// The `userInfo` key under which decoders carry the log.
    public static let userInfoKey = CodingUserInfoKey(rawValue: "lab.problemLog")!
}

/// JSON paths in the `$.a.b[2]["c.d"]` form that messages use.
public enum JSONPath {
    /// The path of a coding path.
    public static func string(_ path: [any CodingKey]) -> String {
        var text = "$"
        for key in path {
            text += Self.component(key)
        }
        return text
    }

    /// One step of a path: `.name`, `[3]` or `["a.b"]`.
    public static func component(_ key: any CodingKey) -> String {
        if let index = key.intValue { return "[\(index)]" }
        let name = key.stringValue
        let plain =
            !name.isEmpty && name.first.map { $0.isLetter || $0 == "_" } == true
            && name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }
        return plain ? ".\(name)" : "[\"\(name)\"]"
    }
}

/// A coding key made from any string or index.
public struct AnyCodingKey: CodingKey, Hashable, Sendable {
    /// The key's name.
    public var stringValue: String
    /// The key's index, for array elements.
    public var intValue: Int?

    /// A named key.
    public init(_ string: String) {
        self.stringValue = string
        self.intValue = nil
    }

    /// A named key.
    public init?(stringValue: String) {
        self.init(stringValue)
    }

    /// An array index.
    public init(intValue: Int) {
        self.stringValue = "\(intValue)"
        self.intValue = intValue
    }
}

/// The closest of `candidates` to `word` within a small edit distance, for "did you mean" hints.
public func closestMatch(to word: String, in candidates: [String]) -> String? {
    let lowered = word.lowercased()
    let scored = candidates.map { ($0, editDistance(lowered, $0.lowercased())) }
    guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
    return best.1 <= max(2, word.count / 3) ? best.0 : nil
}

/// ` (did you mean 'x'?)` or nothing.
public func suggestion(for word: String, in candidates: [String]) -> String {
    closestMatch(to: word, in: candidates).map { " (did you mean '\($0)'?)" } ?? ""
}

/// What a scenario is told when it names a plugin no registry has: `no transport named 'tpc'
/// (did you mean 'tcp'?); expected one of: in-process, tcp, tls`.
public func unknownPluginMessage(kind: String, name: String, known names: [String]) -> String {
    "no \(kind) named '\(name)'\(suggestion(for: name, in: names)); expected one of: \(names.joined(separator: ", "))"
}

/// Levenshtein distance between two strings, by characters.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a)
    let b = Array(b)
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
        current[0] = i
        for j in 1...b.count {
            let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
            current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
        }
        swap(&previous, &current)
    }
    return previous[b.count]
}
