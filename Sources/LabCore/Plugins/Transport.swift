/// How frames travel between a client and the server: `in-process`, later `tcp` and `tls`.
///
/// A transport serves a `FrameHandler` and hands out client connections to it. The runner
/// only sees this protocol, so a socket transport slots in without touching flows.
public protocol Transport: Sendable {
    /// The name scenario files use, e.g. `in-process`.
    static var name: String { get }
    /// Makes the transport with the scenario's server settings.
    init(options: TransportOptions) throws
    /// Starts serving `handler`; clients connect through the returned endpoint.
    func serve(_ handler: any FrameHandler) async throws -> any TransportEndpoint
}

/// The server settings a transport needs.
public struct TransportOptions: Sendable, Hashable {
    /// `u32be` or `u64le` (PROTOCOL.md §1).
    public var framing: String
    /// The largest frame body either side accepts.
    public var maxFrameBytes: Int

    /// Options; the protocol's defaults unless given.
    public init(framing: String = "u32be", maxFrameBytes: Int = 5_242_880) {
        self.framing = framing
        self.maxFrameBytes = maxFrameBytes
    }
}

/// A served handler, as clients reach it.
public protocol TransportEndpoint: Sendable {
    /// Opens a connection for one simulated client.
    func connect() async throws -> any Connection
    /// Stops serving; open connections end.
    func shutdown() async
}

/// One client's connection: request bodies out, response bodies back, framed on the way.
public protocol Connection: Sendable {
    /// Sends one request body and waits for its response body.
    ///
    /// In-process, the server's steps are recorded into `recorder` too.
    func request<R: StepRecorder>(_ body: [UInt8], recorder: inout R) async throws -> [UInt8]
    /// Closes the connection.
    func close() async
}

/// The server side of a flow: answers one request body.
public protocol FrameHandler: Sendable {
    /// Answers `body`, recording the server's steps; never throws, errors are answers.
    func respond<R: StepRecorder>(to body: [UInt8], recorder: inout R) async -> FrameAnswer
}

/// A handler's answer: the body to send, and whether to close the connection after it.
public struct FrameAnswer: Sendable {
    /// The response frame's body.
    public var body: [UInt8]
    /// Why the server closes the connection after sending, or nil to keep it open.
    public var closeReason: String?

    /// An answer.
    public init(body: [UInt8], closeReason: String? = nil) {
        self.body = body
        self.closeReason = closeReason
    }
}

/// The transports a run may use, built once from a type list.
public struct TransportRegistry: Sendable {
    /// The registered transport types, in order.
    public let types: [any Transport.Type]

    /// A registry of the given transports; names must be distinct.
    public init(_ types: [any Transport.Type]) {
        PluginLookup.requireDistinct(types.map { $0.name }, kind: "transport")
        self.types = types
    }

    /// The registered names, in order.
    public var names: [String] { self.types.map { $0.name } }

    /// Makes the transport called `name`.
    public func make(_ name: String, options: TransportOptions) throws -> any Transport {
        let type = try PluginLookup.find(
            name,
            in: self.types,
            names: self.names,
            kind: "transport",
            plural: "transports"
        )
        return try type.init(options: options)
    }
}
