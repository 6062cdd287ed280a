import Foundation
import LabCore
import NIOCore
import NIOHTTP1
import NIOPosix

/// A plain HTTP/1.1 server with one page, `GET /metrics`, for Prometheus to scrape (`lab
/// serve --metrics-port`). Every scrape calls `page` for the text; other paths get 404, other
/// methods 405. Apart from the lab's framed protocols, on a port of its own.
public final class MetricsEndpoint: Sendable {
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

    /// Starts listening on `host`:`port` (0 picks a free one).
    public static func start(
        host: String,
        port: Int,
        page: @escaping @Sendable () -> String
    ) async throws -> MetricsEndpoint {
        let channel: any Channel
        do {
            channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { child in
                    child.pipeline.configureHTTPServerPipeline().flatMap {
                        child.pipeline.addHandler(MetricsHandler(page: page))
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

    private let page: @Sendable () -> String
    private var request: HTTPRequestHead?

    init(page: @escaping @Sendable () -> String) {
        self.page = page
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
        if head.method != .GET && head.method != .HEAD {
            (status, type, body) = (.methodNotAllowed, "text/plain; charset=utf-8", "GET /metrics\n")
        } else if path != "/metrics" {
            (status, type, body) = (.notFound, "text/plain; charset=utf-8", "GET /metrics\n")
        } else {
            (status, type, body) = (.ok, "text/plain; version=0.0.4; charset=utf-8", self.page())
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
