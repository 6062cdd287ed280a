import Foundation
import GRDB
import LabCore
import LabMessaging
import LabSwiftCrypto
import LabTestSupport
import LabWire
import Testing

/// Issue 51, break 6: paged-rekey staging. It was bounded by count, not bytes (a 64,890-byte
/// chat left 121 MiB staged: each small message staged as a 64 KiB ciphertext), it outlived
/// its owner and a restart, a last page refused `conflict` left its pages behind (the refusal
/// rolled its own drop back), and a message sent between the pages was accepted when the last
/// page covered it.
@Suite(.tier(.load)) struct RekeyStagingTests {
    /// alice and bob, a chat of `count` messages of 100 bytes (128-byte ciphertexts).
    struct Chat {
        let harness: Harness
        let client: MessagingClient
        var side: ChatSide
        let ids: [Int64]
        let token: String

        static func make(count: Int = 10) async throws -> Chat {
            let harness = try await Harness()
            var (alice, client) = try await harness.registered("alice")
            _ = try await harness.registered("bob")
            var quiet = NoStepRecorder()
            try await alice.logIn(client, recorder: &quiet)
            var side = ChatSide(user: alice, peer: "bob", provider: SwiftCryptoProvider())
            try await side.open(client, recorder: &quiet).orThrow()
            for number in 0..<count {
                _ = try await side.send([UInt8](repeating: UInt8(number), count: 100), client, recorder: &quiet)
            }
            let ids = try await side.fetch(client, fromStart: true, recorder: &quiet).map(\.id)
            return Chat(harness: harness, client: client, side: side, ids: ids, token: try #require(alice.token))
        }

        /// One page of a rekey of `ids` (each a `length`-byte stand-in ciphertext: the server
        /// does not open them), at `version` (the chat's, 1, by default).
        func page(_ index: Int?, more: Bool, _ ids: some Sequence<Int64>, length: Int = 128, version: Int = 1)
            async throws -> Result<PropertyListDictionary, MsgFailure>
        {
            var quiet = NoStepRecorder()
            let wrapped = [UInt8](repeating: 7, count: MsgHPKE.x25519.encapsulatedBytes + 48)
            let records = ids.map { (id: $0, ciphertext: [UInt8](repeating: 1, count: length)) }
            return try await self.client.call(
                .rekey,
                {
                    $0.set(MsgKey.token, string: self.token)
                    $0.set(MsgKey.with, string: "bob")
                    $0.set(MsgKey.keyVersion, integer: version)
                    $0.set(MsgKey.wrappedKeySelf, data: wrapped)
                    $0.set(MsgKey.wrappedKeyPeer, data: wrapped)
                    $0.set(MsgKey.messages, data: MessagePacking.pack(reencrypted: records))
                    if let index {
                        $0.set(MsgKey.page, integer: index)
                        $0.set(MsgKey.more, bool: more)
                    }
                },
                recorder: &quiet
            )
        }

        /// Rows staged now, and their bytes.
        func staged() throws -> (rows: Int, bytes: Int) {
            let queue = try DatabaseQueue(path: self.harness.store.path)
            return try queue.read { db in
                let row = try Row.fetchOne(db, sql: "SELECT COUNT(*) AS n, TOTAL(length(ciphertext)) AS b FROM rekeyPages")!
                return (row["n"] as Int, Int(row["b"] as Double))
            }
        }
    }

    @Test("a last page refused for a stale keyVersion leaves nothing staged")
    func refusedLastPageDropsTheStaging() async throws {
        let chat = try await Chat.make()
        _ = try await chat.page(0, more: true, chat.ids.prefix(5)).orThrow()
        #expect(try chat.staged().rows == 5)
        let refused = try await chat.page(1, more: false, chat.ids.dropFirst(5), version: 2)
        #expect(refused.failureCode == .conflict)
        #expect(try chat.staged().rows == 0, "the refusal's drop was rolled back")
    }

    @Test("a rekeyed message keeps its length: a page of 64 KiB stand-ins for 128-byte messages is refused, nothing staged")
    func stagingNeverOutgrowsTheChat() async throws {
        let chat = try await Chat.make()
        let refused = try await chat.page(0, more: true, chat.ids.prefix(5), length: MsgLimits.ciphertextBytes)
        #expect(refused.failureCode == .conflict)
        let staged = try chat.staged().bytes
        #expect(staged == 0, "staged \(staged) bytes for a 1,280-byte chat")
        // The same page at the messages' own length is staged: 5 × 128 bytes.
        _ = try await chat.page(0, more: true, chat.ids.prefix(5)).orThrow()
        #expect(try chat.staged().bytes == 5 * 128)
    }

    @Test("a message sent between the pages makes the last page conflict, even when the last page covers it")
    func messageBetweenPagesIsConflict() async throws {
        var chat = try await Chat.make()
        _ = try await chat.page(0, more: true, chat.ids.prefix(5)).orThrow()
        var quiet = NoStepRecorder()
        _ = try await chat.side.send([UInt8](repeating: 9, count: 100), chat.client, recorder: &quiet)
        let all = try await chat.side.fetch(chat.client, fromStart: true, recorder: &quiet).map(\.id)
        #expect(all.count == 11)
        let last = try await chat.page(1, more: false, all.dropFirst(5))
        #expect(last.failureCode == .conflict, "\(last)")
        #expect(try chat.staged().rows == 0)
        // Started again at page 0, the same rekey lands.
        _ = try await chat.page(0, more: true, all.prefix(5)).orThrow()
        let landed = try await chat.page(1, more: false, all.dropFirst(5)).orThrow()
        #expect(try landed.integer(MsgKey.keyVersion) == 2)
    }

    @Test("staged pages do not outlive the process: a store opened again has none")
    func stagingEndsWithTheProcess() async throws {
        let chat = try await Chat.make()
        _ = try await chat.page(0, more: true, chat.ids.prefix(5)).orThrow()
        #expect(try chat.staged().rows == 5)
        _ = try MessagingStore(path: chat.harness.store.path)
        #expect(try chat.staged().rows == 0)
    }
}
