import LabCore
import LabFraming
import LabWire
import NIOCore
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
    /// The local address connections come from (any port), or nil for the system's choice.
    var sourceAddress: String? = nil

    static func security(pin: LoadedPin, settings: TLSSettings = TLSSettings()) throws -> Security {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.restrict(groups: settings.groups, version: settings.version)
        // The pin check below replaces chain and host-name verification entirely; it is only
        // called when verification is on, so keep it on but without host names.
        configuration.certificateVerification = .noHostnameVerification
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
        let handshake = InitializerBox<EventLoopFuture<Void>>()
        let seen = self.security == nil ? nil : HandshakeRecord()
        // Kept from the initializer: a server that answers and closes at once (busy) may have
        // the pipeline torn down before this task could look the handler up.
        let answerBox = InitializerBox<NIOLoopBound<AnswerHandler>>()
        let framing = self.framing
        let security = self.security
        let peer = self.peer
        let timeout = self.responseTimeout
        let channel: any Channel
        do {
            var bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            if let source = self.sourceAddress {
                bootstrap = bootstrap.bind(to: try SocketAddress(ipAddress: source, port: 0))
            }
            channel = try await bootstrap
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .connectTimeout(.seconds(10))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let pipeline = channel.pipeline.syncOperations
                        if let security, let check {
                            // First: it reads the server's bytes before the TLS handler does.
                            let counter = seen.map(WireCounter.init(record:))
                            if let seen, let counter {
                                try pipeline.addHandler(counter)
                                try pipeline.addHandler(HandshakeObserver(record: seen))
                            }
                            try pipeline.addHandler(
                                NIOSSLClientHandler(
                                    context: security.context,
                                    serverHostname: nil,
                                    customVerificationCallback: check.verify
                                )
                            )
                            let promise = channel.eventLoop.makePromise(of: Void.self)
                            handshake.set(promise.futureResult)
                            try pipeline.addHandler(HandshakeWaiter(promise: promise, record: seen, counter: counter))
                        }
                        try pipeline.addHandler(ByteToMessageHandler(FrameDecoder(framing: framing)))
                        try pipeline.addHandler(MessageToByteHandler(FrameEncoder(framing: framing)))
                        let answers = AnswerHandler(peer: peer, timeout: timeout)
                        answerBox.set(NIOLoopBound(answers, eventLoop: channel.eventLoop))
                        try pipeline.addHandler(answers)
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
            try await self.awaitHandshake(done, on: channel, check: check)
        }
        guard let answers = answerBox.get() else {
            throw LabError(.connectionClosed, "The connection to \(self.peer) closed as it opened")
        }
        let end = Stopwatch.now()
        recorder.record(.connect, nanoseconds: end &- start)
        if let seen {
            if let handshake = seen.handshakeNanoseconds { recorder.record(.handshake, nanoseconds: handshake) }
            if let bytes = seen.handshakeBytes {
                recorder.transferred(.handshake, sent: bytes.sent, received: bytes.received)
            }
            for outcome in seen.negotiated?.outcomes ?? ["tls.unread"] { recorder.count(outcome, by: 1) }
        }
        let address = ServerStepMailbox.key(channel.localAddress)
        return SocketConnection.Link(
            channel: channel,
            answers: answers,
            address: address,
            box: self.mailbox?.open(address: address)
        )
    }

    /// Waits for the TLS handshake, closing the channel if it fails or takes longer than the
    /// response timeout (a server that accepts but never finishes it must not hang `connect`);
    /// a pin refused is `pinMismatch`, any other failure `handshakeFailed`.
    private func awaitHandshake(_ done: EventLoopFuture<Void>, on channel: any Channel, check: PinCheck) async throws {
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

    var peer: String { "\(self.host):\(self.port)" }
}

/// One client connection over a socket: each request is a frame out and a frame back, one at
/// a time, through the connection's `AnswerHandler`.
///
/// A connection the server closed while it was idle (its idle timeout, say) is reopened
/// before the next request, with the `connect` recorded, as keep-alive clients do; one that
/// fails with a request in flight fails that request.
final class SocketConnection: Connection {
    /// One open channel, its local address, and its box in the step mailbox.
    struct Link: Sendable {
        let channel: any Channel
        let answers: NIOLoopBound<AnswerHandler>
        let address: String
        let box: ServerStepMailbox.Box?
    }

    let client: SocketClient
    private let link: Mutex<Link?>

    init(client: SocketClient, link: Link) {
        self.client = client
        self.link = Mutex(link)
    }

    func request<R: StepRecorder>(_ body: [UInt8], step: Step, recorder: inout R) async throws -> [UInt8] {
        guard var link = self.link.withLock({ $0 }) else {
            throw LabError(.connectionClosed, "The connection to \(self.client.peer) was closed by the client")
        }
        if !link.channel.isActive, await !Self.holdsEarlyAnswer(link) {
            if let box = link.box { self.client.mailbox?.close(box, address: link.address) }
            link = try await self.client.open(recorder: &recorder)
            self.link.withLock { $0 = link }
        }
        let channel = link.channel
        let answers = link.answers
        let frame = ByteBuffer(bytes: body)
        let answer: AnswerHandler.Answer
        do {
            answer = try await withUnsafeThrowingContinuation { continuation in
                if channel.eventLoop.inEventLoop {
                    answers.value.send(frame, to: continuation)
                } else {
                    channel.eventLoop.execute { answers.value.send(frame, to: continuation) }
                }
            }
        } catch {
            // The handler closes the connection on every failure; once that close is done, the
            // next request sees it and opens a new one instead of meeting this failure again.
            try? await channel.close()
            throw error
        }
        if let timings = link.box?.take() {
            for (step, sample) in timings.samples {
                recorder.record(step, sample: sample)
            }
        }
        // The frames as the socket carried them: the length header, then the body; none sent
        // when the server had refused the connection before any request.
        let header = self.client.framing.style.headerBytes
        recorder.transferred(
            step,
            sent: answer.requestSent ? header + body.count : 0,
            received: header + answer.body.readableBytes
        )
        return Array(answer.body.readableBytesView)
    }

    /// Whether the server answered before any request (a `busy` refusal) on a connection it
    /// then closed: that answer is the next request's, not a reason to connect again.
    private static func holdsEarlyAnswer(_ link: Link) async -> Bool {
        let answers = link.answers
        return (try? await link.channel.eventLoop.submit { answers.value.holdsEarlyAnswer }.get()) ?? false
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

/// Where the channel initializer leaves something (the handshake's future, the answer
/// handler) for the connecting task.
final class InitializerBox<Value: Sendable>: Sendable {
    private let value = Mutex<Value?>(nil)

    func set(_ value: Value) {
        self.value.withLock { $0 = value }
    }

    func get() -> Value? {
        self.value.withLock { $0 }
    }
}

/// Completes a promise when the TLS handshake finishes, or fails it if the connection ends or
/// errs first: `connect` then returns only a connection that is ready to carry requests.
final class HandshakeWaiter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private var promise: EventLoopPromise<Void>?
    /// Where the completion's moment goes (the `handshake` step ends there, not when the
    /// awaiting task next runs).
    private let record: HandshakeRecord?
    /// The handshake's byte counter, taken out of the pipeline once it has counted: the
    /// connection's requests need not pay for it.
    private let counter: WireCounter?

    init(promise: EventLoopPromise<Void>, record: HandshakeRecord? = nil, counter: WireCounter? = nil) {
        self.promise = promise
        self.record = record
        self.counter = counter
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted = event {
            self.record?.completed(at: Stopwatch.now())
            if let counter = self.counter { context.pipeline.syncOperations.removeHandler(counter, promise: nil) }
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
