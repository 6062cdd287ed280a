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
/// Bounded like the main listener: at most `maxConnections` connections (one more is closed
/// at once, logged the first time and every 1,000th), each of which must deliver a whole
/// request within `requestTimeout` of opening or of its previous answer, however steadily it
/// trickles, or be closed (logged); and accepting backs off for a second when the process is
/// out of descriptors. A scraper needs one connection, every few seconds.
public final class MetricsEndpoint: Sendable {
    /// Connections at once.
    public static let maxConnections = 16
    /// How long a connection may take to send a whole request.
    static let requestTimeout = TimeAmount.seconds(10)
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
        let counts = Counts()
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
                    guard counts.open.add(1, ordering: .relaxed).newValue <= Self.maxConnections else {
                        counts.open.subtract(1, ordering: .relaxed)
                        let count = counts.refused.add(1, ordering: .relaxed).newValue
                        if count == 1 || count % 1_000 == 0 {
                            logger.warning(
                                "metrics: refusing connections over the limit",
                                metadata: ["limit": "\(Self.maxConnections)", "refused so far": "\(count)"]
                            )
                        }
                        return child.close()
                    }
                    child.closeFuture.whenComplete { _ in counts.open.subtract(1, ordering: .relaxed) }
                    return child.pipeline.configureHTTPServerPipeline().flatMapThrowing {
                        let pipeline = child.pipeline.syncOperations
                        try pipeline.addHandler(RequestDeadline(timeout: Self.requestTimeout, logger: logger))
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

/// The metrics listener's connections open now, and those refused over the limit.
private final class Counts: Sendable {
    let open = Atomic<Int>(0)
    let refused = Atomic<Int>(0)
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
    private var deadline: Scheduled<Void>?

    init(timeout: TimeAmount, logger: Logger) {
        self.timeout = timeout
        self.logger = logger
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
        if case .end = self.unwrapInboundIn(data) { self.deadline?.cancel() }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // An answer's end starts the time for the next request.
        if case .end = self.unwrapOutboundIn(data) { self.arm(context) }
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
