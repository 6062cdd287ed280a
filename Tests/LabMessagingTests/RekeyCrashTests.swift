import Crypto
import Foundation
import GRDB
import LabCore
import LabMessaging
import LabSwiftCrypto
import LabTestSupport
import LabTransports
import Testing

/// A rekey of a 10,000-message chat is one transaction: the server is killed (SIGKILL)
/// halfway through its writes, and after a restart every message decrypts with exactly one
/// of the two keys, the same one for all, and none is lost.
///
/// The server killed is `StallingServer` (test support: the service `lab serve` runs, whose
/// rekey transaction stalls after half the messages); the restarted one is `lab serve`.
@Suite(.tier(.load), .serialized) struct RekeyCrashTests {
    static let history = 10_000

    /// `StallingServer`, built beside `lab`.
    static let stallingServer = LabProcess.executable.deletingLastPathComponent().appendingPathComponent("StallingServer")

    static func serve(_ database: String, stall: Bool) async throws -> (ServerProcess, any TransportEndpoint) {
        let server: ServerProcess
        let address: ListeningAddress
        if stall {
            server = try ServerProcess(Self.stallingServer, ["--db", database, "--stall-after", "\(Self.history / 2)"])
            address = try await ListeningAddress.of(server, timeout: .seconds(20))
        } else {
            (server, address) = try await LabProcess.serve(
                ["--db", database, "--kdf", "pbkdf2-sha256", "--pbkdf2-iterations", "1000"]
            )
        }
        let endpoint = try await TCPTransport(options: TransportOptions()).remote(
            host: address.host,
            port: address.port
        )
        return (server, endpoint)
    }

    /// Every stored message, decrypted with each candidate key: for each, which keys open it.
    static func openers(_ database: String, keys: [SymmetricKey]) throws -> [[Int]] {
        let queue = try DatabaseQueue(path: database)
        let rows = try queue.read { db in
            try Row.fetchAll(
                db,
                sql:
                    "SELECT ciphertext, username FROM messages JOIN users ON users.id = messages.senderId ORDER BY messages.id"
            )
        }
        return rows.map { row in
            let ciphertext = Array(row["ciphertext"] as Data)
            let sender: String = row["username"]
            let provider = SwiftCryptoProvider()
            return keys.indices.filter {
                (try? MsgCrypto.decrypt(ciphertext, key: keys[$0], sender: sender, provider: provider)) != nil
            }
        }
    }

    @Test func killedMidRekeyLosesAndMixesNothing() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rekey-" + UUID().uuidString)
        let database = folder.appendingPathComponent("m.sqlite").path
        var quiet = NoStepRecorder()

        let (server, endpoint) = try await Self.serve(database, stall: true)
        var (alice, bob, oldKey, newKey, sent) = try await withEndpoint(endpoint) { endpoint in
            let client = MessagingClient(connection: try await endpoint.connect(recorder: &quiet))
            var alice = MessagingUser(username: "alice", password: "alice's password")
            var bob = MessagingUser(username: "bob", password: "bob's password")
            try await alice.register(client, recorder: &quiet).orThrow()
            try await bob.register(client, recorder: &quiet).orThrow()
            try await alice.logIn(client, recorder: &quiet)
            try await bob.logIn(client, recorder: &quiet)
            var side = ChatSide(user: alice, peer: "bob", provider: SwiftCryptoProvider())
            try await side.open(client, recorder: &quiet).orThrow()
            let oldKey = try #require(side.key?.key)
            var sent: [Int64: [UInt8]] = [:]
            for number in 1...Self.history {
                let text = Array("message \(number) of the history".utf8)
                sent[try await side.send(text, client, recorder: &quiet)] = text
            }

            // The rekey: the server stalls halfway through its transaction; kill it there.
            let newKey = SymmetricKey(size: .bits256)
            let opened = side
            let bobKey = bob.publicKey
            let rekeying = Task { @Sendable in
                var side = opened
                var quiet = NoStepRecorder()
                return try await side.rekey(client, peerKey: bobKey, newKey: newKey, recorder: &quiet)
            }
            _ = try await server.line(startingWith: "rekey: stalled after \(Self.history / 2)", timeout: .seconds(120))
            server.terminate()  // SIGKILL
            await #expect(throws: (any Error).self) { try await rekeying.value.get() }
            return (alice, bob, oldKey, newKey, sent)
        }

        // After the crash: all 10,000 messages are there, and each opens with the old key only.
        let afterCrash = try Self.openers(database, keys: [oldKey, newKey])
        #expect(afterCrash.count == Self.history)
        #expect(afterCrash.allSatisfy { $0 == [0] })

        // The restarted server serves them: bob fetches and decrypts the whole history.
        let (restarted, again) = try await Self.serve(database, stall: false)
        defer { restarted.terminate() }
        try await withEndpoint(again) { again in
            let second = MessagingClient(connection: try await again.connect(recorder: &quiet))
            try await alice.logIn(second, recorder: &quiet)
            try await bob.logIn(second, recorder: &quiet)
            var bobSide = ChatSide(user: bob, peer: "alice", provider: SwiftCryptoProvider())
            let history = try await bobSide.fetch(second, recorder: &quiet)
            #expect(history.count == Self.history)
            #expect(history.allSatisfy { sent[$0.id] == $0.text })
            #expect(bobSide.key?.version == 1)

            // A rekey that completes moves every message to the new key, and only to it.
            var aliceSide = ChatSide(user: alice, peer: "bob", provider: SwiftCryptoProvider())
            _ = try await aliceSide.fetch(second, recorder: &quiet)
            let third = SymmetricKey(size: .bits256)
            #expect(try await aliceSide.rekey(second, peerKey: bob.publicKey, newKey: third, recorder: &quiet).get() == 2)
            let afterRekey = try Self.openers(database, keys: [oldKey, newKey, third])
            #expect(afterRekey.count == Self.history)
            #expect(afterRekey.allSatisfy { $0 == [2] })
        }
    }
}
