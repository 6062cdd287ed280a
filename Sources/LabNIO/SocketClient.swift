import LabCore
import LabWire
import NIOCore
import NIOExtras
import NIOPosix
import NIOSSL
import NIOTLS
import Synchronization

/// Opens client connections to one server address, plain or TLS with a pin.
struct SocketClient: Sendable {
    /// A TLS client's context and the pin it enforces.
    struct Security: Sendable {
        let context: NIOSSLContext
        let pin: LoadedPin
    }

    let host: String
    let port: Int
    let framing: Framing
    /// How long a request may wait for its answer before the connection is given up.
    let responseTimeout: TimeSpan
    let security: Security?
    /// Set when the server runs in this process: its steps come back with each answer.
    let mailbox: ServerStepMailbox?

    static func security(pin: LoadedPin) throws -> Security {
        var configuration = TLSConfiguration.makeClientConfiguration()
        // The pin check below replaces chain and host-name verification entirely; it is only
        // called when verification is on, so keep it on but without host names.
        configuration.certificateVerification = .noHostnameVerification
        configuration.minimumTLSVersion = .tlsv12
        do {
            return Security(context: try NIOSSLContext(configuration: configuration), pin: pin)
        } catch {
            throw LabError(.handshakeFailed, "Cannot set up the TLS client", cause: UnderlyingError(describing: error))
        }
    }

    /// Connects (TCP, then the TLS handshake and pin check), recording `connect`.
    func connect<R: StepRecorder>(recorder: inout R) async throws -> SocketConnection {
        let start = Stopwatch.now()
        let check = self.security.map { PinCheck(pin: $0.pin) }
        let handshake = HandshakeBox()
        let framing = self.framing
        let security = self.security
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .connectTimeout(.seconds(10))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let pipeline = channel.pipeline.syncOperations
                        if let security, let check {
                            try pipeline.addHandler(
                                NIOSSLClientHandler(
                                    context: security.context,
                                    serverHostname: nil,
                                    customVerificationCallback: check.verify
                                )
                            )
                            let promise = channel.eventLoop.makePromise(of: Void.self)
                            handshake.set(promise.futureResult)
                            try pipeline.addHandler(HandshakeWaiter(promise: promise))
                        }
                        try pipeline.addHandler(ByteToMessageHandler(FrameDecoder(framing: framing)))
                        try pipeline.addHandler(MessageToByteHandler(FrameEncoder(framing: framing)))
                        try pipeline.addHandler(RequestResponseHandler<ByteBuffer, ByteBuffer>())
                    }
                }
                .connect(host: self.host, port: self.port)
                .get()
        } catch {
            throw LabError(
                .connectFailed,
                "Cannot connect to \(self.host):\(self.port)",
                cause: UnderlyingError(describing: error)
            )
        }
        if let check, let done = handshake.get() {
            do {
                try await done.get()
            } catch {
                try? await channel.close()
                if let refusal = check.refusal {
                    throw LabError(
                        .pinMismatch,
                        "The server at \(self.host):\(self.port) presented \(refusal); the scenario pins \(check.pin). "
                            + "Refused before any request was sent"
                    )
                }
                throw LabError(
                    .handshakeFailed,
                    "The TLS handshake with \(self.host):\(self.port) failed",
                    cause: UnderlyingError(describing: error)
                )
            }
        }
        recorder.record(.connect, nanoseconds: Stopwatch.now() &- start)
        let localPort = channel.localAddress?.port ?? -1
        self.mailbox?.open(port: localPort)
        return SocketConnection(
            channel: channel,
            localPort: localPort,
            responseTimeout: self.responseTimeout,
            mailbox: self.mailbox,
            peer: "\(self.host):\(self.port)"
        )
    }
}

/// One client connection over a socket: each request is a frame out and a frame back,
/// matched in order by NIO Extras' `RequestResponseHandler`.
final class SocketConnection: Connection {
    let channel: any Channel
    let localPort: Int
    let responseTimeout: TimeSpan
    let mailbox: ServerStepMailbox?
    let peer: String
    private let timedOut = Atomic<Bool>(false)

    init(channel: any Channel, localPort: Int, responseTimeout: TimeSpan, mailbox: ServerStepMailbox?, peer: String) {
        self.channel = channel
        self.localPort = localPort
        self.responseTimeout = responseTimeout
        self.mailbox = mailbox
        self.peer = peer
    }

    func request<R: StepRecorder>(_ body: [UInt8], recorder: inout R) async throws -> [UInt8] {
        let channel = self.channel
        let promise = channel.eventLoop.makePromise(of: ByteBuffer.self)
        let timer = channel.eventLoop.scheduleTask(in: self.responseTimeout.timeAmount) { [self] in
            self.timedOut.store(true, ordering: .relaxed)
            channel.close(promise: nil)
        }
        channel.writeAndFlush((ByteBuffer(bytes: body), promise), promise: nil)
        let response: ByteBuffer
        do {
            response = try await promise.futureResult.get()
            timer.cancel()
        } catch {
            timer.cancel()
            throw self.failure(error)
        }
        if let mailbox = self.mailbox, let timings = mailbox.take(port: self.localPort) {
            for (step, nanoseconds) in timings.entries {
                recorder.record(step, nanoseconds: nanoseconds)
            }
        }
        return Array(response.readableBytesView)
    }

    private func failure(_ error: any Error) -> LabError {
        if let error = error as? LabError { return error }
        if self.timedOut.load(ordering: .relaxed) {
            return LabError(.timedOut, "No answer from \(self.peer) within \(self.responseTimeout)")
        }
        if error is NIOExtrasErrors.ClosedBeforeReceivingResponse || error as? ChannelError == .ioOnClosedChannel
            || error as? ChannelError == .alreadyClosed
        {
            return LabError(.connectionClosed, "\(self.peer) closed the connection before answering")
        }
        return LabError(
            .connectionClosed,
            "The connection to \(self.peer) failed",
            cause: UnderlyingError(describing: error)
        )
    }

    func close() async {
        self.mailbox?.close(port: self.localPort)
        try? await self.channel.close()
    }
}

/// Where the channel initializer leaves the handshake's future for the connecting task.
final class HandshakeBox: Sendable {
    private let future = Mutex<EventLoopFuture<Void>?>(nil)

    func set(_ future: EventLoopFuture<Void>) {
        self.future.withLock { $0 = future }
    }

    func get() -> EventLoopFuture<Void>? {
        self.future.withLock { $0 }
    }
}

/// Completes a promise when the TLS handshake finishes, or fails it if the connection ends or
/// errs first: `connect` then returns only a connection that is ready to carry requests.
final class HandshakeWaiter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private var promise: EventLoopPromise<Void>?

    init(promise: EventLoopPromise<Void>) {
        self.promise = promise
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted = event {
            self.promise?.succeed()
            self.promise = nil
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        self.promise?.fail(error)
        self.promise = nil
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.promise?.fail(ChannelError.eof)
        self.promise = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.promise?.fail(ChannelError.ioOnClosedChannel)
        self.promise = nil
    }
}
