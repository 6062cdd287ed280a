public import LabCore
import LabWire
import Synchronization

/// The `cx` flow: one cx/1 exchange per iteration (docs/protocol.md §2).
///
/// The server side is a `CXServer` for the entry's suite; each simulated client owns a
/// `CXClient` whose key pair lives for the run unless `clientKeys` says otherwise.
public struct CXFlow: Flow {
    /// `"options"` of a `cx` entry.
    public struct Options: Decodable, Sendable {
        /// The RSA modulus size, for RSA suites.
        public var rsaBits: Int?
        /// Send the bare PKCS#1 key, as the 2009 client did (`classic` only).
        public var legacy: Bool = false
        /// The payload size in bytes (default: the 2009 text, 427 bytes).
        public var payloadBytes: Int?
        /// When each client makes its key pair.
        public var clientKeys: KeyLifetime = .perRun
        /// A test-only server stall, to show that the open model reports what the server hides.
        public var stall: Stall?

        static let keys = ["rsaBits", "legacy", "payloadBytes", "clientKeys", "stall"]

        /// The defaults.
        public init() {}

        /// Decodes strictly.
        public init(from decoder: any Decoder) throws {
            let object = ScenarioObject(decoder, keys: Self.keys)
            self.rsaBits = object.optional(
                "rsaBits",
                expected: "an RSA modulus size such as 2048",
                isValid: { (512...16384).contains($0) }
            )
            self.legacy = object.optional("legacy", expected: "true or false") ?? false
            self.payloadBytes = object.optional(
                "payloadBytes",
                expected: "an integer from 1 to 4194304",
                isValid: { (1...4_194_304).contains($0) }
            )
            self.clientKeys = object.optional("clientKeys", expected: KeyLifetime.expectation) ?? .perRun
            self.stall = object.optional("stall", expected: "an object with 'after' and 'duration'")
        }
    }

    /// A window during which the server holds every request: from `after` into the measured
    /// part of the run, for `duration`. For tests of the measurement, not for benchmarks.
    public struct Stall: Decodable, Sendable {
        /// When the stall begins, from the start of the measured part of the run.
        public var after: TimeSpan
        /// How long it lasts.
        public var duration: TimeSpan

        /// A stall.
        public init(after: TimeSpan, duration: TimeSpan) {
            self.after = after
            self.duration = duration
        }

        /// Decodes strictly.
        public init(from decoder: any Decoder) throws {
            let object = ScenarioObject(decoder, keys: ["after", "duration"])
            self.after = object.required("after", expected: TimeSpan.expectation) ?? .zero
            self.duration = object.required("duration", expected: TimeSpan.expectation) ?? .zero
        }
    }

    /// `cx`.
    public static let name = "cx"
    /// For `lab list`.
    public static let summary =
        "the CryptoExercise exchange: request with the client's key, signed and wrapped response"
    /// The steps a `cx` iteration records.
    public static let steps: [Step] = [
        .keygenClient, .keygenServer, .keygenSession, .encode, .decode, .wrap, .unwrap, .encrypt, .decrypt, .sign,
        .verify, .exchange,
    ]
    /// `cx` counts no outcomes of its own.
    public static let outcomes: [String]? = []
    /// `cx` entries name a suite.
    public static let usesSuite = true
    /// The suite when an entry names none.
    public static let defaultSuite = X25519Suite.id

    /// The entry's suite.
    public let suite: String
    /// Whether the suite is insecure.
    public let isInsecure: Bool
    /// The server's handler (nil when the server runs elsewhere).
    public let handler: (any FrameHandler)?
    private let clientOptions: CXClientOptions
    private let setup: FlowSetup
    private let measuredStart: MeasuredStart

    /// Checks the suite, its options and both providers.
    public static func check(_ setup: FlowSetup, options: Options) -> [(path: String, message: String)] {
        let id = setup.suite ?? Self.defaultSuite
        guard setup.suites.ids.contains(id) else {
            let ids = setup.suites.ids
            return [
                (
                    "suite",
                    unknownPluginMessage(kind: "suite", name: id, known: ids)
                )
            ]
        }
        let suite: any Suite
        do {
            suite = try setup.suites.make(id, options: SuiteOptions(rsaBits: options.rsaBits))
        } catch let error as LabError {
            return [("options.rsaBits", error.message)]
        } catch {
            return [("options", "\(error)")]
        }
        var problems: [(String, String)] = []
        if options.legacy, id != ClassicSuite.id {
            problems.append(
                ("options.legacy", "a legacy request selects 'classic'; suite '\(id)' cannot be sent that way")
            )
        }
        // Fixed keys exist for every key type but only some RSA sizes.
        let fixed = [
            (options.clientKeys == .fixed, suite.clientKey, "options.clientKeys"),
            (setup.startsServer && setup.serverKeys == .fixed, suite.serverKey, "server.keys"),
        ]
        for (isFixed, spec, field) in fixed where isFixed {
            if let reason = FixedKeys.missing(spec) {
                problems.append(("options.rsaBits", "\(field) is \"fixed\", but \(reason)"))
            }
        }
        var seen = Set<String>()
        // A server elsewhere brings its own provider: only the clients' must support the suite.
        let sides =
            setup.startsServer
            ? [("provider", setup.serverProvider), ("clientProvider", setup.clientProvider)]
            : [("clientProvider", setup.clientProvider)]
        for (path, provider) in sides where seen.insert(provider.name).inserted {
            do {
                try SuiteRegistry.requireSupport(suite, by: provider, others: setup.providers)
            } catch let error as LabError {
                problems.append((setup.entry.clientProvider == nil ? "provider" : path, error.message))
            } catch {
                problems.append((path, "\(error)"))
            }
        }
        return problems
    }

    /// Makes the server for the entry's suite (per-run server keys are made here: `keygen.server`).
    public init<R: StepRecorder>(setup: FlowSetup, options: Options, recorder: inout R) throws {
        let suite = try setup.suites.make(
            setup.suite ?? Self.defaultSuite,
            options: SuiteOptions(rsaBits: options.rsaBits)
        )
        let payload = options.payloadBytes.map(Payload.bytes) ?? Payload.standard
        self.suite = suite.id
        self.isInsecure = suite.isInsecure
        self.setup = setup
        self.measuredStart = MeasuredStart()
        self.clientOptions = CXClientOptions(
            suite: suite,
            legacy: options.legacy,
            keyLifetime: options.clientKeys,
            expectedPayload: payload
        )
        guard setup.startsServer else {
            self.handler = nil
            return
        }
        self.handler = try Self.makeHandler(
            setup.serverProvider,
            options: CXServerOptions(suites: [suite], keyLifetime: setup.serverKeys, payload: payload),
            others: setup.providers,
            knownSuites: setup.suites.ids,
            stall: options.stall,
            measuredStart: self.measuredStart,
            recorder: &recorder
        )
    }

    fileprivate static func makeHandler<S: CryptoProvider, R: StepRecorder>(
        _ provider: S,
        options: CXServerOptions,
        others: [any CryptoProvider],
        knownSuites: [String],
        stall: Stall?,
        measuredStart: MeasuredStart,
        recorder: inout R
    ) throws -> any FrameHandler {
        let server = try CXServer(
            provider: provider,
            options: options,
            others: others,
            knownSuites: knownSuites,
            recorder: &recorder
        )
        return CXHandler(server: server, stall: stall, measuredStart: measuredStart)
    }

    /// Makes one client and its key pair (`keygen.client`).
    public func makeClient<R: StepRecorder>(recorder: inout R) throws -> any FlowClient {
        try Self.makeClient(
            self.setup.clientProvider,
            options: self.clientOptions,
            others: self.setup.providers,
            recorder: &recorder
        )
    }

    private static func makeClient<C: CryptoProvider, R: StepRecorder>(
        _ provider: C,
        options: CXClientOptions,
        others: [any CryptoProvider],
        recorder: inout R
    ) throws -> any FlowClient {
        CXFlowClient(client: try CXClient(provider: provider, options: options, others: others, recorder: &recorder))
    }

    /// Starts the stall clock, if a stall is configured.
    public func measuredPhaseStarts(at nanoseconds: UInt64) {
        self.measuredStart.value.store(nanoseconds, ordering: .relaxed)
    }
}

/// When the measured part of the run began (0 until it has).
final class MeasuredStart: Sendable {
    let value = Atomic<UInt64>(0)
}

/// The server side of `cx`: a `CXServer`, and the optional test stall.
struct CXHandler<S: CryptoProvider>: FrameHandler {
    let server: CXServer<S>
    let stall: CXFlow.Stall?
    let measuredStart: MeasuredStart

    func respond<R: StepRecorder>(to body: [UInt8], recorder: inout R) async -> FrameAnswer {
        if let stall = self.stall {
            let start = self.measuredStart.value.load(ordering: .relaxed)
            let now = Stopwatch.now()
            let from = start &+ stall.after.nanoseconds
            let until = from &+ stall.duration.nanoseconds
            if start != 0, now >= from, now < until {
                try? await Task.sleep(nanoseconds: until - now)
            }
        }
        let answer = self.server.respond(to: body, recorder: &recorder)
        return FrameAnswer(
            body: answer.body,
            closeReason: answer.error.map { "\($0.code.rawValue): \($0.message)" },
            group: answer.suite
        )
    }

    func busyAnswer(connectionLimit: Int) -> [UInt8]? {
        BusyAnswer.body(connectionLimit: connectionLimit)
    }
}

/// One simulated client of `cx`.
struct CXFlowClient<C: CryptoProvider>: FlowClient {
    var client: CXClient<C>

    mutating func iterate<R: StepRecorder>(over connection: any Connection, recorder: inout R) async throws {
        let request = try self.client.makeRequest(recorder: &recorder)
        let response = try await connection.request(request, step: .exchange, recorder: &recorder)
        _ = try self.client.open(response, recorder: &recorder)
    }
}

extension CXFlow {
    /// A cx/1 server offering several suites on one provider, as `lab serve` runs it; per-run
    /// signing keys are made here (`keygen.server`).
    public static func serverHandler<R: StepRecorder>(
        provider: any CryptoProvider,
        suites: [any Suite],
        keyLifetime: KeyLifetime = .perRun,
        payload: [UInt8] = Payload.standard,
        others: [any CryptoProvider] = [],
        knownSuites: [String]? = nil,
        recorder: inout R
    ) throws -> any FrameHandler {
        try Self.makeHandler(
            provider,
            options: CXServerOptions(suites: suites, keyLifetime: keyLifetime, payload: payload),
            others: others,
            knownSuites: knownSuites ?? suites.map(\.id),
            stall: nil,
            measuredStart: MeasuredStart(),
            recorder: &recorder
        )
    }
}
