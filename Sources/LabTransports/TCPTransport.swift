public import LabCore
public import LabFraming
import LabWire
public import Logging

/// The `tcp` transport: cx/1 frames over plain TCP sockets (SwiftNIO).
///
/// `serve` starts a `SocketServer` in this process (on loopback by default); `remote` reaches
/// a server elsewhere, e.g. a `lab serve` found by DNS-SD. It takes a layer under its frames
/// (`LayeredTransport`): `TLSTransport` is this transport with TLS there.
public struct TCPTransport: LayeredTransport {
    /// `tcp`.
    public static let name = "tcp"
    /// Crosses a socket.
    public static let usesNetwork = true

    /// The scenario's settings.
    public let options: TransportOptions
    /// The framing both sides use.
    public let framing: Framing
    /// Where the server logs connection events.
    public let logger: Logger

    /// A transport with the scenario's settings; the server logs as `lab.server`.
    public init(options: TransportOptions) throws {
        try self.init(options: options, logger: Logger(label: "lab.server"))
    }

    /// A transport whose server logs to `logger`.
    public init(options: TransportOptions, logger: Logger) throws {
        self.options = options
        self.framing = Framing(style: options.framing, maxFrameBytes: options.maxFrameBytes)
        self.logger = logger
    }

    /// Serves `handler` on the configured address; the endpoint's clients get the server's
    /// steps with every answer.
    public func serve(_ handler: any FrameHandler) async throws -> any TransportEndpoint {
        try await self.serve(handler, server: nil, client: nil)
    }

    /// A server for `lab serve`: no client of this process, steps totalled in `recorder`.
    public func listen(_ handler: any FrameHandler, recorder: (any ServerRecorder)?) async throws -> any ListeningServer {
        try await self.listen(handler, recorder: recorder, layer: nil)
    }

    /// `listen` with `layer` under every connection's frames.
    public func listen(
        _ handler: any FrameHandler,
        recorder: (any ServerRecorder)?,
        layer: (any ServerChannelLayer)?
    ) async throws -> any ListeningServer {
        try await SocketServer.start(
            handler: handler,
            configuration: self.serverConfiguration(layer: layer),
            recording: recorder
        )
    }

    /// Reaches the server at `host`:`port`.
    public func remote(host: String, port: Int) async throws -> any TransportEndpoint {
        try await self.remote(host: host, port: port, layer: nil)
    }

    /// `remote`, with `layer` under every connection's frames.
    public func remote(host: String, port: Int, layer: (any ClientChannelLayer)?) async throws -> any TransportEndpoint {
        SocketEndpoint(client: self.client(host: host, port: port, layer: layer, mailbox: nil), server: nil)
    }

    /// A server elsewhere, reached from the local address `source` (one of this host's; on
    /// loopback any of 127.0.0.0/8): what a test needs to be two clients the server tells apart.
    public func remote(host: String, port: Int, from source: String) async throws -> any TransportEndpoint {
        var client = self.client(host: host, port: port, layer: nil, mailbox: nil)
        client.sourceAddress = source
        return SocketEndpoint(client: client, server: nil)
    }

    func serverConfiguration(layer: (any ServerChannelLayer)?) -> SocketServer.Configuration {
        var configuration = SocketServer.Configuration(
            framing: self.framing,
            host: self.options.host,
            port: self.options.port,
            idleTimeout: self.options.idleTimeout,
            frameTimeout: self.options.frameTimeout,
            maxConnections: self.options.maxConnections,
            layer: layer,
            logger: self.logger,
            maxBufferedBytes: self.options.maxBufferedBytes
        )
        configuration.readsPackets = self.options.readsPackets
        return configuration
    }

    /// `serve`, with `server` under the server's frames and `client` under its clients'; the
    /// endpoint's clients get the server's steps with every answer.
    public func serve(
        _ handler: any FrameHandler,
        server: (any ServerChannelLayer)?,
        client: (any ClientChannelLayer)?
    ) async throws -> any TransportEndpoint {
        let mailbox = ServerStepMailbox(readsUsage: self.options.readsUsage)
        let socket = try await SocketServer.start(
            handler: handler,
            configuration: self.serverConfiguration(layer: server),
            recording: nil,
            mailbox: mailbox
        )
        return SocketEndpoint(
            client: self.client(host: Self.connectHost(socket.host), port: socket.port, layer: client, mailbox: mailbox),
            server: socket
        )
    }

    func client(host: String, port: Int, layer: (any ClientChannelLayer)?, mailbox: ServerStepMailbox?) -> SocketClient {
        SocketClient(
            host: host,
            port: port,
            framing: self.framing,
            responseTimeout: self.options.idleTimeout,
            layer: layer,
            mailbox: mailbox
        )
    }

    /// Where a client of this process reaches a server listening on `host`.
    static func connectHost(_ host: String) -> String {
        switch host {
        case "0.0.0.0", "": "127.0.0.1"
        case "::": "::1"
        default: host
        }
    }
}
