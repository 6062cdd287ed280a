import Foundation
import LabBuiltIns
import LabCX
import LabCore
import LabFuzzSupport
import LabMessaging
import LabServer
import LabSwiftCrypto
import LabTransports
import LabWire

/// msg/1 as `lab serve` answers it: the protocol router in front of a messaging service whose
/// SQLite store lives in a temporary folder.
///
/// Two users, `alice` and `bob`, are registered and logged in before the first input, and
/// alice has opened a chat with bob (in a fresh store every `inputsPerFixture` inputs). A request that carries a `token` (except `logout`) gets
/// alice's real one, so fuzzed sends, fetches, rekeys and key look-ups reach the code behind
/// the session check instead of stopping at it. The input is otherwise the request body.
///
/// Properties: every answer is a property-list dictionary; to a body whose top-level
/// dictionary has an `op` key (whatever its values), the answer has a boolean `ok` and keeps
/// the connection open, and a refusal carries an `error` that is one of msg/1's codes and a
/// `message`.
public enum MsgTarget {
    private struct Fixture: Sendable {
        var router: any FrameHandler
        var token: String
        var endpoint: any TransportEndpoint
        var folder: URL
    }

    /// A fresh fixture every this many inputs. The fuzzer's sends fill the chat, and a fetch
    /// answers up to `MsgLimits.fetchLimit` messages: one fixture kept for millions of inputs
    /// took the run from 8,000 inputs/s down to 1,000.
    static let inputsPerFixture = 10_000

    /// The fixture inputs run against, started by the first input.
    private actor Fixtures {
        private var current: Fixture?
        private var uses = 0
        private var generation = 0

        func next() async -> Fixture {
            if let current, self.uses < MsgTarget.inputsPerFixture {
                self.uses += 1
                return current
            }
            await self.tearDown()
            self.generation += 1
            do {
                let fresh = try await MsgTarget.start(generation: self.generation)
                self.current = fresh
                self.uses = 1
                return fresh
            } catch {
                fatalError("cannot start the msg/1 fuzz fixture: \(error)")
            }
        }

        /// Shuts the current fixture down and lets it go: after this nothing of it may remain
        /// allocated, which LeakSanitizer checks (nothing of a fixture is suppressed).
        func tearDown() async {
            guard let old = self.current else { return }
            self.current = nil
            await old.endpoint.shutdown()
            try? FileManager.default.removeItem(at: old.folder)
        }
    }

    private static let fixtures = Fixtures()

    /// The fixtures' SQLite stores live here, and go when the process exits.
    private static let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
        "lab-fuzz-msg-\(getpid())"
    )

    private static func start(generation: Int) async throws -> Fixture {
        if generation == 1 {
            try? FileManager.default.removeItem(at: Self.folder)
            // At exit, before LeakSanitizer's check (registered earlier, so run later), the
            // live fixture goes the way every replaced one went. This blocks libFuzzer's
            // thread on a task of the cooperative pool, one of whose threads the worker holds
            // for good: it needs a pool of two threads or more (one per core; CI has two).
            atexit {
                let done = DispatchSemaphore(value: 0)
                Task.detached {
                    await MsgTarget.fixtures.tearDown()
                    done.signal()
                }
                done.wait()
                try? FileManager.default.removeItem(at: MsgTarget.folder)
            }
        }
        let folder = Self.folder.appendingPathComponent("\(generation)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // The server `lab serve` runs (cx/1 beside msg/1, the lab's own ops), assembled from the
        // catalog; the cheapest password hash: the fuzzer cannot open a sealed password anyway,
        // and set-up logs in twice.
        var protocols = PluginExtensions()
        protocols[MessagingServing.self] = MessagingSettings(
            options: MessagingOptions(kdf: .sha512Salted),
            store: folder.appendingPathComponent("messaging.sqlite").path
        )
        let router = try ServerAssembly.assemble(
            ServerSettings(provider: SwiftCryptoProvider.name, suites: [SuiteChoice(X25519Suite.id)], protocols: protocols),
            plugins: BuiltInPlugins.all
        ).handler
        let endpoint = try await InProcessTransport(options: TransportOptions()).serve(router)
        var recorder = NoStepRecorder()
        let client = MessagingClient(connection: try await endpoint.connect(recorder: &recorder))
        var alice = MessagingUser(username: "alice", password: "alice-fuzz-password")
        var bob = MessagingUser(username: "bob", password: "bob-fuzz-password")
        _ = try await alice.register(client, recorder: &recorder).get()
        _ = try await bob.register(client, recorder: &recorder).get()
        try await alice.logIn(client, recorder: &recorder)
        var chat = ChatSide(user: alice, peer: "bob", provider: SwiftCryptoProvider())
        _ = try await chat.open(client, recorder: &recorder).get()
        guard let token = alice.token else { fatalError("alice logged in without a token") }
        return Fixture(router: router, token: token, endpoint: endpoint, folder: folder)
    }

    /// One long-lived task answers the inputs libFuzzer's thread hands over, one at a time: a
    /// task per input would be freed after its input ended, which libFuzzer would take for a
    /// leak (and run LeakSanitizer on every input).
    private static let worker = Worker()

    /// One input from libFuzzer (`Fuzz/Targets/msg`): libFuzzer's thread hands it to the
    /// worker and waits for it.
    public static func fuzz(_ data: UnsafePointer<UInt8>?, _ count: Int) {
        fuzzInput("msg", data, count, Self.runBlocking)
    }

    /// Runs one input from a thread outside the concurrency pool (libFuzzer's), waiting for it.
    static func runBlocking(_ input: [UInt8]) throws {
        try Self.worker.run(input)
    }

    private final class Worker: @unchecked Sendable {
        // `input` and `failure` pass between the two threads only across the semaphores.
        private let inbox = DispatchSemaphore(value: 0)
        private let outbox = DispatchSemaphore(value: 0)
        private var input: [UInt8] = []
        private var failure: (any Error)? = nil

        init() {
            Task.detached { [self] in
                while true {
                    self.waitForInput()
                    do {
                        try await MsgTarget.run(self.input)
                        self.failure = nil
                    } catch {
                        self.failure = error
                    }
                    self.outbox.signal()
                }
            }
        }

        private func waitForInput() {
            self.inbox.wait()
        }

        func run(_ input: [UInt8]) throws {
            self.input = input
            self.inbox.signal()
            self.outbox.wait()
            if let failure = self.failure { throw failure }
        }
    }

    /// Runs one input; throws `FuzzFailure` when a property does not hold.
    public static func run(_ input: [UInt8]) async throws {
        let fixture = await Self.fixtures.next()
        var body = input
        if var request = try? PropertyListDictionary(decoding: input), request.contains(MsgKey.token),
            (try? request.optionalString(MsgKey.op)) != MsgOp.logout.rawValue
        {
            request.set(MsgKey.token, string: fixture.token)
            if let encoded = try? request.encoded() { body = encoded }
        }
        let request = body
        var recorder = NoStepRecorder()
        let answer = await fixture.router.respond(to: request, recorder: &recorder)
        let reply: PropertyListDictionary
        do {
            reply = try PropertyListDictionary(decoding: answer.body)
        } catch {
            throw FuzzFailure("the answer is not a property-list dictionary: \(error)")
        }
        // A body without an `op` key is cx/1's to answer (CXTarget checks those answers).
        guard PropertyListDictionary.topLevelKeys(of: request)?.contains(MsgKey.op) == true else { return }
        guard let ok = try? reply.optionalBool(MsgKey.ok) else {
            throw FuzzFailure("a msg/1 answer without a boolean 'ok'")
        }
        try expect(
            answer.closeReason == nil,
            "a msg/1 answer closes the connection: \(answer.closeReason ?? "")"
        )
        if !ok {
            let code = try? reply.optionalString(MsgKey.error)
            try expect(
                code.flatMap { $0 }.flatMap(MsgErrorCode.init(rawValue:)) != nil,
                "a refusal whose 'error' is \(String(describing: code)), not one of msg/1's codes"
            )
            try expect(
                (try? reply.optionalString(MsgKey.message)).flatMap { $0 } != nil,
                "a refusal without a 'message'"
            )
        }
    }
}
