import Foundation
import LabCore
public import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A plain HTTP/1.1 server with one page, `GET /metrics`, for Prometheus to scrape (`lab
/// serve --metrics-port`), or with the routes it is given (`lab run --live`: a page, a
/// server-sent event stream, the metrics). Every request calls its page for the text; other
/// paths get 404, other methods 405. Apart from the lab's framed protocols, on a port of its own.
///
/// Bounded against peers that hold its connections (issue 51, break 9), so that a scrape or a
/// page load is always answered:
/// - At most `maxConnections` connections. One more takes the place of the connection quiet
///   longest: the one whose last request ended (or that opened, or subscribed to an event
///   stream) longest ago, which is closed. Sixteen keep-alive holders or never-reading event
///   subscribers cannot shut a scraper out; a browser's event stream taken out reconnects and
///   gets the whole stream again. Logged the first time and every 1,000th (`OccasionalLog`).
/// - Each connection must deliver a whole request within `requestTimeout` of opening or of its
///   previous answer, however steadily it trickles, or be closed (logged).
/// - At most `maxRequestBytes` read from a connection since its last answer ended (a request
///   head, a body, stray bytes, a malformed request's rest): an endless header is closed there,
///   after a few reads, not read for ten seconds at gigabytes a second.
/// - A connection whose answers wait unread for `writeStallTimeout` (the socket's buffers and
///   NIO's high-water mark full: an event subscriber that never reads) is closed.
/// - Accepting backs off for a second when the process is out of descriptors.
/// A scraper needs one connection, every few seconds.
public final class MetricsEndpoint: Sendable {
    /// Connections at once.
    public static let maxConnections = 16
    /// How long a connection may take to send a whole request.
    static let requestTimeout = TimeAmount.seconds(10)
    /// Bytes read from a connection between two answers: a browser's request head is 1 to
    /// 2 KiB, and the decoder's own limit on a head's fields is 80 KiB.
    public static let maxRequestBytes = 64 * 1024
    /// How long answers may wait unread before their connection is closed.
    static let writeStallTimeout = TimeAmount.seconds(10)
    /// The address it listens on, `host:port`.
    public let address: String
    /// The port (the one picked, for port 0).
    public let port: Int
    private let channel: any Channel

    private init(address: String, port: Int, channel: any Channel) {
        self.address = address
        self.port = port
        self.channel = channel
    }

    /// What a path answers.
    public enum Route: Sendable {
        /// A page of `contentType`, made anew for each request.
        case text(contentType: String, body: @Sendable () -> String)
        /// A server-sent event stream.
        case events(EventStream)
    }

    /// Prometheus's text format.
    public static let prometheusType = "text/plain; version=0.0.4; charset=utf-8"

    /// Starts listening on `host`:`port` (0 picks a free one), with `GET /metrics` alone.
    public static func start(
        host: String,
        port: Int,
        logger: Logger = Logger(label: "lab.metrics"),
        page: @escaping @Sendable () -> String
    ) async throws -> MetricsEndpoint {
        try await Self.start(
            host: host,
            port: port,
            logger: logger,
            routes: ["/metrics": .text(contentType: Self.prometheusType, body: page)]
        )
    }

    /// Starts listening on `host`:`port` (0 picks a free one), answering `routes` by path.
    public static func start(
        host: String,
        port: Int,
        logger: Logger = Logger(label: "lab.metrics"),
        routes: [String: Route]
    ) async throws -> MetricsEndpoint {
        let channel: any Channel
        let connections = MetricsConnections(limit: Self.maxConnections)
        let logs = MetricsLogs()
        do {
            channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .serverChannelInitializer { server in
                    // Out of descriptors, accept fails at once and again: wait a second each time.
                    server.eventLoop.makeCompletedFuture {
                        try server.pipeline.syncOperations.addHandler(AcceptErrorLog(logger: logger, what: "metrics"))
                        try server.pipeline.syncOperations.addHandler(AcceptBackoffHandler())
                    }
                }
                .childChannelInitializer { child in
                    if let quietest = connections.admit(child) {
                        logs.evicted.log(
                            "metrics: at the connection limit; closing the connection quiet longest for a new one",
                            metadata: ["limit": "\(Self.maxConnections)"],
                            to: logger
                        )
                        quietest.close(promise: nil)
                    }
                    child.closeFuture.whenComplete { _ in connections.remove(child) }
                    return child.eventLoop.makeCompletedFuture {
                        let pipeline = child.pipeline.syncOperations
                        let bytes = RequestByteLimit(limit: Self.maxRequestBytes, log: logs.tooLarge, logger: logger)
                        try pipeline.addHandler(bytes)
                        try pipeline.configureHTTPServerPipeline()
                        try pipeline.addHandler(
                            WriteStall(timeout: Self.writeStallTimeout, log: logs.stalled, logger: logger)
                        )
                        try pipeline.addHandler(
                            RequestDeadline(
                                timeout: Self.requestTimeout,
                                logger: logger,
                                answered: { channel in
                                    bytes.answered()
                                    connections.touch(channel)
                                },
                                requested: { channel in connections.touch(channel) }
                            )
                        )
                        try pipeline.addHandler(MetricsHandler(routes: routes))
                    }
                }
                .bind(host: host, port: port)
                .get()
        } catch {
            throw LabError(
                .connectFailed,
                "Cannot serve metrics on \(host):\(port)",
                cause: UnderlyingError(describing: error)
            )
        }
        guard let bound = channel.localAddress?.port else {
            throw LabError(.connectFailed, "The metrics listener on \(host) has no port")
        }
        return MetricsEndpoint(address: "\(host):\(bound)", port: bound, channel: channel)
    }

    /// Stops listening; scrapes under way finish on their own connections.
    public func shutdown() async {
        try? await self.channel.close()
    }
}

/// Answers one HTTP request at a time on a connection.
private final class MetricsHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let routes: [String: MetricsEndpoint.Route]
    private var request: HTTPRequestHead?

    init(routes: [String: MetricsEndpoint.Route]) {
        self.routes = routes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case .head(let head): self.request = head
        case .body: break
        case .end:
            guard let head = self.request else { return }
            self.request = nil
            self.respond(to: head, context: context)
        }
    }

    /// A malformed request (the decoder's error: the protocol error handler has answered 400)
    /// or a failed socket: the connection is done. Left open, the decoder would read and drop
    /// whatever came next until the request timeout.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.uri
        let (status, type, body): (HTTPResponseStatus, String, String)
        let paths = self.routes.keys.sorted().map { "GET \($0)\n" }.joined()
        if head.method != .GET && head.method != .HEAD {
            (status, type, body) = (.methodNotAllowed, "text/plain; charset=utf-8", paths)
        } else {
            switch self.routes[path] {
            case nil: (status, type, body) = (.notFound, "text/plain; charset=utf-8", paths)
            case .text(let contentType, let page): (status, type, body) = (.ok, contentType, page())
            case .events(let stream):
                // The answer never ends until the stream does: the connection is the stream's.
                stream.subscribe(context.channel, version: head.version)
                return
            }
        }
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: type)
        headers.add(name: "Content-Length", value: String(body.utf8.count))
        if !head.isKeepAlive { headers.add(name: "Connection", value: "close") }
        context.write(
            self.wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))),
            promise: nil
        )
        if head.method != .HEAD {
            context.write(
                self.wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: body)))),
                promise: nil
            )
        }
        if head.isKeepAlive {
            context.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: nil)
        } else {
            let closed = context.channel.eventLoop.makePromise(of: Void.self)
            context.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: closed)
            let channel = context.channel
            closed.futureResult.whenComplete { _ in channel.close(promise: nil) }
        }
    }
}

/// The metrics listener's connections open now, each with when it was last active: opened,
/// or a request of it ended, or an answer to it did. At the limit, a new connection takes the
/// place of the one active longest ago. Any event loop.
private final class MetricsConnections: Sendable {
    private struct Entry {
        let channel: any Channel
        var active: UInt64
    }

    private let limit: Int
    private let entries = Mutex<[ObjectIdentifier: Entry]>([:])

    init(limit: Int) {
        self.limit = limit
    }

    /// Admits `channel`; returns the connection it takes the place of, if all were taken (no
    /// longer counted: the caller closes it).
    func admit(_ channel: any Channel) -> (any Channel)? {
        let now = NIODeadline.now().uptimeNanoseconds
        return self.entries.withLock { entries in
            var quietest: (any Channel)? = nil
            if entries.count >= self.limit, let oldest = entries.min(by: { $0.value.active < $1.value.active }) {
                entries.removeValue(forKey: oldest.key)
                quietest = oldest.value.channel
            }
            entries[ObjectIdentifier(channel)] = Entry(channel: channel, active: now)
            return quietest
        }
    }

    /// `channel` is active now.
    func touch(_ channel: any Channel) {
        let now = NIODeadline.now().uptimeNanoseconds
        self.entries.withLock { $0[ObjectIdentifier(channel)]?.active = now }
    }

    /// `channel` closed.
    func remove(_ channel: any Channel) {
        _ = self.entries.withLock { $0.removeValue(forKey: ObjectIdentifier(channel)) }
    }
}

/// What the metrics listener does to connections that peers can make it do at will, each
/// logged occasionally.
private final class MetricsLogs: Sendable {
    let evicted = OccasionalLog(countKey: "closed for new ones so far")
    let tooLarge = OccasionalLog(countKey: "closed for too many bytes so far")
    let stalled = OccasionalLog(countKey: "closed for unread answers so far")
}

/// Closes a metrics connection that sends more than `limit` bytes without an answer between:
/// first in the pipeline, it counts what the HTTP decoder is given, and an answer's end
/// (`answered()`) starts the count again. An endless header, an endless body or endless blank
/// lines are closed after `limit` bytes and the read that passed it.
private final class RequestByteLimit: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let limit: Int
    private let log: OccasionalLog
    private let logger: Logger
    private var unanswered = 0
    private var closing = false

    init(limit: Int, log: OccasionalLog, logger: Logger) {
        self.limit = limit
        self.log = log
        self.logger = logger
    }

    /// An answer ended: the next request starts from nothing.
    func answered() {
        self.unanswered = 0
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // After the close: nothing more for the decoder.
        guard !self.closing else { return }
        self.unanswered += self.unwrapInboundIn(data).readableBytes
        context.fireChannelRead(data)
        // Answers to what this read finished have reset the count: what is left is unanswered.
        guard self.unanswered > self.limit else { return }
        self.closing = true
        self.log.log(
            "metrics: closing a connection that sent too much without an answer",
            metadata: ["peer": "\(Self.peer(context.channel))", "limit": "\(self.limit) bytes"],
            to: self.logger
        )
        context.close(promise: nil)
    }

    static func peer(_ channel: any Channel) -> String {
        channel.remoteAddress.map { "\($0.ipAddress ?? "?"):\($0.port ?? 0)" } ?? "?"
    }
}

/// Closes a metrics connection whose answers have waited unread for `timeout`: NIO stops
/// calling it writable once its socket's buffers and the high-water mark (64 KiB) are full,
/// and a peer that never reads never makes it writable again.
private final class WriteStall: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = NIOAny

    private let timeout: TimeAmount
    private let log: OccasionalLog
    private let logger: Logger
    private var deadline: Scheduled<Void>?

    init(timeout: TimeAmount, log: OccasionalLog, logger: Logger) {
        self.timeout = timeout
        self.log = log
        self.logger = logger
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            self.deadline?.cancel()
            self.deadline = nil
        } else if self.deadline == nil {
            let channel = context.channel
            let (log, logger, timeout) = (self.log, self.logger, self.timeout)
            self.deadline = context.eventLoop.scheduleTask(in: timeout) {
                log.log(
                    "metrics: closing a connection that has not read its answers",
                    metadata: [
                        "peer": "\(RequestByteLimit.peer(channel))",
                        "for": "\(timeout.nanoseconds / 1_000_000_000) s",
                    ],
                    to: logger
                )
                channel.close(promise: nil)
            }
        }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.deadline?.cancel()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.deadline?.cancel()
    }
}

/// Closes a metrics connection that has not sent a whole request within `timeout` of opening
/// or of its last answer: a silent peer and one that trickles a header line a second alike.
private final class RequestDeadline: ChannelDuplexHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let timeout: TimeAmount
    private let logger: Logger
    /// Called at each answer's end, and at each whole request's.
    private let answered: (any Channel) -> Void
    private let requested: (any Channel) -> Void
    private var deadline: Scheduled<Void>?

    init(
        timeout: TimeAmount,
        logger: Logger,
        answered: @escaping (any Channel) -> Void,
        requested: @escaping (any Channel) -> Void
    ) {
        self.timeout = timeout
        self.logger = logger
        self.answered = answered
        self.requested = requested
    }

    func channelActive(context: ChannelHandlerContext) {
        self.arm(context)
        context.fireChannelActive()
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { self.arm(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.deadline?.cancel()
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.deadline?.cancel()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // A whole request stops the time until its answer has ended: an event stream's answer
        // lasts as long as the stream.
        if case .end = self.unwrapInboundIn(data) {
            self.deadline?.cancel()
            self.requested(context.channel)
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // An answer's end starts the time for the next request.
        if case .end = self.unwrapOutboundIn(data) {
            self.arm(context)
            self.answered(context.channel)
        }
        context.write(data, promise: promise)
    }

    private func arm(_ context: ChannelHandlerContext) {
        self.deadline?.cancel()
        let channel = context.channel
        let (logger, timeout) = (self.logger, self.timeout)
        let peer = channel.remoteAddress.map { "\($0.ipAddress ?? "?"):\($0.port ?? 0)" } ?? "?"
        self.deadline = context.eventLoop.scheduleTask(in: timeout) {
            logger.notice(
                "metrics: closing a connection with no whole request",
                metadata: ["peer": "\(peer)", "within": "\(timeout.nanoseconds / 1_000_000_000) s"]
            )
            channel.close(promise: nil)
        }
    }
}
