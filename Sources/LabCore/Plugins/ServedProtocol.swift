/// A protocol a lab server serves on its one port, e.g. cx/1 or msg/1: a catalog entry that
/// makes the protocol's server side, so that `lab serve` serves whatever the catalog holds
/// (docs/architecture.md, "Adding a plugin").
///
/// Every request reaches one protocol through the server's router (`ProtocolRouter`), by
/// what `requests` claims: a property-list dictionary whose `op` names one of a protocol's
/// ops goes to it; one whose `op` no protocol names goes to the protocol that takes the other
/// ops (msg/1, which answers an unknown op with its own error); anything else goes to the
/// protocol that takes the rest (cx/1, whose requests have no `op`).
public protocol ServedProtocol: Sendable {
    /// The name the server advertises (DNS-SD's `protocols` TXT key) and logs, e.g. `msg/1`.
    static var name: String { get }
    /// One line for `lab list`.
    static var summary: String { get }
    /// The requests this protocol answers.
    static var requests: ServedRequests { get }
    /// The protocol's server side for `setup`, or nil when `setup` does not ask for it (msg/1
    /// without its settings); set-up steps (a key generated once) go to `recorder`.
    static func handler<R: StepRecorder>(for setup: ServingSetup, recorder: inout R) throws -> (any FrameHandler)?
}

/// Which requests a served protocol answers (`ServedProtocol.requests`).
public enum ServedRequests: Sendable, Hashable {
    /// Property-list dictionaries whose `op` is one of these.
    case ops(Set<String>)
    /// Property-list dictionaries whose `op` no protocol names; at most one protocol of a server.
    case otherOps
    /// Every request no protocol claims by its `op`; at most one protocol of a server.
    case rest
}

/// What a served protocol's server side is made from: the server's provider, suites, keys and
/// limits, the catalog's extensions and each protocol's own settings.
public struct ServingSetup: Sendable {
    /// The server's crypto provider.
    public var provider: any CryptoProvider
    /// Every loaded provider, to name alternatives in errors.
    public var providers: [any CryptoProvider] = []
    /// The cx/1 suites offered, each checked against `provider`.
    public var suites: [any Suite] = []
    /// Every suite id the catalog knows, so that a request for one not offered is told apart
    /// from one for a suite nobody has heard of.
    public var knownSuites: [String] = []
    /// When the server makes its signing keys.
    public var keys = KeyLifetime.perRun
    /// The transport's limits: the largest answer, the bytes a connection may hold.
    public var options = TransportOptions()
    /// The catalog's extensions (msg/1's KDFs, policies, captchas and clocks).
    public var extensions = PluginExtensions()
    /// Each protocol's own settings, by its key (msg/1's: its store, KDF, policy, clock); a
    /// protocol whose key is not set may decline to be served.
    public var settings = PluginExtensions()

    /// A set-up on `provider`; the rest is set field by field.
    public init(provider: any CryptoProvider) {
        self.provider = provider
    }
}

extension ServedRequests {
    /// Traps unless `protocols` can share one server: names distinct, no op claimed twice, at
    /// most one protocol for the other ops and one for the rest. A catalog is built once, from code.
    public static func requireDistinct(_ protocols: [any ServedProtocol.Type]) {
        PluginLookup.requireDistinct(protocols.map { $0.name }, kind: "served protocol")
        let ops = protocols.flatMap { type -> [String] in
            if case .ops(let names) = type.requests { return Array(names) }
            return []
        }
        PluginLookup.requireDistinct(ops, kind: "served protocols' op")
        precondition(protocols.filter { $0.requests == .otherOps }.count <= 1, "one served protocol takes the other ops")
        precondition(protocols.filter { $0.requests == .rest }.count <= 1, "one served protocol takes the rest")
    }
}
