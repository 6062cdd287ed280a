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
        SocketConnection(client: self, link: try await self.open(recorder: &recorder))
    }

    /// Opens one channel, ready for requests.
    func open<R: StepRecorder>(recorder: inout R) async throws -> SocketConnection.Link {
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
            // A server that accepts but never finishes the handshake must not hang `connect`.
            let timer = channel.eventLoop.scheduleTask(in: self.responseTimeout.timeAmount) {
                channel.close(promise: nil)
            }
            done.whenComplete { _ in timer.cancel() }
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
        let address = ServerStepMailbox.key(channel.localAddress)
        return SocketConnection.Link(channel: channel, address: address, box: self.mailbox?.open(address: address))
    }

    var peer: String { "\(self.host):\(self.port)" }
}

/// One client connection over a socket: each request is a frame out and a frame back,
/// matched in order by NIO Extras' `RequestResponseHandler`.
///
/// A connection the server closed while it was idle (its idle timeout, say) is reopened
/// before the next request, with the `connect` recorded, as keep-alive clients do; one that
/// fails with a request in flight fails that request.
final class SocketConnection: Connection {
    /// One open channel, its local address, and its box in the step mailbox.
    struct Link: Sendable {
        let channel: any Channel
        let address: String
        let box: ServerStepMailbox.Box?
    }

    let client: SocketClient
    private let link: Mutex<Link?>

    init(client: SocketClient, link: Link) {
        self.client = client
        self.link = Mutex(link)
    }

    func request<R: StepRecorder>(_ body: [UInt8], recorder: inout R) async throws -> [UInt8] {
        guard var link = self.link.withLock({ $0 }) else {
            throw LabError(.connectionClosed, "The connection to \(self.client.peer) was closed by the client")
        }
        if !link.channel.isActive {
            if let box = link.box { self.client.mailbox?.close(box, address: link.address) }
            link = try await self.client.open(recorder: &recorder)
            self.link.withLock { $0 = link }
        }
        let channel = link.channel
        let promise = channel.eventLoop.makePromise(of: ByteBuffer.self)
        let expired = TimeoutFlag()
        let timer = channel.eventLoop.scheduleTask(in: self.client.responseTimeout.timeAmount) {
            expired.set()
            channel.close(promise: nil)
        }
        // Cancelled on the event loop as the answer arrives, so it cannot fire in between.
        promise.futureResult.whenComplete { _ in timer.cancel() }
        // If the write cannot happen (the channel closed first), the handler never sees the
        // promise: fail it here, or the request would wait forever.
        let written = channel.eventLoop.makePromise(of: Void.self)
        written.futureResult.whenFailure { promise.fail($0) }
        channel.writeAndFlush((ByteBuffer(bytes: body), promise), promise: written)
        let response: ByteBuffer
        do {
            response = try await promise.futureResult.get()
        } catch {
            throw self.failure(error, timedOut: expired.isSet)
        }
        if let timings = link.box?.take() {
            for (step, nanoseconds) in timings.entries {
                recorder.record(step, nanoseconds: nanoseconds)
            }
        }
        return Array(response.readableBytesView)
    }

    private func failure(_ error: any Error, timedOut: Bool) -> LabError {
        if let error = error as? LabError { return error }
        let peer = self.client.peer
        if timedOut {
            return LabError(.timedOut, "No answer from \(peer) within \(self.client.responseTimeout)")
        }
        if error is NIOExtrasErrors.ClosedBeforeReceivingResponse || error as? ChannelError == .ioOnClosedChannel
            || error as? ChannelError == .alreadyClosed
        {
            return LabError(.connectionClosed, "\(peer) closed the connection before answering")
        }
        return LabError(
            .connectionClosed,
            "The connection to \(peer) failed",
            cause: UnderlyingError(describing: error)
        )
    }

    func close() async {
        guard
            let link = self.link.withLock({ link in
                defer { link = nil }
                return link
            })
        else { return }
        if let box = link.box { self.client.mailbox?.close(box, address: link.address) }
        try? await link.channel.close()
    }
}

/// Whether one request's timer fired.
final class TimeoutFlag: Sendable {
    private let value = Atomic<Bool>(false)

    func set() { self.value.store(true, ordering: .relaxed) }

    var isSet: Bool { self.value.load(ordering: .relaxed) }
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
