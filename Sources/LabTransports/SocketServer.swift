public import LabCore
public import LabFraming
import LabWire
public import Logging
import NIOCore
import NIOPosix
import Synchronization

/// A cx/1 (or any framed) server on SwiftNIO: one listener, each accepted connection served
/// by its own task through `NIOAsyncChannel`, independent of every other.
///
/// A connection ends, with its reason logged, on a zero or oversized length (before the body
/// is read), on a body the handler answers with an error, on an idle peer, on a TLS failure,
/// or when the peer leaves; the listener and the other connections carry on.
public final class SocketServer: ListeningServer {
    /// How a server listens and what it tolerates.
    public struct Configuration: Sendable {
        /// The framing and frame limit.
        public var framing: Framing
        /// The address to listen on.
        public var host: String
        /// The port; 0 picks a free one.
        public var port: Int
        /// How long a connection may send nothing before it is closed.
        public var idleTimeout: TimeSpan
        /// How long one frame may take to arrive, from its first byte to its last, however
        /// steadily its bytes trickle in (a slow-loris peer); the connection is then closed.
        public var frameTimeout: TimeSpan
        /// Connections served at once; one more is answered `busy` and closed.
        public var maxConnections: Int
        /// What each connection puts under its frames (TLS), or nil for frames on the socket.
        public var layer: (any ServerChannelLayer)?
        /// Where connection events go.
        public var logger: Logger
        /// The bytes frames still arriving may hold across every connection.
        public var maxBufferedBytes: Int
        /// Whether each connection's TCP counters are read at every request (`StepPackets`).
        public var readsPackets: Bool = false

        /// A configuration.
        public init(
            framing: Framing = .standard,
            host: String = "127.0.0.1",
            port: Int = 0,
            idleTimeout: TimeSpan = .seconds(30),
            frameTimeout: TimeSpan = .seconds(30),
            maxConnections: Int = TransportOptions.defaultMaxConnections,
            layer: (any ServerChannelLayer)? = nil,
            logger: Logger = Logger(label: "lab.server"),
            maxBufferedBytes: Int = TransportOptions.defaultMaxBufferedBytes
        ) {
            self.framing = framing
            self.host = host
            self.port = port
            self.idleTimeout = idleTimeout
            self.frameTimeout = frameTimeout
            self.maxConnections = maxConnections
            self.layer = layer
            self.logger = logger
            self.maxBufferedBytes = maxBufferedBytes
        }
    }

    /// The bound host.
    public let host: String
    /// The bound port (the one picked, when 0 was asked).
    public let port: Int
    /// What the server measured, if asked to record into a `ServerRecording`.
    public var recording: ServerRecording? { self.recorder as? ServerRecording }
    /// Where the server totals what it served, if anywhere.
    let recorder: (any ServerRecorder)?
    let mailbox: ServerStepMailbox?
    private let listener: any Channel
    private let connections: ConnectionSet
    private let acceptLoop: Task<Void, Never>
    private let logger: Logger

    /// Binds and starts serving `handler`.
    ///
    /// - Parameters:
    ///   - recording: where to total the server's steps and connection outcomes, if anywhere.
    ///   - mailbox: hands each exchange's steps to a client in this process (internal).
    public static func start(
        handler: any FrameHandler,
        configuration: Configuration,
        recording: (any ServerRecorder)? = nil
    ) async throws -> SocketServer {
        try await Self.start(handler: handler, configuration: configuration, recording: recording, mailbox: nil)
    }

    static func start(
        handler: any FrameHandler,
        configuration: Configuration,
        recording: (any ServerRecorder)?,
        mailbox: ServerStepMailbox?
    ) async throws -> SocketServer {
        let connections = ConnectionSet(
            limit: configuration.maxConnections,
            unreadLimit: max(configuration.maxBufferedBytes, configuration.framing.maxFrameBytes + 16)
        )
        // A frame of the largest size always fits an otherwise empty budget.
        let budget = BufferBudget(
            limit: max(configuration.maxBufferedBytes, configuration.framing.maxFrameBytes + 16)
        )
        let logger = configuration.logger
        let listener: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>
        do {
            listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.backlog, value: 1024)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .serverChannelInitializer { listener in
                    // Before NIO's own `AcceptBackoffHandler`, which waits a second after each
                    // failed accept but keeps the reason to itself.
                    listener.eventLoop.makeCompletedFuture {
                        try listener.pipeline.syncOperations.addHandler(
                            AcceptErrorLog(logger: configuration.logger, what: "the listener")
                        )
                    }
                }
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                .bind(host: configuration.host, port: configuration.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try Self.connectionPipeline(
                            channel,
                            configuration: configuration,
                            connections: connections,
                            budget: budget
                        )
                    }
                }
        } catch {
            throw LabError(
                .connectFailed,
                "Cannot listen on \(configuration.host):\(configuration.port)",
                cause: UnderlyingError(describing: error)
            )
        }
        guard let port = listener.channel.localAddress?.port else {
            throw LabError(.connectFailed, "The listener on \(configuration.host) has no port")
        }
        let acceptLoop = Task {
            await Self.accept(
                listener,
                handler: handler,
                connections: connections,
                recording: recording,
                mailbox: mailbox,
                layer: configuration.layer,
                readsPackets: configuration.readsPackets,
                logger: logger
            )
        }
        logger.debug(
            "listening",
            metadata: ["address": "\(configuration.host):\(port)", "layer": "\(configuration.layer?.name ?? "none")"]
        )
        return SocketServer(
            host: configuration.host,
            port: port,
            recording: recording,
            mailbox: mailbox,
            listener: listener.channel,
            connections: connections,
            acceptLoop: acceptLoop,
            logger: logger
        )
    }

    /// An accepted connection's pipeline, on its event loop: the layer (TLS) if any, the idle
    /// and frame timeouts, the frame codec; wrapped for the connection's task.
    static func connectionPipeline(
        _ channel: any Channel,
        configuration: Configuration,
        connections: ConnectionSet,
        budget: BufferBudget? = nil
    ) throws -> NIOAsyncChannel<ByteBuffer, ByteBuffer> {
        let pipeline = channel.pipeline.syncOperations
        try configuration.layer?.addHandlers(to: pipeline)
        let idle = configuration.idleTimeout
        try pipeline.addHandler(IdleStateHandler(allTimeout: idle.timeAmount))
        try pipeline.addHandler(RequestArrivalHandler(connections: connections, logger: configuration.logger))
        try pipeline.addHandler(
            ByteToMessageHandler(
                FrameDecoder(framing: configuration.framing, frameTimeout: configuration.frameTimeout, budget: budget)
            )
        )
        try pipeline.addHandler(MessageToByteHandler(FrameEncoder(framing: configuration.framing)))
        if let budget { try pipeline.addHandler(FrameBudgetHandler(budget: budget, framing: configuration.framing)) }
        try pipeline.addHandler(AnswerTakenHandler(connections: connections))
        try pipeline.addHandler(IdleTimeoutHandler(timeout: idle, connections: connections))
        // The server answers a connection's requests one at a time: reading more than two
        // ahead only holds memory (each is held against the budget until answered).
        return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(
            wrappingChannelSynchronously: channel,
            configuration: .init(backPressureStrategy: .init(lowWatermark: 1, highWatermark: 2))
        )
    }

    private init(
        host: String,
        port: Int,
        recording: (any ServerRecorder)?,
        mailbox: ServerStepMailbox?,
        listener: any Channel,
        connections: ConnectionSet,
        acceptLoop: Task<Void, Never>,
        logger: Logger
    ) {
        self.host = host
        self.port = port
        self.recorder = recording
        self.mailbox = mailbox
        self.listener = listener
        self.connections = connections
        self.acceptLoop = acceptLoop
        self.logger = logger
    }

    /// `host:port`.
    public var address: String { "\(self.host):\(self.port)" }

    /// Stops accepting, closes every open connection and waits until all have ended.
    ///
    /// With a `grace` period, shutdown drains first: idle connections close at once, and a
    /// connection inside its handler (an exchange that began before the shutdown) finishes
    /// that answer, writes it and then closes; what is still open when `grace` is over is
    /// closed as without one. The log says how many connections were answering, and whether
    /// they all finished.
    public func shutdown(grace: Duration = .zero) async {
        try? await self.listener.close()
        if grace > .zero {
            let (idle, answering) = self.connections.startDraining()
            for channel in idle { try? await channel.close() }
            if answering > 0 {
                self.logger.notice(
                    "draining: finishing the answers in flight",
                    metadata: ["answering": "\(answering)", "grace": "\(grace)"]
                )
            }
            let drained = await self.acceptLoopEnds(within: grace)
            if answering > 0 || !drained {
                self.logger.notice(
                    drained ? "drained: every answer in flight was written" : "the grace period is over",
                    metadata: ["still open": "\(self.connections.count)"]
                )
            }
        }
        for channel in self.connections.closeAll() {
            try? await channel.close()
        }
        // A connection task may still be inside its handler (a slow key generation, a test
        // stall): cancel rather than wait for it.
        self.acceptLoop.cancel()
        await self.acceptLoop.value
    }

    /// Whether the accept loop, and with it every connection's task, ended within `limit`.
    private func acceptLoopEnds(within limit: Duration) async -> Bool {
        let acceptLoop = self.acceptLoop
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                // Task.value does not end on cancellation; the caller cancels the accept loop
                // itself when the limit is over, which ends this wait.
                await acceptLoop.value
                return true
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                return false
            }
            let first = await group.next() ?? false
            if !first {
                for channel in self.connections.closeAll() { try? await channel.close() }
                acceptLoop.cancel()
            }
            group.cancelAll()
            return first
        }
    }
}
