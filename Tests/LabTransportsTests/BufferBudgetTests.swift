import Foundation
import LabCore
import LabTestSupport
import NIOCore
import NIOPosix
import Testing

/// Issue 37, "no overall memory bound": connections that each send most of a 5 MiB frame
/// and stop. Past `--max-buffered-bytes` (each frame counted at its announced size) the
/// connection whose frame would pass it is closed, and the server's memory stays bounded.
@Suite(.tier(.integration), .timeLimit(.minutes(3)))
struct BufferBudgetTests {
    static let frame = 5 << 20
    static let budget = 32 << 20

    @Test("20 connections each 4 MiB into a 5 MiB frame: at most 6 held under a 32 MiB budget, memory bounded")
    func partialFramesStayWithinTheBudget() async throws {
        let (server, address) = try await LabProcess.serve([
            "--no-messaging", "--suites", "x25519", "--max-buffered-bytes", "\(Self.budget)", "--idle-timeout", "5 s",
        ])
        defer { server.terminate() }
        let line = try await server.line(startingWith: "connections: at most", timeout: .seconds(5))
        #expect(line.contains("frames arriving: at most \(Self.budget) bytes held"), "\(line)")
        let before = try ProcessFigures.peakResident(server.pid)
        var header = ByteBuffer()
        header.writeInteger(UInt32(Self.frame), endianness: .big)
        let body = ByteBuffer(repeating: 0x41, count: 4 << 20)
        var channels: [any Channel] = []
        defer { for channel in channels { channel.close(promise: nil) } }
        for _ in 0..<20 {
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(host: address.host, port: address.port)
                .get()
            channel.write(header, promise: nil)
            // Each waits for its bytes to leave before the next starts (or for the server's close).
            try? await channel.writeAndFlush(body).get()
            channels.append(channel)
        }
        let held = Self.budget / (Self.frame + 4)
        let closedAtOnce = try await ProcessFigures.until(.seconds(20)) { channels.filter { !$0.isActive }.count >= 20 - held }
        #expect(closedAtOnce, "\(channels.filter { !$0.isActive }.count) of 20 closed; at most \(held) may be held")
        try await server.errors(containing: "past their budget of \(Self.budget) bytes", timeout: .seconds(5))
        // The held ones end at the idle timeout (5 s), their bytes all read by then: the
        // peak memory is in.
        let stillHeld = channels.filter(\.isActive).count
        try await server.errors(described: "\(stillHeld) idle timeouts", timeout: .seconds(30)) {
            $0.components(separatedBy: "(idle timeout)").count - 1 >= stillHeld
        }
        // NIO's buffer for a frame grows by doubling: up to twice the frame's bytes each.
        let growth = try ProcessFigures.peakResident(server.pid) - before
        #expect(growth <= 2 * Self.budget + (16 << 20), "peak resident grew \(growth >> 20) MiB; budget \(Self.budget >> 20) MiB")
        print("buffer budget: peak resident grew \(growth >> 20) MiB under a \(Self.budget >> 20) MiB budget")
    }
}
