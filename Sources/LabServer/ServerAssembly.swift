public import Foundation
public import LabCore
public import LabMessaging
public import LabResults
public import LabRunner
public import LabTransports
import LabWire

/// One suite a server offers: `x25519`, or `classic@1024` with its RSA size.
public struct SuiteChoice: Sendable, Hashable, CustomStringConvertible {
    /// The suite's id.
    public var id: String
    /// The RSA size, for the RSA suites; nil: the suite's default.
    public var rsaBits: Int?

    /// A choice.
    public init(_ id: String, rsaBits: Int? = nil) {
        self.id = id
        self.rsaBits = rsaBits
    }

    /// `id` or `id@bits`; nil for anything else (an empty id, bits that are not a number).
    public init?(parsing text: String) {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: "@", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), !parts[0].isEmpty else { return nil }
        self.id = String(parts[0])
        if parts.count == 2 {
            guard let bits = Int(parts[1]), bits > 0 else { return nil }
            self.rsaBits = bits
        }
    }

    /// A comma-separated list of choices; nil if any item is not one.
    public static func list(parsing text: String) -> [SuiteChoice]? {
        let items = text.split(separator: ",", omittingEmptySubsequences: false).map { SuiteChoice(parsing: String($0)) }
        guard !items.isEmpty, items.allSatisfy({ $0 != nil }) else { return nil }
        return items.compactMap { $0 }
    }

    /// As parsed: `id` or `id@bits`.
    public var description: String { self.rsaBits.map { "\(self.id)@\($0)" } ?? self.id }

    /// The suite, made through `registry`.
    public func make(_ registry: SuiteRegistry) throws -> any Suite {
        try registry.make(self.id, options: SuiteOptions(rsaBits: self.rsaBits))
    }
}

/// A socket server, typed: everything `lab serve`'s options come down to, checked once where
/// they are parsed. `ServerAssembly` builds the server from it.
public struct ServerSettings: Sendable {
    /// The transport plugin's name: `tcp` or `tls` (a server others reach crosses a socket).
    public var transport: String
    /// Where it listens, its framing, limits, timeouts and TLS identity.
    public var options: TransportOptions
    /// The crypto provider's name.
    public var provider: String
    /// The cx/1 suites offered; nil: every suite the provider can do.
    public var suites: [SuiteChoice]?
    /// When the server makes its signing keys.
    public var keys: KeyLifetime
    /// Each served protocol's own settings, by its key (msg/1's under `MessagingServing`;
    /// unset, msg/1 is not served).
    public var protocols: PluginExtensions
    /// How long a graceful shutdown lets the answers in flight finish.
    public var drain: Duration

    /// Settings; the defaults are `lab serve`'s.
    public init(
        transport: String = TCPTransport.name,
        options: TransportOptions = TransportOptions(),
        provider: String = "swift-crypto",
        suites: [SuiteChoice]? = nil,
        keys: KeyLifetime = .perRun,
        protocols: PluginExtensions = PluginExtensions(),
        drain: Duration = .seconds(10)
    ) {
        self.transport = transport
        self.options = options
        self.provider = provider
        self.suites = suites
        self.keys = keys
        self.protocols = protocols
        self.drain = drain
    }
}

/// A server put together by `ServerAssembly`, not yet listening.
public struct AssembledServer: Sendable {
    /// What it was made from.
    public let settings: ServerSettings
    /// The crypto provider.
    public let provider: any CryptoProvider
    /// The ids of the suites offered.
    public let suites: [String]
    /// Each served protocol's name and handler, in the catalog's order.
    public let served: [(name: String, handler: any FrameHandler)]
    /// Answers `serverStats`, and keeps the heap at the busiest moment.
    public let statistics: ServerStatsResponder
    /// What the transport serves: the served protocols and the lab's own ops, by `ProtocolRouter`.
    public let handler: any FrameHandler
    /// Where the transport records connections, closes and steps.
    public let recording: ServerRecording

    /// The protocols it serves, for its DNS-SD TXT record, e.g. `cx/1` and `msg/1`.
    public var protocols: [String] { self.served.map(\.name) }

    /// msg/1's service, if served: `lab serve`'s metrics read its password checks.
    public var messaging: MessagingService? { self.served.lazy.compactMap { $0.handler as? MessagingService }.first }
}

/// The composition root of a lab server: the one place that turns `ServerSettings` into a
/// handler (the protocols' handlers behind one router, with the lab's `serverStats` op) and
/// puts it on a transport. `lab serve` is this plus its lifetimes (`ServeServices`); tests
/// build servers the same way, without a process.
public enum ServerAssembly {
    /// Builds the server `settings` describe, with the provider, suites and served protocols
    /// of `plugins`. `heap` reads the process's heap for `serverStats` (`HeapStats.current`,
    /// or nothing).
    public static func assemble(
        _ settings: ServerSettings,
        plugins: Plugins,
        started: Date = Date(),
        heap: @escaping @Sendable () -> HeapSnapshot? = { nil }
    ) throws -> AssembledServer {
        let providers = try plugins.providers.makeAll()
        let provider = try plugins.providers.make(settings.provider)
        var setup = ServingSetup(provider: provider)
        setup.suites = try self.suites(settings.suites, in: plugins.suites, provider: provider, others: providers)
        (setup.providers, setup.knownSuites, setup.keys) = (providers, plugins.suites.ids, settings.keys)
        (setup.options, setup.extensions, setup.settings) = (settings.options, plugins.extensions, settings.protocols)
        var keygen = NoStepRecorder()
        var served: [(name: String, requests: ServedRequests, handler: any FrameHandler)] = []
        for type in plugins.served {
            if let handler = try type.handler(for: setup, recorder: &keygen) {
                served.append((type.name, type.requests, handler))
            }
        }
        let recording = ServerRecording()
        let statistics = ServerStatsResponder(
            recording: recording,
            provider: ProviderInfo(name: provider.name, version: provider.version),
            transport: settings.transport,
            startedAt: started,
            maxAnswerBytes: settings.options.maxFrameBytes,
            heap: heap
        )
        return AssembledServer(
            settings: settings,
            provider: provider,
            suites: setup.suites.map(\.id),
            served: served.map { ($0.name, $0.handler) },
            statistics: statistics,
            handler: ProtocolRouter(served.map { ($0.requests, $0.handler) }, ops: [ServerStatsMessage.op: statistics]),
            recording: recording
        )
    }

    /// Starts listening on the settings' transport, made from `transports`: any transport
    /// that crosses a socket serves others through `Transport.listen`, so a plugin's does too.
    public static func listen(
        _ server: AssembledServer,
        transports: TransportRegistry
    ) async throws -> any ListeningServer {
        let settings = server.settings
        guard let type = transports.type(named: settings.transport), type.usesNetwork else {
            let network = transports.types.filter { $0.usesNetwork }.map { $0.name }
            throw LabError(
                .invalidScenario,
                "A server others reach listens on a transport that crosses a socket (\(network.joined(separator: ", "))), not '\(settings.transport)'"
            )
        }
        let transport = try transports.make(settings.transport, options: settings.options)
        return try await transport.listen(server.handler, recorder: server.recording)
    }

    /// The suites `choices` name, each checked against `provider`; with no choice, every
    /// suite of `registry` the provider can do.
    static func suites(
        _ choices: [SuiteChoice]?,
        in registry: SuiteRegistry,
        provider: any CryptoProvider,
        others: [any CryptoProvider]
    ) throws -> [any Suite] {
        guard let choices else {
            return try registry.ids.map { try registry.make($0) }.filter { $0.unsupportedReason(on: provider) == nil }
        }
        guard !choices.isEmpty else { throw LabError(.invalidScenario, "The server offers no suite") }
        return try choices.map { choice in
            let suite = try choice.make(registry)
            try SuiteRegistry.requireSupport(suite, by: provider, others: others)
            return suite
        }
    }
}
