import Foundation
import LabCore
import LabMessaging
import LabNIO
import LabTesting
import LabWire
import Testing

/// Issue 37, break 6 (fetch): a chat past the 5 MiB frame limit, 81 messages of 64 KiB each,
/// as the trial wrote it, against `lab serve`. A fetch is answered in pages that fit the
/// frame, and the connection stays open.
@Suite(.tier(.load), .serialized, .timeLimit(.minutes(3)))
struct LargeChatTests {
    @Test("a fetch of a chat past the frame limit is answered in pages; the client reads them all, in order")
    func fetchPagesPastTheFrameLimit() async throws {
        let served = try await MsgInteropTests.Served.start()
        defer { served.cleanUp() }
        let (client, endpoint) = try await ServeMsgTests.connect(served)
        try await withEndpoint(endpoint) { _ in
            var quiet = NoStepRecorder()
            var alice = MessagingUser(username: "alice", password: "alice's password")
            var bob = MessagingUser(username: "bob", password: "bob's password")
            try await alice.register(client, recorder: &quiet).orThrow()
            try await bob.register(client, recorder: &quiet).orThrow()
            try await alice.logIn(client, recorder: &quiet)
            try await bob.logIn(client, recorder: &quiet)
            var side = ChatSide(user: alice, peer: "bob")
            try await side.open(client, recorder: &quiet).orThrow()
            // The largest message msg/1 takes: 65,536 bytes of nonce, ciphertext and tag.
            let count = 81
            var sent: [[UInt8]] = []
            for number in 0..<count {
                let text = [UInt8](repeating: UInt8(number), count: MsgLimits.ciphertextBytes - 28)
                _ = try await side.send(text, client, recorder: &quiet)
                sent.append(text)
            }
            // One fetch with the default limit: an answer, not a closed connection, with a
            // page that fits the 5 MiB frame and says more follow.
            let token = try #require(alice.token)
            let first = try await client.call(
                .fetch,
                {
                    $0.set(MsgKey.token, string: token)
                    $0.set(MsgKey.with, string: "bob")
                },
                recorder: &quiet
            ).orThrow()
            let page = try first.integer(MsgKey.count)
            #expect(page > 0 && page < count, "the first page holds \(page) of \(count)")
            #expect(try first.optionalBool(MsgKey.more) == true)
            // The client reads every page: all 81, in order, each as sent.
            var reader = ChatSide(user: alice, peer: "bob")
            let texts = try await reader.fetch(client, fromStart: true, recorder: &quiet)
            #expect(texts.count == count)
            #expect(texts.map(\.text) == sent, "the texts differ from what was sent")
            #expect(texts.map(\.id) == texts.map(\.id).sorted())
            // A limit is a page's most: 5 of them, and more follow.
            let limited = try await client.call(
                .fetch,
                {
                    $0.set(MsgKey.token, string: token)
                    $0.set(MsgKey.with, string: "bob")
                    $0.set(MsgKey.limit, integer: 5)
                },
                recorder: &quiet
            ).orThrow()
            #expect(try limited.integer(MsgKey.count) == 5 && limited.optionalBool(MsgKey.more) == true)
            // The last page says none follow.
            let last = try await client.call(
                .fetch,
                {
                    $0.set(MsgKey.token, string: token)
                    $0.set(MsgKey.with, string: "bob")
                    $0.set(MsgKey.after, integer: Int(texts[count - 3].id))
                },
                recorder: &quiet
            ).orThrow()
            #expect(try last.integer(MsgKey.count) == 2 && last.optionalBool(MsgKey.more) == false)
            await client.connection.close()
        }
        try await served.stop()
    }
}
