/// A client/server interaction the runner repeats and times, e.g. `cx` (the exchange).
///
/// A flow is made once per scenario entry. It provides the server's handler and makes one
/// `FlowClient` per simulated client; the runner drives the clients and records their steps.
public protocol Flow: Sendable {
    /// Decoded from the entry's `"options"`, strictly (unknown keys are problems).
    associatedtype Options: Decodable & Sendable
    /// The name scenario files use, e.g. `cx`.
    static var name: String { get }
    /// One line for `lab list`.
    static var summary: String { get }
    /// The steps this flow records, for threshold names and reports.
    static var steps: [Step] { get }
    /// The outcomes this flow counts (`StepRecorder.count`), which `outcomes.<name>`
    /// thresholds are checked against; nil (the default) for a flow that does not say, whose
    /// thresholds may name any outcome.
    static var outcomes: [String]? { get }
    /// Whether the entry's `suite` field means something to this flow.
    static var usesSuite: Bool { get }

    /// Problems with an entry that decoding alone cannot see (a suite the provider cannot do, …).
    ///
    /// Each is a path relative to the entry (`suite`, `options.rsaBits`), or one from the
    /// scenario's root for a setting outside the entry (`$.server.provider`), and a message.
    static func check(_ setup: FlowSetup, options: Options) -> [(path: String, message: String)]

    /// Makes the flow's server side; set-up steps (e.g. `keygen.server`) go to `recorder`.
    init<R: StepRecorder>(setup: FlowSetup, options: Options, recorder: inout R) throws

    /// The suite shown in reports, or `-`.
    var suite: String { get }
    /// Whether reports must mark this entry insecure.
    var isInsecure: Bool { get }
    /// The server's side, or nil when the scenario's server runs elsewhere (`setup.startsServer`).
    var handler: (any FrameHandler)? { get }
    /// Makes one simulated client's side; its set-up steps (e.g. `keygen.client`) go to `recorder`.
    func makeClient<R: StepRecorder>(recorder: inout R) throws -> any FlowClient
    /// Called when the measured part of the run starts (monotonic nanoseconds).
    func measuredPhaseStarts(at nanoseconds: UInt64)
}

extension Flow {
    /// Undeclared by default: any outcome name is taken.
    public static var outcomes: [String]? { nil }

    /// Nothing to do by default.
    public func measuredPhaseStarts(at nanoseconds: UInt64) {}
}

/// One simulated client's side of a flow.
public protocol FlowClient: Sendable {
    /// Sets up this client's state on the server once before its first iteration (e.g. registers
    /// an account); its steps count as set-up, not as an iteration.
    ///
    /// If it throws, the runner calls it again at the start of this flow's next iteration, which
    /// fails with its error if it throws again.
    mutating func prepare<R: StepRecorder>(over connection: any Connection, recorder: inout R) async throws
    /// Runs one iteration over `connection`, recording its steps; throws if it fails.
    mutating func iterate<R: StepRecorder>(over connection: any Connection, recorder: inout R) async throws
}

extension FlowClient {
    /// Nothing to set up by default.
    public mutating func prepare<R: StepRecorder>(over connection: any Connection, recorder: inout R) async throws {}
}

/// What a flow entry is built from: the resolved plugins and the scenario's settings.
public struct FlowSetup: Sendable {
    /// The entry as written.
    public var entry: FlowEntry
    /// The label reports use.
    public var label: String
    /// The suite: the entry's, or nil for the flow's default.
    public var suite: String?
    /// The suites the catalog registered, which `suite` is looked up in.
    public var suites: SuiteRegistry
    /// The provider of the simulated clients.
    public var clientProvider: any CryptoProvider
    /// The provider of the server.
    public var serverProvider: any CryptoProvider
    /// Every loaded provider, to name alternatives in errors.
    public var providers: [any CryptoProvider]
    /// The server's key lifetime.
    public var serverKeys: KeyLifetime
    /// The transport's name.
    public var transport: String
    /// Whether the lab runs this flow's server; false when it reaches one elsewhere.
    public var startsServer: Bool
    /// The messaging service's database file (`server.database`, resolved), or nil for the default.
    public var database: String?
    /// Where the run keeps its files (the report folder when `lab run` writes one); nil: a temporary folder.
    public var dataDirectory: String?
    /// The catalog's extensions: the kinds of plugins that flows have of their own (msg/1's KDFs, …).
    public var extensions: PluginExtensions

    /// A set-up.
    public init(
        entry: FlowEntry,
        label: String,
        suite: String?,
        suites: SuiteRegistry,
        clientProvider: any CryptoProvider,
        serverProvider: any CryptoProvider,
        providers: [any CryptoProvider],
        serverKeys: KeyLifetime,
        transport: String,
        startsServer: Bool = true,
        database: String? = nil,
        dataDirectory: String? = nil,
        extensions: PluginExtensions = PluginExtensions()
    ) {
        self.entry = entry
        self.label = label
        self.suite = suite
        self.suites = suites
        self.clientProvider = clientProvider
        self.serverProvider = serverProvider
        self.providers = providers
        self.serverKeys = serverKeys
        self.transport = transport
        self.startsServer = startsServer
        self.database = database
        self.dataDirectory = dataDirectory
        self.extensions = extensions
    }

    /// `openssl`, or `swift-crypto→openssl` when the sides differ (the client's alone when the
    /// server runs elsewhere).
    public var providerLabel: String {
        !self.startsServer || self.clientProvider.name == self.serverProvider.name
            ? self.clientProvider.name : "\(self.clientProvider.name)→\(self.serverProvider.name)"
    }
}

/// The flows a run may use, built once from a type list.
public struct FlowRegistry: Sendable {
    /// The registered flow types, in order.
    public let types: [any Flow.Type]

    /// A registry of the given flows; names must be distinct.
    public init(_ types: [any Flow.Type]) {
        PluginLookup.requireDistinct(types.map { $0.name }, kind: "flow")
        self.types = types
    }

    /// The registered names, in order.
    public var names: [String] { self.types.map { $0.name } }

    /// The flow type called `name`, if any.
    public func type(named name: String) -> (any Flow.Type)? {
        self.types.first { $0.name == name }
    }
}
