import LabCore
import Logging
import NIOCore
import Synchronization

/// The open connections, so that shutdown can close them, and their limit.
final class ConnectionSet: Sendable {
    private struct State {
        var channels: [ObjectIdentifier: any Channel] = [:]
        /// The connections with a request under way: its first bytes arrived, its answer is not
        /// yet written.
        var busy: Set<ObjectIdentifier> = []
        /// Why the server closed a connection, where the connection's task may not see it:
        /// a peer timed out for not reading is closed while its task waits to write.
        var closeReasons: [ObjectIdentifier: LabError] = [:]
        var closed = false
        var draining = false
        var refusing = 0
        var refused = 0
        /// Answer bytes each connection's task has produced that the kernel has not taken
        /// yet (the peer has not read them), and their sum.
        var unread: [ObjectIdentifier: Int] = [:]
        var unreadTotal = 0
    }

    /// Refusals answered at once at most; more are closed without an answer.
    static let refusalsAnswered = 64
    /// How long a refusal may take, its answer written and the connection closed.
    static let refusalTimeout = TimeAmount.seconds(5)

    /// Whether a new connection is served.
    enum Admission: Equatable {
        case admitted
        /// The limit is reached.
        case busy(limit: Int)
        case shuttingDown
    }

    private let state = Mutex(State())
    private let limit: Int
    /// Answer bytes not yet taken by the kernel, over every connection, at most (give or take
    /// the one answer that passes it).
    let unreadLimit: Int

    init(limit: Int, unreadLimit: Int = .max) {
        self.limit = limit
        self.unreadLimit = unreadLimit
    }

    /// Holds an answer of `bytes` for `channel` until the kernel takes it
    /// (`answerTaken`). Past `unreadLimit`, the connections holding most are closed first,
    /// those that cannot take more at the moment (not writable: their peer is not reading)
    /// before the others, until the sum is back within it: returned, for the caller to
    /// close; each has its reason noted. The caller's own connection may be among them.
    func holdAnswer(_ channel: any Channel, bytes: Int) -> [any Channel] {
        self.state.withLock { state in
            let key = ObjectIdentifier(channel)
            state.unread[key, default: 0] += bytes
            state.unreadTotal += bytes
            var closing: [any Channel] = []
            while state.unreadTotal > self.unreadLimit {
                let candidates = state.unread.filter { $0.value > 0 && state.closeReasons[$0.key] == nil }
                guard
                    let (victim, held) = candidates.max(by: { left, right in
                        let (l, r) = (state.channels[left.key]?.isWritable ?? true, state.channels[right.key]?.isWritable ?? true)
                        return (l ? 0 : 1, left.value) < (r ? 0 : 1, right.value)
                    }),
                    let victimChannel = state.channels[victim]
                else { break }
                state.closeReasons[victim] = LabError(
                    .busy,
                    "Its answers were not read: \(held) bytes held, past the server's \(self.unreadLimit) bytes for unread answers"
                )
                state.unreadTotal -= held
                state.unread[victim] = 0
                closing.append(victimChannel)
            }
            return closing
        }
    }

    /// The kernel took `bytes` of `channel`'s answers.
    func answerTaken(_ channel: any Channel, bytes: Int) {
        self.state.withLock { state in
            let key = ObjectIdentifier(channel)
            guard let held = state.unread[key] else { return }
            let taken = min(held, bytes)
            state.unread[key] = held - taken
            state.unreadTotal -= taken
        }
    }

    /// Answer bytes held now, over every connection.
    var unreadBytes: Int { self.state.withLock { $0.unreadTotal } }

    /// Adds `channel` unless the limit is reached or shutdown began.
    func insert(_ channel: any Channel) -> Admission {
        self.state.withLock { state in
            guard !state.closed else { return .shuttingDown }
            guard state.channels.count < self.limit else { return .busy(limit: self.limit) }
            state.channels[ObjectIdentifier(channel)] = channel
            return .admitted
        }
    }

    /// Counts a refusal: whether to answer it (fewer than `refusalsAnswered` in flight) and
    /// whether to log it (the first, then every 1,000th).
    func startRefusal() -> (answered: Bool, logged: Bool, total: Int) {
        self.state.withLock { state in
            state.refused += 1
            let answered = state.refusing < Self.refusalsAnswered
            if answered { state.refusing += 1 }
            return (answered, state.refused == 1 || state.refused % 1_000 == 0, state.refused)
        }
    }

    /// An answered refusal is over.
    func endRefusal() {
        self.state.withLock { $0.refusing -= 1 }
    }

    func remove(_ channel: any Channel) {
        self.state.withLock { state in
            state.channels[ObjectIdentifier(channel)] = nil
            state.busy.remove(ObjectIdentifier(channel))
            state.closeReasons[ObjectIdentifier(channel)] = nil
            state.unreadTotal -= state.unread.removeValue(forKey: ObjectIdentifier(channel)) ?? 0
        }
    }

    /// Notes why the server is closing `channel` (a handler's timeout), for its task to log.
    func closing(_ channel: any Channel, because reason: LabError) {
        self.state.withLock { state in
            guard state.channels[ObjectIdentifier(channel)] != nil else { return }
            state.closeReasons[ObjectIdentifier(channel)] = reason
        }
    }

    /// Why the server closed `channel`, if a handler said.
    func closeReason(_ channel: any Channel) -> LabError? {
        self.state.withLock { $0.closeReasons[ObjectIdentifier(channel)] }
    }

    /// Bytes arrived on `channel`: a request is under way, unless one already was, or the
    /// connection was idle when draining began (it is being closed). Whether it began now.
    func requestArrives(_ channel: any Channel) -> Bool {
        self.state.withLock { state in
            guard !state.draining else { return false }
            return state.busy.insert(ObjectIdentifier(channel)).inserted
        }
    }

    /// A whole request is on `channel`: whether to answer it (always, unless draining began
    /// while the connection had no request under way).
    func startAnswer(_ channel: any Channel) -> Bool {
        self.state.withLock { state in
            guard state.draining else {
                state.busy.insert(ObjectIdentifier(channel))
                return true
            }
            return state.busy.contains(ObjectIdentifier(channel))
        }
    }

    /// The answer on `channel` is written: whether the connection stays open (not once
    /// draining began).
    func endAnswer(_ channel: any Channel) -> Bool {
        self.state.withLock { state in
            state.busy.remove(ObjectIdentifier(channel))
            return !state.draining
        }
    }

    /// Refuses later arrivals and later requests; returns the connections with no request
    /// under way, to close now, and how many have one.
    func startDraining() -> (idle: [any Channel], answering: Int) {
        self.state.withLock { state in
            state.closed = true
            state.draining = true
            let idle = state.channels.filter { !state.busy.contains($0.key) }.map(\.value)
            return (idle, state.busy.count)
        }
    }

    /// The connections open now.
    var count: Int { self.state.withLock { $0.channels.count } }

    /// Every open channel; later arrivals are refused.
    func closeAll() -> [any Channel] {
        self.state.withLock { state in
            state.closed = true
            return Array(state.channels.values)
        }
    }
}

/// Marks a connection busy when the first bytes of a request arrive, so that a drain lets a
/// request that is still arriving finish too (`ConnectionSet.requestArrives`).
final class RequestArrivalHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let connections: ConnectionSet
    private let logger: Logger

    init(connections: ConnectionSet, logger: Logger) {
        self.connections = connections
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if self.connections.requestArrives(context.channel) {
            self.logger.trace("a request is arriving", metadata: ["peer": "\(context.channel.remoteAddress.map { "\($0)" } ?? "?")"])
        }
        context.fireChannelRead(data)
    }
}

/// Tells the connection set when the kernel has taken an answer (its write completed), so
/// that unread answers are counted from the moment the task made them until then
/// (`ConnectionSet.holdAnswer`). Sees answer bodies, before the frame encoder.
final class AnswerTakenHandler: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let connections: ConnectionSet

    init(connections: ConnectionSet) {
        self.connections = connections
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let bytes = Self.unwrapOutboundIn(data).readableBytes
        let promise = promise ?? context.eventLoop.makePromise()
        let (connections, channel) = (self.connections, context.channel)
        promise.futureResult.whenSuccess { connections.answerTaken(channel, bytes: bytes) }
        context.write(data, promise: promise)
    }
}
