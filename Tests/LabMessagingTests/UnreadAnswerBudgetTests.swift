import Foundation
import LabCore
import LabMessaging
import LabTestSupport
import LabWire
import NIOCore
import NIOPosix
import Testing

/// Issue 51, break 3: answers to clients that never read had no overall bound. The trial:
/// one account, a chat of about 5 MiB, connections each pipelining 20 `fetch` requests (149 B
/// each) and never reading; 60 of them grew the server by 982 MiB, each holding about 16 MiB
/// until the idle timeout. Now the answers a connection's task has made that the kernel has
/// not taken count against a bound (`--max-buffered-bytes`, stated at start): past it the
/// connections holding most are closed.
@Suite(.tier(.load), .serialized, .timeLimit(.minutes(4)))
struct UnreadAnswerBudgetTests {
    static let budget = 32 << 20

    @Test("connections pipelining fetches of a 5 MiB chat, never reading: answers held within the bound")
    func unreadAnswersStayWithinTheBound() async throws {
        let served = try await MsgInteropTests.Served.start([
            "--max-buffered-bytes", "\(Self.budget)", "--idle-timeout", "60 s",
        ])
        defer { served.cleanUp() }
        let stated = try await served.server.line(startingWith: "connections: at most", timeout: .seconds(5))
        #expect(stated.contains("unread answers: at most \(Self.budget) bytes held; fetch pages being made: at most \(Self.budget) bytes"), "\(stated)")
        let (client, endpoint) = try await ServeMsgTests.connect(served)
        var chat = try await LargeChat.make(client, writer: "alice", peer: "bob")
        let before = try ProcessFigures.peakResident(served.server.pid)
        let requests = try chat.pipelinedFetches()
        // 40 readers that never read: 40 × 16 MiB before, past 600 MiB.
        let channels = try await LargeChat.neverReaders(40, to: served.address, sending: requests)
        defer { for channel in channels { channel.close(promise: nil) } }
        // Past the bound the connections holding most are closed (their peers, reading
        // nothing, cannot see it), long before the 60 s idle timeout: 40 connections holding
        // two 5 MiB answers each is six times the bound.
        try await served.server.errors(described: "20 connections closed for unread answers", timeout: .seconds(60)) {
            $0.components(separatedBy: "Its answers were not read").count - 1 >= 20
        }
        let growth = try ProcessFigures.peakResident(served.server.pid) - before
        // What the server states at start: frames arriving, unread answers and fetch pages
        // being made, each within the bound; then the answer each of the 2 cores is encoding
        // (a few copies of 5 MiB) and the allocator's slack. Before: about 16 MiB a connection,
        // 640 MiB for these 40.
        #expect(growth <= 3 * Self.budget + (64 << 20), "peak resident grew \(growth >> 20) MiB; bound \(Self.budget >> 20) MiB")
        print("unread answers: peak resident grew \(growth >> 20) MiB under a \(Self.budget >> 20) MiB bound")
        for channel in channels { try? await channel.close() }
        // An honest reader is served the whole chat afterwards.
        var quiet = NoStepRecorder()
        let texts = try await chat.side.fetch(client, fromStart: true, recorder: &quiet)
        #expect(texts.count == LargeChat.messages)
        await client.connection.close()
        await endpoint.shutdown()
        try await served.stop()
    }
}
