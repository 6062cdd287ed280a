import Foundation
import LabCore
import LabReport
import LabResults
import LabTestSupport
import LabTransports
import NIOCore
import NIOPosix
import Synchronization
import Testing

/// `report.packets`: the kernel's TCP counters, read by the lab (`TCPInfo`, at offsets of
/// `struct tcp_info`), against `ss` (which asks the kernel over netlink), and through a run.
@Suite(.tier(.integration)) struct PacketsTests {
    @Test("The lab's TCP_INFO counters equal ss's for the same connection")
    func countersAgreeWithSS() async throws {
        // An echo server (Python), and a connection that sends 100 KB through it.
        let echo = try ServerProcess(
            URL(fileURLWithPath: "/usr/bin/env"),
            [
                "python3", "-c",
                """
                import socket
                s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
                print("listening on", s.getsockname()[1], flush=True)
                c, _ = s.accept()
                while True:
                    data = c.recv(65536)
                    if not data: break
                    c.sendall(data)
                """,
            ]
        )
        defer { echo.terminate() }
        let port = Int(try await echo.line(startingWith: "listening on ", timeout: .seconds(10)).split(separator: " ").last!)!
        let received = Received()
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in channel.pipeline.addHandler(received) }
            .connect(host: "127.0.0.1", port: port).get()
        defer { channel.close(promise: nil) }
        let size = 100_000
        try await channel.writeAndFlush(ByteBuffer(repeating: 7, count: size)).get()
        await received.wait(for: size)

        let before = try #require(try await TCPInfo.read(channel)?.get())
        let local = try #require(channel.localAddress?.port)
        // This connection by both of its ends, and only it: matched by its local port alone, ss
        // once printed another socket's counters (7 segments sent, where the lab had read 8
        // before ss ran: 1 integration pass in 30, 2026-11-28), another test's connection
        // with the same port number at one of its ends.
        let ss = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["ss", "-tinH", "state", "established", "src", "127.0.0.1:\(local)", "dst", "127.0.0.1:\(port)"]
        )
        let after = try #require(try await TCPInfo.read(channel)?.get())
        // One socket: its line, then its details on an indented line.
        let sockets = ss.output.split(separator: "\n").filter { !($0.first?.isWhitespace ?? true) }
        try #require(sockets.count == 1, "one socket: \(ss.output)")
        let fields = Self.fields(ss.output)
        func within(_ name: String, _ path: KeyPath<TCPCounters, UInt32>) throws {
            let value = try #require(fields[name], "ss printed no \(name): \(ss.output)")
            #expect((before[keyPath: path]...after[keyPath: path]).contains(value), "\(name): ss \(value), lab \(before) … \(after)")
        }
        try within("segs_out", \.segmentsSent)
        try within("segs_in", \.segmentsReceived)
        try within("data_segs_out", \.dataSegmentsSent)
        try within("data_segs_in", \.dataSegmentsReceived)
        // 100 KB each way over loopback is more than one segment each way. (Nothing is lost on
        // loopback, but a starved peer can draw a tail-loss probe: retransmissions are not asserted.)
        #expect(before.dataSegmentsSent >= 2 && before.dataSegmentsReceived >= 2, "\(before)")
        #expect(before.minRTTMicroseconds > 0, "\(before)")
    }

    @Test("A run with report.packets counts each exchange's segments; a server with --packets, each answer's")
    func runCountsPackets() async throws {
        let (server, address) = try await LabProcess.serve(["--no-messaging", "--suites", "x25519,pq", "--packets"])
        defer { server.terminate() }
        let iterations = 6
        let result = try await TestPlan.run(
            """
            { "name": "packets",
              "server": { "transport": "tcp", "address": "127.0.0.1:\(address.port)" },
              "clients": { "count": 2 }, "load": { "iterations": \(iterations) },
              "flows": [ { "flow": "cx", "suite": "x25519" }, { "flow": "cx", "suite": "pq" } ],
              "report": { "packets": true } }
            """
        )
        #expect(result.errorCount == 0)
        for suite in ["x25519", "pq"] {
            let client = try #require(result.groups.first { !$0.isServerSide && $0.key.suite == suite })
            let exchange = try #require(client.packets[.exchange], "\(suite): \(client.packets)")
            #expect(exchange.roundTrips == client.iterations)
            // Each request is at least one data segment out, each answer at least one in.
            #expect(exchange.dataSegmentsSent >= exchange.roundTrips, "\(exchange)")
            #expect(exchange.dataSegmentsReceived >= exchange.roundTrips, "\(exchange)")
            #expect(exchange.retransmissions == 0)
            let connect = try #require(client.setupPackets[.connect])
            #expect(connect.roundTrips >= 2 && connect.segmentsSent >= 2 * connect.roundTrips, "\(connect)")
            let server = try #require(result.groups.first { $0.isServerSide && $0.key.suite == suite })
            let answers = try #require(server.packets[.answer], "\(suite) server: \(server.packets)")
            // Every answer but each connection's last (one connection per client that ran the suite).
            #expect(answers.roundTrips < server.iterations && answers.roundTrips + 2 >= server.iterations, "\(answers)")
            #expect(answers.dataSegmentsSent >= answers.roundTrips, "\(answers)")
            // And each connection's opening, up to its first request: the SYN's answer, no data.
            let opening = try #require(server.packets[.connect], "\(suite) server: \(server.packets)")
            #expect(opening.roundTrips >= 1 && opening.segmentsSent >= opening.roundTrips && opening.dataSegmentsSent == 0, "\(opening)")
        }
        let report = try #require(MarkdownReporter(options: ReportOptions(charts: false)).render(result).first?.text)
        #expect(report.contains("## Packets") && report.contains("| answer |"), "\(report)")
    }

    /// `name:value` pairs of `ss -i` output.
    static func fields(_ text: String) -> [String: UInt32] {
        var fields: [String: UInt32] = [:]
        for word in text.split(whereSeparator: \.isWhitespace) {
            let parts = word.split(separator: ":", maxSplits: 1)
            if parts.count == 2, let value = UInt32(parts[1]) { fields[String(parts[0])] = value }
        }
        return fields
    }
}

/// Counts the bytes a channel received, and wakes a waiter once there are enough.
private final class Received: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    private struct State {
        var count = 0
        var waiter: (wanted: Int, continuation: CheckedContinuation<Void, Never>)?
    }
    private let state = Mutex(State())

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = self.unwrapInboundIn(data).readableBytes
        let ready = self.state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.count += bytes
            guard let (wanted, continuation) = state.waiter, state.count >= wanted else { return nil }
            state.waiter = nil
            return continuation
        }
        ready?.resume()
    }

    func wait(for count: Int) async {
        await withCheckedContinuation { continuation in
            let done = self.state.withLock { state in
                if state.count >= count { return true }
                state.waiter = (count, continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }
}
