import Foundation
import LabCore
import LabTestSupport
import NIOCore
import NIOPosix
import Synchronization
import Testing

/// Issue 37, breaks 4 and 5: the metrics listener flooded with silent and trickling
/// connections, and `lab serve` with fewer descriptors than its connection limit.
@Suite(.tier(.integration), .timeLimit(.minutes(3)))
struct ListenerLimitTests {
    /// A connection that reads nothing; it notes when the server closed it.
    final class HeldConnection: Sendable {
        let channel: any Channel
        let opened = ContinuousClock.now
        let closedAfter = Mutex<Duration?>(nil)

        init(channel: any Channel) {
            self.channel = channel
            channel.closeFuture.whenComplete { _ in
                self.closedAfter.withLock { $0 = ContinuousClock.now - self.opened }
            }
        }

        var isClosed: Bool { self.closedAfter.withLock { $0 != nil } }
    }

    static func open(host: String, port: Int) async throws -> HeldConnection {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: host, port: port)
            .get()
        return HeldConnection(channel: channel)
    }

    @Test("metrics: past 16 connections the oldest are closed at once; silent and trickling ones within the request timeout")
    func metricsListenerIsBounded() async throws {
        let (server, _) = try await LabProcess.serve(["--no-messaging", "--metrics-port", "0"])
        defer { server.terminate() }
        let line = try await server.line(startingWith: "metrics on http://", timeout: .seconds(10))
        let url = String(line.dropFirst("metrics on ".count))
        let authority = url.dropFirst("http://".count).prefix { $0 != "/" }
        let host = String(authority.prefix { $0 != ":" })
        let port = Int(authority.drop { $0 != ":" }.dropFirst())!
        // 60 silent connections, one at a time; then one that trickles a header line a second.
        var silent: [HeldConnection] = []
        for _ in 0..<60 { silent.append(try await Self.open(host: host, port: port)) }
        let trickler = try await Self.open(host: host, port: port)
        defer {
            for held in silent + [trickler] { held.channel.close(promise: nil) }
        }
        // Over the limit: the oldest closed at once, for the newer ones (issue 51: the newest
        // were refused, so that 16 holders shut every scraper out).
        let overLimit = try await ProcessFigures.until(.seconds(10)) { silent.filter(\.isClosed).count >= 60 - 16 }
        #expect(overLimit, "\(silent.filter(\.isClosed).count) of 60 silent connections closed at once")
        try await server.errors(containing: "metrics: at the connection limit", timeout: .seconds(10))
        // Every held one is closed within the request timeout (10 s) and a margin, however it
        // trickles; the old listener kept them 35 s and more.
        let trickling = Task {
            var header = ["GET /metrics HTTP/1.1\r\n"] + (0..<60).map { "X-Slow-\($0): a\r\n" }
            while !trickler.isClosed, !header.isEmpty {
                try? await trickler.channel.writeAndFlush(ByteBuffer(string: header.removeFirst()))
                try? await Task.sleep(for: .seconds(1))
            }
        }
        defer { trickling.cancel() }
        let allClosed = try await ProcessFigures.until(.seconds(30)) { (silent + [trickler]).allSatisfy(\.isClosed) }
        #expect(allClosed, "\((silent + [trickler]).filter { !$0.isClosed }.count) metrics connections still open after 30 s")
        let longest = (silent + [trickler]).compactMap { $0.closedAfter.withLock { $0 } }.max() ?? .zero
        #expect(longest < .seconds(20), "a metrics connection lived \(longest)")
        try await server.errors(containing: "metrics: closing a connection with no whole request", timeout: .seconds(5))
        // And a scrape is answered.
        let (status, page) = try await ServeOperationsTests.fetch(url)
        #expect(status == 200 && page.contains("# TYPE"), "\(status)")
    }

    /// The CPU seconds `pid` has used (utime + stime, /proc/pid/stat).
    static func cpuSeconds(_ pid: Int32) throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        let fields = stat.split(separator: ")").last!.split(separator: " ")
        // After the command: state is field 3; utime and stime are fields 14 and 15.
        let ticks = Double(fields[11])! + Double(fields[12])!
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    @Test("under 256 open files, lab serve fits its connection limit to them and says so; 300 connections get busy, no spin")
    func connectionLimitFitsTheDescriptors() async throws {
        let server = try ServerProcess(
            URL(fileURLWithPath: "/usr/bin/prlimit"),
            ["--nofile=256:256", LabProcess.executable.path, "serve", "--host", "127.0.0.1", "--port", "0", "--no-messaging"]
        )
        defer { server.terminate() }
        let address = try await ListeningAddress.of(server, timeout: .seconds(20))
        let line = try await server.line(startingWith: "connections: at most ", timeout: .seconds(5))
        let limit = Int(line.dropFirst("connections: at most ".count).prefix { $0.isNumber })!
        #expect(limit >= 16 && limit < 256, "\(line)")
        try await server.errors(containing: "--max-connections lowered from 16384 to \(limit)", timeout: .seconds(5))
        // 300 connections: the first `limit` held, the rest refused (busy, or closed at once).
        var held: [HeldConnection] = []
        for _ in 0..<300 { held.append(try await Self.open(host: address.host, port: address.port)) }
        defer { for connection in held { connection.channel.close(promise: nil) } }
        let refused = try await ProcessFigures.until(.seconds(20)) { held.filter(\.isClosed).count >= 300 - limit }
        #expect(refused, "\(held.filter(\.isClosed).count) of \(300 - limit) over the limit refused")
        #expect(held.filter(\.isClosed).count == 300 - limit, "a held connection was closed")
        try await server.errors(containing: "refusing connections: busy", timeout: .seconds(5))
        // Holding them costs nothing: the server sleeps (a spinning accept loop takes a core).
        let before = try Self.cpuSeconds(server.pid)
        let start = ContinuousClock.now
        try await Task.sleep(for: .seconds(3))
        let used = try Self.cpuSeconds(server.pid) - before
        let wall = (ContinuousClock.now - start) / .seconds(1)
        #expect(used / wall < 0.3, "lab serve used \(used) s of CPU in \(wall) s while holding connections")
        #expect(!server.errors.contains("cannot accept connections"), "accept failed: \(server.errors)")
    }
}
