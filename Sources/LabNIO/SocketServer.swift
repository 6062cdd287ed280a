public import LabCore
import LabFraming
public import LabWire
public import Logging
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// A cx/1 (or any framed) server on SwiftNIO: one listener, each accepted connection served
/// by its own task through `NIOAsyncChannel`, independent of every other.
///
/// A connection ends, with its reason logged, on a zero or oversized length (before the body
/// is read), on a body the handler answers with an error, on an idle peer, on a TLS failure,
/// or when the peer leaves; the listener and the other connections carry on.
public final class SocketServer: Sendable {
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
        /// The TLS identity, or nil for plain TCP.
        public var tls: TLSIdentity?
        /// Where connection events go.
        public var logger: Logger

        /// A configuration.
        public init(
            framing: Framing = .standard,
            host: String = "127.0.0.1",
            port: Int = 0,
            idleTimeout: TimeSpan = .seconds(30),
            frameTimeout: TimeSpan = .seconds(30),
            maxConnections: Int = TransportOptions.defaultMaxConnections,
            tls: TLSIdentity? = nil,
            logger: Logger = Logger(label: "lab.server")
        ) {
            self.framing = framing
            self.host = host
            self.port = port
            self.idleTimeout = idleTimeout
            self.frameTimeout = frameTimeout
            self.maxConnections = maxConnections
            self.tls = tls
            self.logger = logger
        }
    }

    /// The bound host.
    public let host: String
    /// The bound port (the one picked, when 0 was asked).
    public let port: Int
    /// What the server measured, if asked to record.
    public let recording: ServerRecording?
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
        recording: ServerRecording? = nil
    ) async throws -> SocketServer {
        try await Self.start(handler: handler, configuration: configuration, recording: recording, mailbox: nil)
    }

    static func start(
        handler: any FrameHandler,
        configuration: Configuration,
        recording: ServerRecording?,
        mailbox: ServerStepMailbox?
    ) async throws -> SocketServer {
        let sslContext: NIOSSLContext?
        if let identity = configuration.tls {
            do {
                var tls = TLSConfiguration.makeServerConfiguration(
                    certificateChain: identity.chain.map { .certificate($0) },
                    privateKey: .privateKey(identity.privateKey)
                )
                tls.minimumTLSVersion = .tlsv12
                sslContext = try NIOSSLContext(configuration: tls)
            } catch {
                throw LabError(
                    .handshakeFailed,
                    "Cannot set up TLS with the server's certificate and key",
                    cause: UnderlyingError(describing: error)
                )
            }
        } else {
            sslContext = nil
        }
        let framing = configuration.framing
        let idle = configuration.idleTimeout
        let frameTimeout = configuration.frameTimeout
        let connections = ConnectionSet(limit: configuration.maxConnections)
        let logger = configuration.logger
        let listener: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>
        do {
            listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.backlog, value: 1024)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                .bind(host: configuration.host, port: configuration.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let pipeline = channel.pipeline.syncOperations
                        if let sslContext {
                            try pipeline.addHandler(NIOSSLServerHandler(context: sslContext))
                        }
                        try pipeline.addHandler(IdleStateHandler(allTimeout: idle.timeAmount))
                        try pipeline.addHandler(RequestArrivalHandler(connections: connections, logger: logger))
                        try pipeline.addHandler(
                            ByteToMessageHandler(FrameDecoder(framing: framing, frameTimeout: frameTimeout))
                        )
                        try pipeline.addHandler(MessageToByteHandler(FrameEncoder(framing: framing)))
                        try pipeline.addHandler(IdleTimeoutHandler(timeout: idle))
                        return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
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
                logger: logger
            )
        }
        logger.debug(
            "listening",
            metadata: ["address": "\(configuration.host):\(port)", "tls": "\(sslContext != nil)"]
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

    private init(
        host: String,
        port: Int,
        recording: ServerRecording?,
        mailbox: ServerStepMailbox?,
        listener: any Channel,
        connections: ConnectionSet,
        acceptLoop: Task<Void, Never>,
        logger: Logger
    ) {
        self.host = host
        self.port = port
        self.recording = recording
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

    private static func accept(
        _ listener: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>,
        handler: any FrameHandler,
        connections: ConnectionSet,
        recording: ServerRecording?,
        mailbox: ServerStepMailbox?,
        logger: Logger
    ) async {
        do {
            try await withThrowingDiscardingTaskGroup { group in
                try await listener.executeThenClose { inbound in
                    for try await connection in inbound {
                        switch connections.insert(connection.channel) {
                        case .admitted:
                            break
                        case .busy(let limit):
                            recording?.refused(code: "busy")
                            let refusal = connections.startRefusal()
                            if refusal.logged {
                                logger.warning(
                                    "refusing connections: busy",
                                    metadata: ["limit": "\(limit)", "refused so far": "\(refusal.total)"]
                                )
                            }
                            guard refusal.answered else {
                                // Refusals already in flight: close without an answer, so that a
                                // flood of connections cannot hold more sockets this way either.
                                try? await connection.channel.close()
                                continue
                            }
                            group.addTask {
                                await Self.refuseBusy(connection, limit: limit, handler: handler)
                                connections.endRefusal()
                            }
                            continue
                        case .shuttingDown:
                            try? await connection.channel.close()
                            continue
                        }
                        group.addTask {
                            let record = recording?.open()
                            let closeCode = await Self.serve(
                                connection,
                                handler: handler,
                                connections: connections,
                                record: record,
                                mailbox: mailbox,
                                logger: logger
                            )
                            // The place is free before the close is counted: whoever awaits
                            // the count may connect again at once.
                            connections.remove(connection.channel)
                            if let record { recording?.close(record, code: closeCode) }
                        }
                    }
                }
            }
        } catch {
            logger.error("the listener failed", metadata: ["error": "\(error)"])
        }
    }

    /// Sends the handler's `busy` answer (docs/protocol.md §1.4), if it has one, and closes, within
    /// `ConnectionSet.refusalTimeout` (a TLS peer that never finishes its handshake included).
    private static func refuseBusy(
        _ connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>,
        limit: Int,
        handler: any FrameHandler
    ) async {
        let channel = connection.channel
        let deadline = channel.eventLoop.scheduleTask(in: ConnectionSet.refusalTimeout) {
            channel.close(promise: nil)
        }
        defer { deadline.cancel() }
        guard let body = handler.busyAnswer(connectionLimit: limit) else {
            try? await channel.close()
            return
        }
        try? await connection.executeThenClose { inbound, _ in
            // The answer, then a close of the output only, in this order on the channel itself
            // (the async writer could let the close overtake the answer); then read until the
            // peer closes (or the deadline). A TLS handler holds both the answer and the close
            // until its handshake ends, where a full close would drop them; and a socket
            // closed with the peer's request unread sends a reset, which can reach the peer
            // before it reads its answer.
            channel.writeAndFlush(ByteBuffer(bytes: body), promise: nil)
            channel.close(mode: .output, promise: nil)
            for try await _ in inbound {}
        }
    }

    /// Serves one connection until it ends; returns why it ended (the close code).
    private static func serve(
        _ connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>,
        handler: any FrameHandler,
        connections: ConnectionSet,
        record: ConnectionRecording?,
        mailbox: ServerStepMailbox?,
        logger: Logger
    ) async -> String {
        var logger = logger
        let peer = connection.channel.remoteAddress
        logger[metadataKey: "peer"] = "\(peer.map { "\($0.ipAddress ?? "?"):\($0.port ?? 0)" } ?? "?")"
        let peerKey = ServerStepMailbox.key(peer)
        // Looked up at the first answer (the client opened it before sending) and kept.
        var box: ServerStepMailbox.Box? = nil
        var closeCode = "peer-closed"
        do {
            try await connection.executeThenClose { inbound, outbound in
                for try await frame in inbound {
                    // Shutdown drains the connections with a request under way; it closes the others.
                    guard connections.startAnswer(connection.channel) else {
                        closeCode = "shutdown"
                        return
                    }
                    var timings = StepTimings()
                    let answer = await handler.respond(to: Array(frame.readableBytesView), recorder: &timings)
                    let group = answer.group ?? "-"
                    // An error answer is counted whether it closes the connection (cx/1's, by its
                    // reason's code) or not (msg/1's); the steps of one that keeps the
                    // connection open (a wrong password's KDF run) are the server's work too.
                    let errorCode = answer.closeReason.map { String($0.prefix { $0 != ":" }) } ?? answer.errorCode
                    record?.record(
                        answer.closeReason == nil ? timings : StepTimings(),
                        group: group,
                        error: errorCode
                    )
                    if box == nil { box = mailbox?.box(for: peerKey) }
                    box?.deposit(timings)
                    try await outbound.write(ByteBuffer(bytes: answer.body))
                    let staysOpen = connections.endAnswer(connection.channel)
                    if let reason = answer.closeReason {
                        closeCode = errorCode ?? "answered-error"
                        logger.warning(
                            "closing the connection after an error answer",
                            metadata: ["reason": "\(reason)"]
                        )
                        return
                    }
                    guard staysOpen else {
                        closeCode = "shutdown"
                        logger.debug("closing the connection after its answer: the server is shutting down")
                        return
                    }
                }
                logger.debug("the peer closed the connection")
            }
        } catch let error as LabError {
            closeCode = error.code.description
            logger.warning("closing the connection", metadata: ["reason": "\(error.code): \(error.message)"])
        } catch let error as NIOSSLError {
            closeCode = "tls"
            logger.warning("closing the connection: TLS failed", metadata: ["reason": "\(error)"])
        } catch let error as NIOSSLExtraError {
            closeCode = "tls"
            logger.warning("closing the connection: TLS failed", metadata: ["reason": "\(error)"])
        } catch {
            closeCode = "io"
            logger.notice("the connection failed", metadata: ["reason": "\(error)"])
        }
        return closeCode
    }
}
