import Crypto
import Foundation
import LabCore
import LabMessaging
import LabSwiftCrypto
import LabTestSupport
import LabTransports
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
            var side = ChatSide(user: alice, peer: "bob", provider: SwiftCryptoProvider())
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
            var reader = ChatSide(user: alice, peer: "bob", provider: SwiftCryptoProvider())
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

    /// The same chat rekeyed: in pages under the frame limit, applied together with the last;
    /// pages out of order, or a message sent between pages, end in `conflict` with nothing
    /// changed.
    @Test("a chat past the frame limit is rekeyed in pages; out of order or overtaken, nothing changes")
    func rekeyPagesPastTheFrameLimit() async throws {
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
            var side = ChatSide(user: alice, peer: "bob", provider: SwiftCryptoProvider())
            try await side.open(client, recorder: &quiet).orThrow()
            var sent: [[UInt8]] = []
            for number in 0..<81 {
                let text = [UInt8](repeating: UInt8(number), count: MsgLimits.ciphertextBytes - 28)
                _ = try await side.send(text, client, recorder: &quiet)
                sent.append(text)
            }
            let token = try #require(alice.token)
            // A page that does not follow page 0: conflict.
            let stray = try await client.call(
                .rekey,
                {
                    $0.set(MsgKey.token, string: token)
                    $0.set(MsgKey.with, string: "bob")
                    $0.set(MsgKey.keyVersion, integer: 1)
                    $0.set(MsgKey.wrappedKeySelf, data: [UInt8](repeating: 1, count: 80))
                    $0.set(MsgKey.wrappedKeyPeer, data: [UInt8](repeating: 1, count: 80))
                    $0.set(MsgKey.messages, data: [])
                    $0.set(MsgKey.page, integer: 1)
                    $0.set(MsgKey.more, bool: true)
                },
                recorder: &quiet
            )
            #expect(stray.failureCode == .conflict, "\(stray)")
            // Overtaken: page 0 of a rekey, then bob sends, then the last page: conflict.
            var bobSide = ChatSide(user: bob, peer: "alice", provider: SwiftCryptoProvider())
            _ = try await bobSide.fetch(client, fromStart: true, recorder: &quiet)
            var history = ChatSide(user: alice, peer: "bob", provider: SwiftCryptoProvider())
            let old = try await history.fetch(client, fromStart: true, recorder: &quiet)
            let newKey = SymmetricKey(size: .bits256)
            let provider = SwiftCryptoProvider()
            let records = try old.map {
                (id: $0.id, ciphertext: try MsgCrypto.encrypt($0.text, key: newKey, sender: $0.sender, provider: provider))
            }
            let context = MsgCrypto.chatKeyContext(users: ("alice", "bob"), version: 2)
            let mine = try MsgCrypto.wrapChatKey(newKey, for: alice.publicKey, suite: alice.suite, context: context)
            let theirs = try MsgCrypto.wrapChatKey(newKey, for: bob.publicKey, suite: alice.suite, context: context)
            func page(_ index: Int, _ part: ArraySlice<(id: Int64, ciphertext: [UInt8])>, more: Bool) async throws
                -> Result<PropertyListDictionary, MsgFailure>
            {
                var quiet = NoStepRecorder()
                return try await client.call(
                    .rekey,
                    {
                        $0.set(MsgKey.token, string: token)
                        $0.set(MsgKey.with, string: "bob")
                        $0.set(MsgKey.keyVersion, integer: 1)
                        $0.set(MsgKey.wrappedKeySelf, data: mine)
                        $0.set(MsgKey.wrappedKeyPeer, data: theirs)
                        $0.set(MsgKey.messages, data: MessagePacking.pack(reencrypted: Array(part)))
                        $0.set(MsgKey.page, integer: index)
                        $0.set(MsgKey.more, bool: more)
                    },
                    recorder: &quiet
                )
            }
            let first = try await page(0, records.prefix(40), more: true)
            #expect(try first.get().integer(MsgKey.count) == 40)
            _ = try await bobSide.send(Array("between the pages".utf8), client, recorder: &quiet)
            let overtaken = try await page(1, records.dropFirst(40), more: false)
            #expect(overtaken.failureCode == .conflict, "\(overtaken)")
            var reader = ChatSide(user: alice, peer: "bob", provider: SwiftCryptoProvider())
            let unchanged = try await reader.fetch(client, fromStart: true, recorder: &quiet)
            #expect(reader.key?.version == 1 && unchanged.count == 82)
            sent.append(Array("between the pages".utf8))
            // In pages, undisturbed: version 2, every text as sent.
            var again = ChatSide(user: alice, peer: "bob", provider: SwiftCryptoProvider())
            _ = try await again.fetch(client, fromStart: true, recorder: &quiet)
            let version = try await again.rekey(client, peerKey: bob.publicKey, recorder: &quiet).orThrow()
            #expect(version == 2)
            var after = ChatSide(user: alice, peer: "bob", provider: SwiftCryptoProvider())
            let texts = try await after.fetch(client, fromStart: true, recorder: &quiet)
            #expect(after.key?.version == 2 && texts.map(\.text) == sent)
            await client.connection.close()
        }
        try await served.stop()
    }
}
