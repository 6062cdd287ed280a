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

    init(limit: Int) {
        self.limit = limit
    }

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
