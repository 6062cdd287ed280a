public import LabCore
public import LabFraming
import LabWire

/// The outcome of one in-process exchange.
public struct ExchangeOutcome: Sendable {
    /// The verified plaintext.
    public var plaintext: [UInt8]
    /// The client's steps (`encode`, `decode`, `unwrap`, `decrypt`, `verify`, `exchange`, …).
    public var client: StepTimings
    /// The server's steps (`decode`, `keygen.session`, `wrap`, `encrypt`, `sign`, `encode`, …).
    public var server: StepTimings
}

/// One client and one server in the same process, passing real frames (no socket).
///
/// The bytes are exactly those a socket would carry: each body is framed, and the
/// receiving side parses the frame with the limit in force.
public struct InProcessExchange<C: CryptoProvider, S: CryptoProvider>: Sendable {
    /// The client.
    public var client: CXClient<C>
    /// The server.
    public let server: CXServer<S>
    /// The framing both sides use.
    public let framing: Framing
    /// Key generation done at set-up: `keygen.client` and `keygen.server`.
    public let setup: StepTimings

    /// Makes both sides and their keys.
    public init(
        suite: any Suite,
        client: C,
        server: S,
        framing: Framing = .standard,
        legacy: Bool = false,
        clientKeys: KeyLifetime = .perRun,
        serverKeys: KeyLifetime = .perRun,
        payload: [UInt8] = Payload.standard,
        others: [any CryptoProvider] = []
    ) throws {
        var setup = StepTimings()
        self.server = try CXServer(
            provider: server,
            options: CXServerOptions(suites: [suite], keyLifetime: serverKeys, payload: payload),
            others: others,
            recorder: &setup
        )
        self.client = try CXClient(
            provider: client,
            options: CXClientOptions(suite: suite, legacy: legacy, keyLifetime: clientKeys, expectedPayload: payload),
            others: others,
            recorder: &setup
        )
        self.framing = framing
        self.setup = setup
    }

    /// Runs one exchange; throws the client's `LabError` if it does not verify.
    public mutating func run() throws -> ExchangeOutcome {
        var clientSteps = StepTimings()
        var serverSteps = StepTimings()
        let start = Stopwatch.now()
        let requestFrame = try self.framing.frame(try self.client.makeRequest(recorder: &clientSteps))
        let requestBody = try FrameParser.singleFrame(requestFrame, framing: self.framing)
        let answer = self.server.respond(to: requestBody, recorder: &serverSteps)
        let responseFrame = try self.framing.frame(answer.body)
        let responseBody = try FrameParser.singleFrame(responseFrame, framing: self.framing)
        let plaintext = try self.client.open(responseBody, recorder: &clientSteps)
        clientSteps.record(.exchange, nanoseconds: Stopwatch.now() &- start)
        return ExchangeOutcome(plaintext: plaintext, client: clientSteps, server: serverSteps)
    }
}

/// Entry points that take providers as existentials (e.g. chosen by name at run time).
public enum CXExchange {
    /// Runs `count` exchanges of `suite` between `client` and `server` in process.
    ///
    /// `others` are the remaining registered providers, named in the error when one of
    /// the two cannot do the suite.
    public static func run(
        suite: any Suite,
        client: any CryptoProvider,
        server: any CryptoProvider,
        count: Int = 1,
        framing: Framing = .standard,
        legacy: Bool = false,
        payload: [UInt8] = Payload.standard,
        others: [any CryptoProvider] = []
    ) throws -> (setup: StepTimings, outcomes: [ExchangeOutcome]) {
        try self.open(suite, client, server, count, framing, legacy, payload, others)
    }

    private static func open<C: CryptoProvider, S: CryptoProvider>(
        _ suite: any Suite,
        _ client: C,
        _ server: S,
        _ count: Int,
        _ framing: Framing,
        _ legacy: Bool,
        _ payload: [UInt8],
        _ others: [any CryptoProvider]
    ) throws -> (setup: StepTimings, outcomes: [ExchangeOutcome]) {
        var exchange = try InProcessExchange(
            suite: suite,
            client: client,
            server: server,
            framing: framing,
            legacy: legacy,
            payload: payload,
            others: others
        )
        var outcomes: [ExchangeOutcome] = []
        for _ in 0..<count {
            outcomes.append(try exchange.run())
        }
        return (exchange.setup, outcomes)
    }
}
