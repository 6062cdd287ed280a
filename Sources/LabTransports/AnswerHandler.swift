import LabCore
import NIOCore

/// Carries one request at a time and resumes its waiter with the answer, or with why there
/// was none: the connection closed or failed first, or no answer came within the timeout.
///
/// The timeout has one timer per connection, not one per request: a request notes its
/// deadline, and the timer, when it fires, either finds the answer came (and sleeps until the
/// next request arms it), or a later request's deadline (and waits for that), or the request
/// overdue (and closes the connection). On loopback with 1,000 clients, a timer scheduled
/// and cancelled per request, with the futures around it and NIO Extras'
/// `RequestResponseHandler`, cost 3.8% of the CPU; this handler, 1.7% (perf, release).
final class AnswerHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    typealias Waiter = UnsafeContinuation<Answer, any Error>

    /// A request's answer, and whether the request itself went out: not when the server had
    /// answered before any request (a `busy` refusal), which is then this request's answer.
    struct Answer {
        var body: ByteBuffer
        var requestSent: Bool
        /// What TCP did from the request's write to its answer's arrival, when asked for.
        var packets: StepPackets? = nil
    }

    private let peer: String
    private let timeout: TimeSpan
    private var context: ChannelHandlerContext?
    private var waiter: Waiter?
    /// When the request in flight is overdue.
    private var deadline: NIODeadline?
    private var timerArmed = false
    /// Why no more requests can go, once the connection closed or failed.
    private var ended: LabError?
    /// A frame the server sent before any request (docs/protocol.md §2.3: a `busy` refusal comes
    /// at once, then the close); the first request gets it as its answer.
    private var early: ByteBuffer?
    private var sentAny = false
    /// The socket's TCP counters just before the request in flight went out, when it asked
    /// for its packets (`send(_:to:readingPackets:)`).
    private var packetsBefore: TCPCounters?

    var holdsEarlyAnswer: Bool { self.early != nil }

    init(peer: String, timeout: TimeSpan) {
        self.peer = peer
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.end(LabError(.connectionClosed, "\(self.peer) closed the connection before answering"))
        self.context = nil
    }

    /// Sends `frame` and has `waiter` resumed with its answer; with `readingPackets`, the
    /// answer carries what TCP did in between (`StepPackets`). On the event loop.
    func send(_ frame: ByteBuffer, to waiter: Waiter, readingPackets: Bool = false) {
        if let early = self.early {
            self.early = nil
            self.sentAny = true
            waiter.resume(returning: Answer(body: early, requestSent: false))
            return
        }
        guard let context, self.ended == nil else {
            waiter.resume(
                throwing: self.ended ?? LabError(.connectionClosed, "The connection to \(self.peer) is closed")
            )
            return
        }
        guard self.waiter == nil else {
            // Two requests at once on one connection: the lab never does this; refuse both.
            self.fail(LabError(.unsupported, "A second request was sent to \(self.peer) before the first was answered"))
            waiter.resume(throwing: self.ended ?? LabError(.unsupported, "A request was already waiting"))
            return
        }
        self.waiter = waiter
        self.sentAny = true
        self.deadline = .now() + self.timeout.timeAmount
        self.armTimer(context)
        self.packetsBefore = nil
        if readingPackets, let read = TCPInfo.read(context.channel) {
            read.assumeIsolated().whenSuccess { self.packetsBefore = $0 }
        }
        // A frame the encoder refuses (over the limit) fails here, not at the peer.
        context.writeAndFlush(self.wrapOutboundOut(frame)).assumeIsolated().whenFailure { error in
            self.fail(error)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let answer = self.unwrapInboundIn(data)
        guard let waiter = self.waiter else {
            if !self.sentAny, self.early == nil {
                self.early = answer
                return
            }
            self.fail(LabError(.malformedMessage, "\(self.peer) sent a frame no request asked for"))
            return
        }
        self.waiter = nil
        self.deadline = nil
        guard let before = self.packetsBefore, let read = TCPInfo.read(context.channel) else {
            waiter.resume(returning: Answer(body: answer, requestSent: true))
            return
        }
        self.packetsBefore = nil
        read.assumeIsolated().whenComplete { after in
            let packets = (try? after.get()).map { StepPackets(from: before, to: $0) }
            waiter.resume(returning: Answer(body: answer, requestSent: true, packets: packets))
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.end(LabError(.connectionClosed, "\(self.peer) closed the connection before answering"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        self.fail(error)
    }

    private func armTimer(_ context: ChannelHandlerContext) {
        guard !self.timerArmed, let deadline = self.deadline else { return }
        self.timerArmed = true
        context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { self.timerFired() }
    }

    private func timerFired() {
        self.timerArmed = false
        guard let context, let deadline = self.deadline else { return }
        if NIODeadline.now() < deadline {
            self.armTimer(context)
            return
        }
        self.fail(LabError(.timedOut, "No answer from \(self.peer) within \(self.timeout)"))
    }

    /// Fails the request in flight and closes the connection.
    private func fail(_ error: any Error) {
        self.end(Self.labError(error, peer: self.peer))
        self.context?.close(promise: nil)
    }

    private func end(_ error: LabError) {
        if self.ended == nil { self.ended = error }
        self.deadline = nil
        if let waiter = self.waiter {
            self.waiter = nil
            waiter.resume(throwing: self.ended ?? error)
        }
    }

    static func labError(_ error: any Error, peer: String) -> LabError {
        if let error = error as? LabError { return error }
        if error as? ChannelError == .ioOnClosedChannel || error as? ChannelError == .alreadyClosed
            || error as? ChannelError == .eof
        {
            return LabError(.connectionClosed, "\(peer) closed the connection before answering")
        }
        return LabError(
            .connectionClosed,
            "The connection to \(peer) failed",
            cause: UnderlyingError(describing: error)
        )
    }
}
