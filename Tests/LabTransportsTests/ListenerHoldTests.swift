import Foundation
import LabCore
import LabTestSupport
import LabTransports
import NIOCore
import NIOPosix
import Synchronization
import Testing

/// Issue 51, break 9: "Sixteen connections deny the metrics and live listeners: 16 keep-alive
/// holders left 0 of 20 scrapes served over 40 s; 16 never-reading `/events` clients refused 7
/// of 7 page loads; the live listener read 31 GB of endless header in 9 s while the run it
/// served measured." Each attacked again over loopback, against `lab serve --metrics-port` and
/// `lab run --live`; the waits are bounded loops, none a judge of speed.
@Suite(.tier(.integration), .timeLimit(.minutes(3)))
struct ListenerHoldTests {
    /// A raw HTTP/1.1 connection: what it has received, whether the server closed it.
    final class Peer: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer

        let received = Mutex<String>("")
        let closed = Atomic<Bool>(false)
        let channel = Mutex<(any Channel)?>(nil)

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let text = String(buffer: self.unwrapInboundIn(data))
            self.received.withLock { $0 += text }
        }

        func channelInactive(context: ChannelHandlerContext) {
            self.closed.store(true, ordering: .relaxed)
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }

        var isClosed: Bool { self.closed.load(ordering: .relaxed) }
        var text: String { self.received.withLock { $0 } }
        /// How many answers have begun (status lines).
        var answers: Int { self.text.components(separatedBy: "HTTP/1.1 200 OK").count - 1 }

        /// The peers' own event loop: the process's shared one also carries other tests'
        /// floods (hundreds of MiB pipelined at a server), which in the full suite delayed the
        /// holders' requests past the listener's 10 s request timeout.
        static let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)

        static func open(port: Int, receiveBuffer: Int? = nil) async throws -> Peer {
            let peer = Peer()
            var bootstrap = ClientBootstrap(group: Self.group)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(peer) }
                }
            if let receiveBuffer {
                bootstrap = bootstrap.channelOption(.socketOption(.so_rcvbuf), value: receiveBuffer)
            }
            let channel = try await bootstrap.connect(host: "127.0.0.1", port: port).get()
            peer.channel.withLock { $0 = channel }
            return peer
        }

        func send(_ text: String) async {
            guard let channel = self.channel.withLock({ $0 }) else { return }
            try? await channel.writeAndFlush(ByteBuffer(string: text))
        }

        /// Sends `text` without waiting for it to be written.
        func sendNow(_ text: String) {
            self.channel.withLock { $0 }?.writeAndFlush(ByteBuffer(string: text), promise: nil)
        }

        func stopReading() async throws {
            try await self.channel.withLock { $0 }?.setOption(.autoRead, value: false).get()
        }

        func close() {
            self.channel.withLock { $0 }?.close(promise: nil)
        }
    }

    static func get(_ path: String, close: Bool = false) -> String {
        "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(close ? "Connection: close\r\n" : "")\r\n"
    }

    /// `lab run --live` on a 90 s run at 10 exchanges a second (in-process: light beside the
    /// integration pass), and its live port.
    static func liveRun() async throws -> (lab: ServerProcess, port: Int, folder: URL) {
        let folder = try ServeOperationsTests.temporaryFolder()
        let file = folder.appendingPathComponent("live-hold.json")
        try #"""
        {
          "name": "live-hold",
          "description": "A run the live listener serves while it is attacked.",
          "server": { "transport": "in-process", "provider": "swift-crypto" },
          "clients": { "count": 1 },
          "load": { "model": "open", "rate": 10, "duration": "90 s", "warmup": "500 ms", "deadline": "3 min" },
          "flows": [ { "flow": "cx", "suite": "x25519", "provider": "swift-crypto" } ],
          "report": { "formats": ["json"] }
        }
        """#.write(to: file, atomically: true, encoding: .utf8)
        let lab = try ServerProcess(
            LabProcess.executable,
            [
                "run", file.path, "--out", folder.appendingPathComponent("out").path, "--quiet", "--live",
                "--live-port", "0",
            ]
        )
        let line = try await lab.errorLine(described: "the live view's address", timeout: .seconds(30)) {
            $0.hasPrefix("live view: http://127.0.0.1:")
        }
        let port = Int(line.dropFirst("live view: http://127.0.0.1:".count).prefix { $0.isNumber })!
        return (lab, port, folder)
    }

    @Test("metrics: 16 keep-alive holders asking every 2 s, then 20 scrapes: all 20 answered")
    func keepAliveHoldersDoNotDenyScrapes() async throws {
        let (server, _) = try await LabProcess.serve(["--no-messaging", "--metrics-port", "0"])
        defer { server.terminate() }
        let line = try await server.line(startingWith: "metrics on http://", timeout: .seconds(10))
        let port = Int(line.split(separator: ":").last!.prefix { $0.isNumber })!
        // The trial's holders: each keeps its connection with a request every 2 s, well within
        // the request timeout, so none is ever quiet long enough for it. Each asks from the
        // moment it opens, on the peers' own event loop: in the full suite the process's task
        // threads are busy with other tests for seconds at a time, and opening the 16 took
        // long enough that the first, waiting for the others before asking again, went quiet
        // past the listener's 10 s request timeout.
        let asking = Mutex<[Peer]>([])
        let repeated = Peer.group.next().scheduleRepeatedTask(initialDelay: .seconds(2), delay: .seconds(2)) { _ in
            for holder in asking.withLock({ $0 }) where !holder.isClosed { holder.sendNow(Self.get("/metrics")) }
        }
        defer { repeated.cancel() }
        for _ in 0..<16 {
            let holder = try await Peer.open(port: port)
            await holder.send(Self.get("/metrics"))
            asking.withLock { $0.append(holder) }
        }
        let holders = asking.withLock { $0 }
        defer { for holder in holders { holder.close() } }
        let holding = try await ProcessFigures.until(.seconds(20)) { holders.allSatisfy { $0.answers >= 1 } }
        #expect(holding, "\(holders.filter { $0.answers >= 1 }.count) of 16 holders answered")
        // 20 scrapes, one after another, each on a new connection as Prometheus's first is.
        var served = 0
        for _ in 0..<20 {
            let scraper = try await Peer.open(port: port)
            await scraper.send(Self.get("/metrics", close: true))
            // Until it is answered and closed, or closed unanswered (the old listener, at once).
            _ = try await ProcessFigures.until(.seconds(15)) { scraper.isClosed }
            if scraper.answers == 1 && scraper.text.contains("# TYPE") { served += 1 }
            scraper.close()
        }
        #expect(served == 20, "\(served) of 20 scrapes served beside 16 keep-alive holders")
        try await server.errors(containing: "metrics: at the connection limit", timeout: .seconds(5))
    }

    @Test("live: 16 never-reading /events subscribers, then 7 page loads: all 7 served")
    func neverReadingSubscribersDoNotDenyPages() async throws {
        let (lab, port, folder) = try await Self.liveRun()
        defer {
            lab.terminate()
            try? FileManager.default.removeItem(at: folder)
        }
        // Each subscribes, reads the stream's head (it is subscribed), then never reads again.
        var subscribers: [Peer] = []
        for _ in 0..<16 {
            let subscriber = try await Peer.open(port: port)
            await subscriber.send(Self.get("/events"))
            subscribers.append(subscriber)
        }
        defer { for subscriber in subscribers { subscriber.close() } }
        let subscribed = try await ProcessFigures.until(.seconds(20)) {
            subscribers.allSatisfy { $0.text.contains("text/event-stream") }
        }
        #expect(subscribed, "\(subscribers.filter { $0.text.contains("text/event-stream") }.count) of 16 subscribed")
        for subscriber in subscribers { try await subscriber.stopReading() }
        var served = 0
        for _ in 0..<7 {
            let browser = try await Peer.open(port: port)
            await browser.send(Self.get("/", close: true))
            _ = try await ProcessFigures.until(.seconds(15)) { browser.isClosed }
            if browser.answers == 1 && browser.text.contains("</html>") { served += 1 }
            browser.close()
        }
        #expect(served == 7, "\(served) of 7 page loads served beside 16 never-reading subscribers")
        #expect(!lab.hasExited, "the run ended early: \(lab.errors)")
    }

    /// Writes `piece` again and again until the server closes the connection or `cap` bytes
    /// are sent; returns the bytes sent.
    static func flood(_ peer: Peer, start: String, piece: String, cap: Int) async -> Int {
        await peer.send(start)
        let buffer = ByteBuffer(string: piece)
        var sent = start.utf8.count
        guard let channel = peer.channel.withLock({ $0 }) else { return sent }
        while !peer.isClosed, channel.isActive, sent < cap {
            do { try await channel.writeAndFlush(buffer) } catch { break }
            sent += buffer.readableBytes
        }
        return sent
    }

    @Test("live: an endless header, or endless blank lines, is closed after 64 KiB read, not read on")
    func endlessHeaderIsClosed() async throws {
        let (lab, port, folder) = try await Self.liveRun()
        defer {
            lab.terminate()
            try? FileManager.default.removeItem(at: folder)
        }
        // Past what the server reads (64 KiB and a read) the bytes sent sit in the sockets'
        // buffers: the server's receive buffer starts at 128 KiB and grows only as it reads,
        // the client's send buffer is at most 4 MiB here (net.ipv4.tcp_wmem). Without the
        // bound, the trial's listener read on at gigabytes a second: the cap is reached long
        // before the request timeout (10 s) closes it.
        let cap = 256 << 20
        let bound = 16 << 20
        let piece = String(repeating: "a", count: 16 << 10)
        let header = try await Peer.open(port: port)
        let headerSent = await Self.flood(header, start: "GET / HTTP/1.1\r\nX-Endless: ", piece: piece, cap: cap)
        #expect(
            try await ProcessFigures.until(.seconds(10)) { header.isClosed },
            "the endless header's connection is open"
        )
        #expect(headerSent < bound, "\(headerSent >> 10) KiB of endless header sent before the close")
        let blank = try await Peer.open(port: port)
        let blankSent = await Self.flood(blank, start: "", piece: String(repeating: "\r\n", count: 8 << 10), cap: cap)
        #expect(try await ProcessFigures.until(.seconds(10)) { blank.isClosed }, "the blank lines' connection is open")
        #expect(blankSent < bound, "\(blankSent >> 10) KiB of blank lines sent before the close")
        try await lab.errors(containing: "metrics: closing a connection that sent too much", timeout: .seconds(5))
        // And the page is still served.
        let browser = try await Peer.open(port: port)
        await browser.send(Self.get("/", close: true))
        _ = try await ProcessFigures.until(.seconds(15)) { browser.isClosed }
        #expect(browser.text.contains("</html>"), "\(browser.text.prefix(200))")
        print("endless header: \(headerSent >> 10) KiB sent; blank lines: \(blankSent >> 10) KiB sent")
    }

    @Test("an event subscriber that never reads is closed once its answers wait unread 10 s")
    func neverReadingSubscriberIsClosed() async throws {
        let stream = EventStream()
        let endpoint = try await MetricsEndpoint.start(host: "127.0.0.1", port: 0, routes: ["/events": .events(stream)])
        let subscriber = try await Peer.open(port: endpoint.port, receiveBuffer: 4096)
        defer { subscriber.close() }
        await subscriber.send(Self.get("/events"))
        #expect(try await ProcessFigures.until(.seconds(10)) { stream.subscriberCount == 1 })
        try await subscriber.stopReading()
        // 32 KiB events, 100 a second, until the subscriber is closed: the sockets' buffers fill
        // in a few seconds, then 10 s unwritable. At most 60 s of them (192 MiB unsent).
        let event = String(repeating: "x", count: 32 << 10)
        var sent = 0
        // The subscriber reads nothing, so it cannot see the close: the stream's count of
        // subscribers, which drops when the server closes the connection, can.
        while stream.subscriberCount > 0, sent < 6_000 {
            stream.send(event)
            sent += 1
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(stream.subscriberCount == 0, "the never-reading subscriber is open after \(sent) events of 32 KiB")
        print("never-reading subscriber: closed after \(sent) events of 32 KiB")
        await stream.finish()
        await endpoint.shutdown()
    }
}
