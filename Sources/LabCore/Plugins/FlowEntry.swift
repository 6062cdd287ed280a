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
    /// The combinations the matrix leaves out (`"exclude"`): each names some of its keys with
    /// one value each, and every combination that has those values is left out.
    public var exclude: [[String: JSONValue]] = []
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
        if let matrix = object.raw("matrix") { (self.matrix, self.exclude) = Self.decodeMatrix(matrix, object) }
    }

    /// `"matrix"`: keys in a stable order (the entry's own keys, then options by name), each
    /// with a non-empty array of distinct values, and its `"exclude"`; at most `maximumCells`
    /// combinations, and at least one left.
    private static func decodeMatrix(
        _ value: JSONValue,
        _ object: ScenarioObject
    ) -> (matrix: [(key: String, values: [JSONValue])], exclude: [[String: JSONValue]]) {
        let keys = "\"suite\", \"provider\", \"clientProvider\" or \"options.<name>\""
        let expected = "an object of \(keys) → a non-empty array of values, and optionally \"exclude\""
        guard case .object(let fields) = value, !fields.isEmpty else {
            object.problem("matrix", "expected \(expected), found \(value)")
            return ([], [])
        }
        var matrix: [(key: String, values: [JSONValue])] = []
        let order = { (key: String) in Self.matrixKeys.firstIndex(of: key) ?? Self.matrixKeys.count }
        for key in fields.keys.sorted(by: { (order($0), $0) < (order($1), $1) }) where key != "exclude" {
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
            return ([], [])
        }
        guard let excludeValue = fields["exclude"], !matrix.isEmpty else { return (matrix, []) }
        let exclude = Self.decodeExclude(excludeValue, matrix, object)
        if !exclude.isEmpty, Self.combinations(matrix).allSatisfy({ Self.isExcluded($0, by: exclude) }) {
            object.log.add(
                object.codingPath + [AnyCodingKey("matrix"), AnyCodingKey("exclude")],
                "expected the exclusions to leave at least one of the matrix's \(cells) combinations; they leave none"
            )
        }
        return (matrix, exclude)
    }

    /// `"exclude"`: an array of partial combinations, each naming keys of `matrix` with one of
    /// their values; an unknown key or value is a problem at its path, with a "did you mean".
    private static func decodeExclude(
        _ value: JSONValue,
        _ matrix: [(key: String, values: [JSONValue])],
        _ object: ScenarioObject
    ) -> [[String: JSONValue]] {
        let path = object.codingPath + [AnyCodingKey("matrix"), AnyCodingKey("exclude")]
        let example = #"{"suite": "pq", "provider": "openssl"}"#
        guard case .array(let items) = value, !items.isEmpty else {
            object.log.add(path, "expected a non-empty array of partial combinations such as \(example), found \(value)")
            return []
        }
        let keys = matrix.map(\.key)
        var exclude: [[String: JSONValue]] = []
        for (index, item) in items.enumerated() {
            let here = path + [AnyCodingKey(intValue: index)]
            guard case .object(let fields) = item, !fields.isEmpty else {
                let found = item == .object([:]) ? "{}" : "\(item)"
                object.log.add(here, "expected an object of matrix keys → one value each, such as \(example), found \(found)")
                continue
            }
            var known = true
            for (key, value) in fields.sorted(by: { $0.key < $1.key }) {
                guard let values = matrix.first(where: { $0.key == key })?.values else {
                    let message = "the matrix has no key '\(key)'\(suggestion(for: key, in: keys)); its keys: "
                    object.log.add(here + [AnyCodingKey(key)], message + keys.joined(separator: ", "))
                    known = false
                    continue
                }
                if !values.contains(value) {
                    let texts = values.map(Self.text)
                    let message =
                        "\(value) is not one of the matrix's values of '\(key)'"
                        + "\(suggestion(for: Self.text(value), in: texts)); they are: \(texts.joined(separator: ", "))"
                    object.log.add(here + [AnyCodingKey(key)], message)
                    known = false
                }
            }
            if known { exclude.append(fields) }
        }
        return exclude
    }

    /// Every combination of `matrix`'s values, in order (the last key varying fastest).
    static func combinations(_ matrix: [(key: String, values: [JSONValue])]) -> [[(key: String, value: JSONValue)]] {
        var cells: [[(key: String, value: JSONValue)]] = [[]]
        for (key, values) in matrix {
            cells = cells.flatMap { cell in values.map { cell + [(key, $0)] } }
        }
        return cells
    }

    /// Whether `cell` has every value of one of `exclude`'s partial combinations.
    static func isExcluded(_ cell: [(key: String, value: JSONValue)], by exclude: [[String: JSONValue]]) -> Bool {
        exclude.contains { partial in partial.allSatisfy { key, value in cell.contains { $0.key == key && $0.value == value } } }
    }

    /// The entries this one stands for: itself (with `origin`), or one per combination of its
    /// matrix that `exclude` leaves in, in order (the last key varying fastest). With a `name`,
    /// each is labelled `<name>-<value>-…`; without, `labelled(_:)` names them.
    public func expanded(origin: Int) -> [FlowEntry] {
        var base = self
        base.origin = origin
        base.matrix = []
        base.exclude = []
        guard !self.matrix.isEmpty else { return [base] }
        let cells = Self.combinations(self.matrix).filter { !Self.isExcluded($0, by: self.exclude) }
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
            if let name = self.name {
                entry.name = String(([name] + cell.map { Self.labelPart($0.value) }).joined(separator: "-").prefix(64))
            }
            return entry
        }
    }

    /// `entries` (a scenario's, expanded) with each matrix entry that has no `name` labelled
    /// `<flow>-<value>-…`: its values of its matrix's keys and of every other key (`suite`,
    /// `provider`, `clientProvider`, `options.<name>`) whose value differs between the entries
    /// of its flow, in that order, so that a label says all that sets its group apart
    /// (`cx-x25519-openssl` beside `cx-pq`, not `cx-openssl`).
    public static func labelled(_ entries: [FlowEntry]) -> [FlowEntry] {
        entries.map { entry in
            guard entry.name == nil, !entry.cell.isEmpty else { return entry }
            let alike = entries.filter { $0.flow == entry.flow }
            let options = Set(alike.flatMap { entry -> [String] in
                guard case .object(let options) = entry.options else { return [] }
                return Array(options.keys)
            })
            let keys = Self.matrixKeys + options.sorted().map { "options." + $0 }
            let varying = keys.filter { key in
                entry.cell.contains { $0.key == key } || Set(alike.map { $0.value(of: key) }).count > 1
            }
            var labelled = entry
            let parts = [entry.flow] + varying.compactMap { entry.value(of: $0).map(Self.labelPart) }
            labelled.name = String(parts.joined(separator: "-").prefix(64))
            return labelled
        }
    }

    /// The entry's value of a matrix key (`suite`, `options.payloadBytes`), nil when unset.
    func value(of key: String) -> JSONValue? {
        switch key {
        case "suite": self.suite.map(JSONValue.string)
        case "provider": self.provider.map(JSONValue.string)
        case "clientProvider": self.clientProvider.map(JSONValue.string)
        default:
            if case .object(let options) = self.options { options[String(key.dropFirst("options.".count))] } else { nil }
        }
    }

    /// For an entry made from a matrix, the `"exclude"` item that leaves out its combination of
    /// suite and providers, `{"suite": "pq", "provider": "openssl"}`; nil if the matrix varies neither.
    public var excludeHint: String? {
        let parts = self.cell.filter { Self.matrixKeys.contains($0.key) }
        guard !parts.isEmpty else { return nil }
        return "{" + parts.map { "\"\($0.key)\": \($0.value)" }.joined(separator: ", ") + "}"
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
