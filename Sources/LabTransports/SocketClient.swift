import LabCore
import LabFraming
import LabWire
import NIOCore
import NIOPosix
import Synchronization

/// Opens client connections to one server address, plain or TLS with a pin.
struct SocketClient: Sendable {
    let host: String
    let port: Int
    let framing: Framing
    /// How long a request may wait for its answer before the connection is given up.
    let responseTimeout: TimeSpan
    /// What each connection puts under its frames (TLS with a pin), if anything.
    let layer: (any ClientChannelLayer)?
    /// Set when the server runs in this process: its steps come back with each answer.
    let mailbox: ServerStepMailbox?
    /// The local address connections come from (any port), or nil for the system's choice.
    var sourceAddress: String? = nil

    /// Connects (TCP, then the layer: the TLS handshake and pin check), recording `connect`.
    func connect<R: StepRecorder>(recorder: inout R) async throws -> SocketConnection {
        SocketConnection(client: self, link: try await self.open(recorder: &recorder))
    }

    /// Opens one channel, ready for requests.
    func open<R: StepRecorder>(recorder: inout R) async throws -> SocketConnection.Link {
        let start = Stopwatch.now()
        let session = self.layer?.session(peer: self.peer)
        // Kept from the initializer: a server that answers and closes at once (busy) may have
        // the pipeline torn down before this task could look the handler up.
        let answerBox = InitializerBox<NIOLoopBound<AnswerHandler>>()
        let framing = self.framing
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
                        try session?.addHandlers(to: channel)
                        let pipeline = channel.pipeline.syncOperations
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
        try await session?.ready(on: channel, timeout: self.responseTimeout)
        guard let answers = answerBox.get() else {
            throw LabError(.connectionClosed, "The connection to \(self.peer) closed as it opened")
        }
        let end = Stopwatch.now()
        recorder.record(.connect, nanoseconds: end &- start)
        session?.record(into: &recorder)
        if recorder.readsPackets, let read = TCPInfo.read(channel), let counters = try? await read.get() {
            // Everything so far: the SYN and its answer, and the TLS handshake if any.
            recorder.packets(session == nil ? .connect : .handshake, StepPackets(from: TCPCounters(), to: counters))
        }
        let address = ServerStepMailbox.key(channel.localAddress)
        return SocketConnection.Link(
            channel: channel,
            answers: answers,
            address: address,
            box: self.mailbox?.open(address: address)
        )
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
        let readingPackets = recorder.readsPackets
        let answer: AnswerHandler.Answer
        do {
            answer = try await withUnsafeThrowingContinuation { continuation in
                if channel.eventLoop.inEventLoop {
                    answers.value.send(frame, to: continuation, readingPackets: readingPackets)
                } else {
                    channel.eventLoop.execute {
                        answers.value.send(frame, to: continuation, readingPackets: readingPackets)
                    }
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
        if let packets = answer.packets { recorder.packets(step, packets) }
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
