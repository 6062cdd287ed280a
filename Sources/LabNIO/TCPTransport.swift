public import LabCore
public import LabWire
public import Logging

/// The `tcp` transport: cx/1 frames over plain TCP sockets (SwiftNIO).
///
/// `serve` starts a `SocketServer` in this process (on loopback by default); `remote` reaches
/// a server elsewhere, e.g. a `lab serve` found by DNS-SD.
public struct TCPTransport: Transport {
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
        try await self.serve(handler, identity: nil, pin: nil)
    }

    /// A server for `lab serve`: no client of this process, steps totalled in `recorder`.
    public func listen(_ handler: any FrameHandler, recorder: (any ServerRecorder)?) async throws -> any ListeningServer {
        try await self.startServer(handler, recording: recorder)
    }

    /// `listen`, typed.
    public func startServer(_ handler: any FrameHandler, recording: (any ServerRecorder)?) async throws -> SocketServer {
        try await SocketServer.start(
            handler: handler,
            configuration: self.serverConfiguration(identity: nil),
            recording: recording
        )
    }

    /// Reaches the server at `host`:`port`.
    public func remote(host: String, port: Int) async throws -> any TransportEndpoint {
        SocketEndpoint(client: self.client(host: host, port: port, security: nil, mailbox: nil), server: nil)
    }

    /// A server elsewhere, reached from the local address `source` (one of this host's; on
    /// loopback any of 127.0.0.0/8): what a test needs to be two clients the server tells apart.
    public func remote(host: String, port: Int, from source: String) async throws -> any TransportEndpoint {
        var client = self.client(host: host, port: port, security: nil, mailbox: nil)
        client.sourceAddress = source
        return SocketEndpoint(client: client, server: nil)
    }

    func serverConfiguration(identity: TLSIdentity?) -> SocketServer.Configuration {
        SocketServer.Configuration(
            framing: self.framing,
            host: self.options.host,
            port: self.options.port,
            idleTimeout: self.options.idleTimeout,
            frameTimeout: self.options.frameTimeout,
            maxConnections: self.options.maxConnections,
            tls: identity,
            tlsGroups: self.options.tls.groups,
            tlsVersion: self.options.tls.version,
            logger: self.logger,
            maxBufferedBytes: self.options.maxBufferedBytes
        )
    }

    func serve(
        _ handler: any FrameHandler,
        identity: TLSIdentity?,
        pin: LoadedPin?
    ) async throws
        -> any TransportEndpoint
    {
        let mailbox = ServerStepMailbox()
        let server = try await SocketServer.start(
            handler: handler,
            configuration: self.serverConfiguration(identity: identity),
            recording: nil,
            mailbox: mailbox
        )
        let security = try pin.map { try SocketClient.security(pin: $0, settings: self.options.tls) }
        return SocketEndpoint(
            client: self.client(
                host: Self.connectHost(server.host),
                port: server.port,
                security: security,
                mailbox: mailbox
            ),
            server: server
        )
    }

    func client(
        host: String,
        port: Int,
        security: SocketClient.Security?,
        mailbox: ServerStepMailbox?
    )
        -> SocketClient
    {
        SocketClient(
            host: host,
            port: port,
            framing: self.framing,
            responseTimeout: self.options.idleTimeout,
            security: security,
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
