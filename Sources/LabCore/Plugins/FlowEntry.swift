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

    static let keys = ["flow", "name", "weight", "suite", "provider", "clientProvider", "options"]

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
    }

    static func isValidLabel(_ label: String) -> Bool {
        (1...64).contains(label.count)
            && label.allSatisfy { ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "_" || $0 == "-" }
    }
}
