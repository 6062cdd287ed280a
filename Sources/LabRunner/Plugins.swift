public import LabCore

/// Every plugin a run may name, handed to the validator and the runner (not a global).
public struct Plugins: Sendable {
    /// Crypto providers.
    public var providers: ProviderRegistry
    /// cx/1's suites, handed to each flow in its `FlowSetup`.
    public var suites: SuiteRegistry
    /// Flows.
    public var flows: FlowRegistry
    /// Transports.
    public var transports: TransportRegistry
    /// The protocols `lab serve` serves (cx/1, msg/1, a plugin's).
    public var served: [any ServedProtocol.Type]
    /// Reporter names (the reporters themselves live in LabReport).
    public var reporters: [String]
    /// How `"discover"` finds a server, if the build has a way.
    public var discovery: (any Discovery)?
    /// The providers the calibration yardstick runs on, in order of preference, before every
    /// other registered one (`Calibrator`); the lab's own choice is its catalog's.
    public var calibrationProviders: [String]
    /// Values for plugins with kinds of their own (msg/1's KDFs, policies, captchas and
    /// clocks), handed to each flow in its `FlowSetup`.
    public var extensions = PluginExtensions()

    /// A plugin set.
    public init(
        providers: ProviderRegistry,
        suites: SuiteRegistry,
        flows: FlowRegistry,
        transports: TransportRegistry,
        served: [any ServedProtocol.Type] = [],
        reporters: [String],
        discovery: (any Discovery)? = nil,
        calibrationProviders: [String] = []
    ) {
        self.providers = providers
        self.suites = suites
        self.flows = flows
        self.transports = transports
        ServedRequests.requireDistinct(served)
        self.served = served
        self.reporters = reporters
        self.discovery = discovery
        self.calibrationProviders = calibrationProviders
    }
}
