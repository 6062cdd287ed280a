import Crypto
import Foundation
import LabCore
import LabMessaging
import LabSwiftCrypto
import LabTestSupport
import LabTransports
import LabWire
import Synchronization
import Testing

/// Issue 8's faults: `lab serve` is killed with SIGKILL at random points of a messaging
/// workload (sends, password changes, rekeys), 50 times with an operation under way, and
/// restarted on the same SQLite file. After every kill an audit finds every acknowledged operation applied, the one in
/// flight either applied whole or not at all, and nothing half-applied: every stored message
/// opens with exactly one chat key, the same for all, and that key's version is the chat's.
@Suite(.tier(.load), .serialized) struct KillRestartTests {
    static let kills = 50

    /// What the client was told: acknowledged operations, and the one in flight at the kill.
    struct Ledger: Sendable {
        var messages: [Int64: [UInt8]] = [:]
        var password: String
        var version = 1
        var keys: [Int: SymmetricKey] = [:]
        var inFlight: Operation? = nil
        /// When the operation in flight was started (`Stopwatch`), to tell it from one started
        /// after the kill.
        var inFlightSince: UInt64? = nil
        var acknowledged = 0
    }

    enum Operation: Sendable {
        case send([UInt8])
        case changePassword(String)
        case rekey(version: Int, key: SymmetricKey)
    }

    /// The workload's side of the conversation, handed from the test to one workload task and back.
    struct Session: Sendable {
        var alice: MessagingUser
        var bob: MessagingUser
        var side: ChatSide
        var ledger: Ledger
    }

    static func serve(_ database: String) async throws -> (ServerProcess, any TransportEndpoint) {
        let (server, address) = try await LabProcess.serve([
            "--db", database, "--kdf", "pbkdf2-sha256", "--pbkdf2-iterations", "1000", "--suites", "x25519",
        ])
        let endpoint = try await TCPTransport(options: TransportOptions()).remote(
            host: address.host,
            port: address.port
        )
        return (server, endpoint)
    }

    @Test("50 random SIGKILLs of lab serve lose and half-apply nothing")
    func randomKillsLoseAndHalfApplyNothing() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kills-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("m.sqlite").path
        let seed = UInt64.random(in: 1...UInt64.max)
        var random = SplitMix64(state: seed)
        var quiet = NoStepRecorder()

        var (server, endpoint) = try await Self.serve(database)
        var client = MessagingClient(connection: try await endpoint.connect(recorder: &quiet))
        var alice = MessagingUser(username: "alice", password: "alice's first password")
        var bob = MessagingUser(username: "bob", password: "bob's password")
        try await alice.register(client, recorder: &quiet).orThrow()
        try await bob.register(client, recorder: &quiet).orThrow()
        try await alice.logIn(client, recorder: &quiet)
        var side = ChatSide(user: alice, peer: "bob", provider: SwiftCryptoProvider())
        try await side.open(client, recorder: &quiet).orThrow()
        var ledger = Ledger(password: alice.password)
        ledger.keys[1] = try #require(side.key?.key)
        var session = Session(alice: alice, bob: bob, side: side, ledger: ledger)
        var kill = 0
        var attempts = 0

        // Each kill comes once the workload has started its k-th operation (k random, 1 to 8)
        // and a random 0–5 ms after (the point within that operation: on the client, on the
        // wire, or in the server's transaction). A kill counts only if an operation was under
        // way at that moment (started, not yet acknowledged); one that fell between two is
        // done again, at most 2 × kills times in all.
        while kill < Self.kills, attempts < 2 * Self.kills {
            attempts += 1
            let started = session
            let workloadSeed = random.next()
            let connected = client
            let (operations, progress) = AsyncStream.makeStream(of: Int.self)
            let workload = Task {
                defer { progress.finish() }
                return try await Self.workload(started, client: connected, seed: workloadSeed, progress: progress)
            }
            let target = Int.random(in: 1...8, using: &random)
            for await count in operations where count >= target { break }
            try await Task.sleep(for: .microseconds(Int.random(in: 0...5_000, using: &random)))
            let killedAt = Stopwatch.now()
            server.terminate()  // SIGKILL
            session = try await workload.value
            await endpoint.shutdown()
            if let since = session.ledger.inFlightSince, session.ledger.inFlight != nil, since < killedAt {
                kill += 1
            }

            // On disk, before any restart: every message opens with exactly one key, the same
            // for all, and that is the acknowledged chat key or the one in flight. (A message
            // under an older key, a rekey lost, opens with neither.)
            var candidates = [session.ledger.version: session.ledger.keys[session.ledger.version]!]
            if case .rekey(let version, let key) = session.ledger.inFlight { candidates[version] = key }
            let versions = candidates.keys.sorted()
            let openers = try RekeyCrashTests.openers(database, keys: versions.map { candidates[$0]! })
                .map { $0.map { versions[$0] } }
            let opening = Set(openers.flatMap { $0 })
            #expect(
                openers.allSatisfy { $0.count == 1 } && opening.count <= 1,
                "kill \(kill) (seed \(seed)): messages open with keys \(opening.sorted()); per message \(openers.prefix(5))…"
            )

            (server, endpoint) = try await Self.serve(database)
            client = MessagingClient(connection: try await endpoint.connect(recorder: &quiet))
            try await Self.audit(&session, client: client, diskVersion: opening.first, kill: kill, seed: seed)
            if Task.isCancelled { break }
        }
        server.terminate()
        await endpoint.shutdown()
        #expect(kill == Self.kills, "kills with an operation under way: \(kill) of \(attempts) (seed \(seed))")
        #expect(session.ledger.acknowledged >= Self.kills, "the workload did something between kills")
        print(
            "kills: \(kill) with an operation under way, of \(attempts) (seed \(seed)); "
                + "\(session.ledger.acknowledged) operations acknowledged, \(session.ledger.messages.count) messages, "
                + "chat key version \(session.ledger.version)"
        )
    }

    /// Sends, password changes and rekeys, one at a time, until the server is gone; returns
    /// the ledger with the operation in flight at that moment, if any.
    static func workload(
        _ start: Session,
        client: MessagingClient,
        seed: UInt64,
        progress: AsyncStream<Int>.Continuation
    ) async throws -> Session {
        var session = start
        var random = SplitMix64(state: seed)
        var quiet = NoStepRecorder()
        for count in 1...100_000 {
            let dice = Int.random(in: 0..<100, using: &random)
            let operation: Operation
            if dice < 70 {
                operation = .send(Array("message \(random.next())".utf8))
            } else if dice < 85 {
                operation = .changePassword("alice's password \(random.next() % 1_000_000)")
            } else {
                operation = .rekey(version: session.ledger.version + 1, key: SymmetricKey(size: .bits256))
            }
            session.ledger.inFlight = operation
            session.ledger.inFlightSince = Stopwatch.now()
            progress.yield(count)
            do {
                switch operation {
                case .send(let text):
                    let id = try await session.side.send(text, client, recorder: &quiet)
                    session.ledger.messages[id] = text
                case .changePassword(let new):
                    try await session.alice.changePassword(client, to: new, recorder: &quiet).orThrow()
                    session.side.user.password = new
                    session.ledger.password = new
                case .rekey(let version, let key):
                    let bobKey = session.bob.publicKey
                    let done = try await session.side.rekey(client, peerKey: bobKey, newKey: key, recorder: &quiet)
                        .get()
                    #expect(done == version)
                    session.ledger.version = version
                    session.ledger.keys[version] = key
                }
            } catch is MsgFailure {
                Issue.record("the server refused \(operation) while it was up")
                session.ledger.inFlight = nil
                session.ledger.inFlightSince = nil
                return session
            } catch {
                // The server died under this operation: it may or may not have been applied.
                if case .rekey(let version, let key) = operation { session.ledger.keys[version] = key }
                return session
            }
            session.ledger.inFlight = nil
            session.ledger.inFlightSince = nil
            session.ledger.acknowledged += 1
        }
        return session
    }

    /// After a restart: logs both users in and reads the chat back as bob.
    static func audit(
        _ session: inout Session,
        client: MessagingClient,
        diskVersion: Int?,
        kill: Int,
        seed: UInt64
    ) async throws {
        var quiet = NoStepRecorder()
        let context = "kill \(kill) (seed \(seed))"
        // The password: the acknowledged one, or the one in flight if its change was applied.
        var candidates = [session.ledger.password]
        if case .changePassword(let new) = session.ledger.inFlight { candidates.insert(new, at: 0) }
        var loggedIn: String? = nil
        for password in candidates where loggedIn == nil {
            var alice = session.alice
            alice.password = password
            let captcha = try await alice.solveCaptcha(client, recorder: &quiet)
            if case .success = try await alice.login(client, captcha: captcha, recorder: &quiet) {
                loggedIn = password
                session.alice = alice
            }
        }
        let password = try #require(loggedIn, "\(context): alice logs in with neither \(candidates)")
        session.ledger.password = password
        try await session.bob.logIn(client, recorder: &quiet)

        var bobSide = ChatSide(user: session.bob, peer: "alice", provider: SwiftCryptoProvider())
        let history = try await bobSide.fetch(client, fromStart: true, recorder: &quiet)
        let version = try #require(bobSide.key?.version, "\(context): bob has no chat key")
        // The chat's key version: the acknowledged one, or one more if the rekey in flight was applied.
        var versions = [session.ledger.version]
        if case .rekey(let next, _) = session.ledger.inFlight { versions.append(next) }
        #expect(versions.contains(version), "\(context): key version \(version), expected one of \(versions)")
        if let diskVersion { #expect(diskVersion == version, "\(context): on disk \(diskVersion), served \(version)") }
        session.ledger.version = version

        // Every acknowledged message, with its text; at most one more, the send in flight.
        let stored = Dictionary(history.map { ($0.id, $0.text) }, uniquingKeysWith: { first, _ in first })
        for (id, text) in session.ledger.messages {
            #expect(
                stored[id] == text,
                "\(context): acknowledged message \(id) is \(stored[id] == nil ? "lost" : "changed")"
            )
        }
        let extra = stored.filter { session.ledger.messages[$0.key] == nil }
        if case .send(let text) = session.ledger.inFlight {
            #expect(
                extra.count <= 1 && extra.allSatisfy { $0.value == text },
                "\(context): unexpected messages \(extra.keys)"
            )
            for (id, text) in extra { session.ledger.messages[id] = text }
        } else {
            #expect(extra.isEmpty, "\(context): messages nobody sent: \(extra.keys.sorted())")
        }
        session.ledger.inFlight = nil

        // Alice goes on from what the server has.
        var side = ChatSide(user: session.alice, peer: "bob", provider: SwiftCryptoProvider())
        _ = try await side.fetch(client, fromStart: true, recorder: &quiet)
        session.side = side
    }
}

/// A client process killed in the middle of its exchanges leaves `lab serve` serving everyone
/// else, cx/1 and msg/1 alike.
@Suite(.tier(.load), .serialized) struct KilledClientTests {
    static func scenario(_ folder: URL, port: Int, clients: Int, iterations: Int) throws -> URL {
        let file = folder.appendingPathComponent("clients-\(clients).json")
        try """
        {
          "name": "killed-client",
          "server": { "transport": "tcp", "address": "127.0.0.1:\(port)" },
          "clients": { "count": \(clients) },
          "load": { "iterations": \(iterations), "deadline": "120 s" },
          "flows": [ { "flow": "cx", "suite": "x25519" } ]
        }
        """.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    @Test("lab run killed mid-exchange: lab serve goes on serving")
    func killedClientDoesNotDisturbTheServer() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("killed-client-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (server, address) = try await LabProcess.serve([
            "--db", folder.appendingPathComponent("m.sqlite").path, "--kdf", "pbkdf2-sha256", "--pbkdf2-iterations",
            "1000", "--suites", "x25519",
        ])
        defer { server.terminate() }
        let endpoint = try await TCPTransport(options: TransportOptions()).remote(
            host: address.host,
            port: address.port
        )
        try await withEndpoint(endpoint) { endpoint in
            var quiet = NoStepRecorder()

            // A messaging user mid-conversation, on a connection of its own.
            let client = MessagingClient(connection: try await endpoint.connect(recorder: &quiet))
            var alice = MessagingUser(username: "alice", password: "alice's password")
            let bob = MessagingUser(username: "bob", password: "bob's password")
            try await alice.register(client, recorder: &quiet).orThrow()
            var bobCopy = bob
            try await bobCopy.register(client, recorder: &quiet).orThrow()
            try await alice.logIn(client, recorder: &quiet)
            var side = ChatSide(user: alice, peer: "bob", provider: SwiftCryptoProvider())
            try await side.open(client, recorder: &quiet).orThrow()

            // 200 clients with far more exchanges than they get to make: killed in the middle.
            let busy = try KilledClientTests.scenario(folder, port: address.port, clients: 200, iterations: 100_000)
            for round in 1...3 {
                let victim = try ServerProcess(
                    LabProcess.executable,
                    ["run", busy.path, "--out", folder.appendingPathComponent("busy-\(round)").path]
                )
                // Once its exchanges are under way: its progress line (every 2 s off a terminal)
                // counts 100 done. Then at a random moment within the next 300 ms.
                _ = try await victim.errorLine(described: "progress past 100 exchanges", timeout: .seconds(60)) { line in
                    guard line.hasPrefix("progress: "), let field = line.split(separator: " ").dropFirst(2).first,
                        let done = Int(field.prefix { $0 != "/" })
                    else { return false }
                    return done >= 100
                }
                try await Task.sleep(for: .milliseconds(Int.random(in: 0...300)))
                _ = try await victim.stop(signal: SIGKILL, timeout: .seconds(10))

                // The messaging user carries on, and a new run of clients finishes clean.
                let text = Array("after kill \(round)".utf8)
                _ = try await side.send(text, client, recorder: &quiet)
                let small = try KilledClientTests.scenario(folder, port: address.port, clients: 10, iterations: 5)
                let run = try await ChildProcess.run(
                    LabProcess.executable,
                    ["run", small.path, "--out", folder.appendingPathComponent("after-\(round)").path, "--quiet"]
                )
                #expect(run.status == 0, "round \(round): \(run.errors)")
            }
            var bobSide = ChatSide(user: bobCopy, peer: "alice", provider: SwiftCryptoProvider())
            try await bobSide.user.logIn(client, recorder: &quiet)
            let history = try await bobSide.fetch(client, fromStart: true, recorder: &quiet)
            #expect(history.map { String(decoding: $0.text, as: UTF8.self) } == (1...3).map { "after kill \($0)" })
            #expect(!server.errors.contains("the listener failed"))
        }
    }
}
