import Foundation

/// One entry of `"flows"`: a flow plugin, its weight and options.
public struct FlowEntry: Sendable, Decodable {
    /// The flow plugin, e.g. `cx`.
    public var flow: String
    /// The label reports and thresholds use; defaults to the flow's name, then `name-2`, … when repeated.
    public var name: String?
    /// The relative chance that a client's iteration runs this flow.
    public var weight: Int
    /// The suite, for flows that use one (`cx`); defaults to the flow's choice.
    public var suite: String?
    /// The provider on both sides; defaults to the server's.
    public var provider: String?
    /// The simulated clients' provider, when it differs from `provider` (a cross-provider run).
    public var clientProvider: String?
    /// Flow-specific options, decoded by the flow itself.
    public var options: JSONValue
    /// The parameters to vary (`"matrix"`): each key (`suite`, `provider`, `clientProvider`
    /// or `options.<name>`) with its values; the entry stands for one entry per combination
    /// (`expanded(origin:)`). Empty: the entry as it is.
    public var matrix: [(key: String, values: [JSONValue])] = []
    /// For an entry made from a matrix, its combination's values by key; empty otherwise.
    public var cell: [(key: String, value: JSONValue)] = []
    /// The index of the entry in the scenario file's `"flows"` (an entry made from a matrix
    /// has its matrix's); nil for entries built in code.
    public var origin: Int? = nil

    static let keys = ["flow", "name", "weight", "suite", "provider", "clientProvider", "options", "matrix"]
    /// The most entries one matrix may stand for.
    public static let maximumCells = 1_000
    /// The entry keys a matrix may vary, beside `options.<name>`.
    static let matrixKeys = ["suite", "provider", "clientProvider"]

    /// An entry built in code.
    public init(
        flow: String,
        name: String? = nil,
        weight: Int = 1,
        suite: String? = nil,
        provider: String? = nil,
        clientProvider: String? = nil,
        options: JSONValue = .object([:])
    ) {
        self.flow = flow
        self.name = name
        self.weight = weight
        self.suite = suite
        self.provider = provider
        self.clientProvider = clientProvider
        self.options = options
    }

    /// Decodes strictly.
    public init(from decoder: any Decoder) throws {
        let object = ScenarioObject(decoder, keys: Self.keys)
        self.flow = object.required("flow", expected: "a flow name", isValid: { !$0.isEmpty }) ?? ""
        self.name = object.optional(
            "name",
            expected: "a label of letters, digits, '_' or '-'",
            isValid: Self.isValidLabel
        )
        self.weight =
            object.optional(
                "weight",
                expected: "an integer from 1 to 1000000",
                isValid: { (1...1_000_000).contains($0) }
            ) ?? 1
        self.suite = object.optional("suite", expected: "a suite name")
        self.provider = object.optional("provider", expected: "a provider name")
        self.clientProvider = object.optional("clientProvider", expected: "a provider name")
        let options = object.raw("options") ?? .object([:])
        if case .object = options {
            self.options = options
        } else {
            object.problem("options", "expected an object, found \(options)")
            self.options = .object([:])
        }
        if let matrix = object.raw("matrix") { self.matrix = Self.decodeMatrix(matrix, object) }
    }

    /// `"matrix"`: keys in a stable order (the entry's own keys, then options by name), each
    /// with a non-empty array of distinct values; at most `maximumCells` combinations.
    private static func decodeMatrix(
        _ value: JSONValue,
        _ object: ScenarioObject
    ) -> [(key: String, values: [JSONValue])] {
        let keys = "\"suite\", \"provider\", \"clientProvider\" or \"options.<name>\""
        let expected = "an object of \(keys) → a non-empty array of values"
        guard case .object(let fields) = value, !fields.isEmpty else {
            object.problem("matrix", "expected \(expected), found \(value)")
            return []
        }
        var matrix: [(key: String, values: [JSONValue])] = []
        let order = { (key: String) in Self.matrixKeys.firstIndex(of: key) ?? Self.matrixKeys.count }
        for key in fields.keys.sorted(by: { (order($0), $0) < (order($1), $1) }) {
            let isOption = key.hasPrefix("options.") && key.count > "options.".count && !key.dropFirst(8).contains(".")
            guard Self.matrixKeys.contains(key) || isOption else {
                object.problem("matrix", "expected keys \(keys), found \"\(key)\"")
                continue
            }
            guard case .array(let values) = fields[key]!, !values.isEmpty, Set(values).count == values.count else {
                object.problem(
                    "matrix",
                    "expected \"\(key)\" to have a non-empty array of distinct values, found \(fields[key]!)"
                )
                continue
            }
            if !isOption, let bad = values.first(where: { if case .string = $0 { false } else { true } }) {
                object.problem("matrix", "expected \"\(key)\" to have names (strings), found \(bad)")
                continue
            }
            matrix.append((key, values))
        }
        let cells = matrix.reduce(1) { $0 * $1.values.count }
        if cells > Self.maximumCells {
            object.problem("matrix", "expected at most \(Self.maximumCells) combinations, found \(cells)")
            return []
        }
        return matrix
    }

    /// The entries this one stands for: itself (with `origin`), or one per combination of its
    /// matrix, in order (the last key varying fastest), each labelled `<name or flow>-<value>-…`.
    public func expanded(origin: Int) -> [FlowEntry] {
        var base = self
        base.origin = origin
        base.matrix = []
        guard !self.matrix.isEmpty else { return [base] }
        var cells: [[(key: String, value: JSONValue)]] = [[]]
        for (key, values) in self.matrix {
            cells = cells.flatMap { cell in values.map { cell + [(key, $0)] } }
        }
        return cells.map { cell in
            var entry = base
            entry.cell = cell
            for (key, value) in cell {
                switch (key, value) {
                case ("suite", .string(let name)): entry.suite = name
                case ("provider", .string(let name)): entry.provider = name
                case ("clientProvider", .string(let name)): entry.clientProvider = name
                default:
                    if case .object(var options) = entry.options {
                        options[String(key.dropFirst("options.".count))] = value
                        entry.options = .object(options)
                    }
                }
            }
            let parts = [self.name ?? self.flow] + cell.map { Self.labelPart($0.value) }
            entry.name = String(parts.joined(separator: "-").prefix(64))
            return entry
        }
    }

    /// Where problems with this entry are reported: `$.flows[<origin>]`, and for a matrix's
    /// entry its combination, `$.flows[0][suite=pq,options.payloadBytes=4096]`.
    public func path(index: Int) -> String {
        let base = "$.flows[\(self.origin ?? index)]"
        guard !self.cell.isEmpty else { return base }
        return base + "[" + self.cell.map { "\($0.key)=\(Self.text($0.value))" }.joined(separator: ",") + "]"
    }

    /// A matrix value as its cell's label and reports show it: `pq`, `4096`, `0.5`.
    public static func text(_ value: JSONValue) -> String {
        switch value {
        case .string(let text): return text
        case .number(let number):
            return number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : "\(number)"
        default: return "\(value)"
        }
    }

    static func labelPart(_ value: JSONValue) -> String {
        let allowed = { (character: Character) in
            (character.isASCII && (character.isLetter || character.isNumber)) || character == "_" || character == "-"
        }
        return String(Self.text(value).map { allowed($0) ? $0 : "_" })
    }

    static func isValidLabel(_ label: String) -> Bool {
        (1...64).contains(label.count)
            && label.allSatisfy { ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "_" || $0 == "-" }
    }
}
