import Foundation
import LabCore
import LabMessaging
import LabTestSupport
import LabWire
import NIOCore
import NIOPosix
import Testing

/// Issue 51, break 4: whole frames pipelined ahead of their answers bypassed
/// `--max-buffered-bytes`, which counted only frames still arriving. The trial: a 32 MiB
/// budget, 24 connections each sending 40 whole 1 MiB requests and never reading, the
/// server grew by 202–355 MiB and logged no `busy`. Now a frame is held against the budget
/// until its answer is written.
@Suite(.tier(.integration), .timeLimit(.minutes(3)))
struct PipelinedFrameBudgetTests {
    static let budget = 32 << 20

    @Test("24 connections pipelining 40 whole 1 MiB requests each, never reading: held within the budget")
    func pipelinedFramesStayWithinTheBudget() async throws {
        let served = try await MsgInteropTests.Served.start([
            "--max-buffered-bytes", "\(Self.budget)", "--idle-timeout", "5 s",
        ])
        defer { served.cleanUp() }
        _ = try await served.server.line(startingWith: "connections: at most", timeout: .seconds(5))
        // Requests the server answers slowly enough for a peer to get ahead: `fetch`es of a
        // 5 MiB chat, each padded to 1 MiB under a key the server never reads. A peer that
        // reads nothing stops the server's writes after its first answers; what it sent on
        // waits in the server, read ahead.
        let (client, endpoint) = try await ServeMsgTests.connect(served)
        let chat = try await LargeChat.make(client, writer: "alice", peer: "bob")
        await client.connection.close()
        await endpoint.shutdown()
        var plist = PropertyListDictionary()
        plist.set(MsgKey.op, string: "fetch")
        plist.set(MsgKey.token, string: chat.token)
        plist.set(MsgKey.with, string: "bob")
        plist.set("pad", string: String(repeating: "A", count: 1 << 20))
        let body = try plist.encoded()
        var requests = ByteBuffer()
        for _ in 0..<40 {
            requests.writeInteger(UInt32(body.count), endianness: .big)
            requests.writeBytes(body)
        }
        let before = try ProcessFigures.peakResident(served.server.pid)
        let channels = try await LargeChat.neverReaders(24, to: served.address, sending: requests)
        defer { for channel in channels { channel.close(promise: nil) } }
        // Every connection ends: past a bound at once (frames: `busy`; answers: not read), the
        // rest at the idle timeout. Reading nothing, the peers cannot see it; the log says.
        try await served.server.errors(described: "24 connections closed", timeout: .seconds(120)) {
            $0.components(separatedBy: "closing the connection").count - 1 >= 24
        }
        #expect(served.server.errors.contains("past their budget of \(Self.budget) bytes"), "frames held past the budget")
        // Frames held and unread answers (each within the budget, twice it in NIO's doubling
        // buffers) and the answers the cores are making. Before: each connection read up to
        // 10 frames ahead, +202 to +355 MiB in the trial.
        let growth = try ProcessFigures.peakResident(served.server.pid) - before
        #expect(growth <= 3 * Self.budget + (64 << 20), "peak resident grew \(growth >> 20) MiB; budget \(Self.budget >> 20) MiB")
        print("pipelined frames: peak resident grew \(growth >> 20) MiB under a \(Self.budget >> 20) MiB budget")
    }
}
