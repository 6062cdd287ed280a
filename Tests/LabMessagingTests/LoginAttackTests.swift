import Foundation
import LabCore
import LabMessaging
import LabTestSupport
import LabTransports
import LabWire
import Synchronization
import Testing

/// Issue 37, breaks 1, 2 and 8: the adversarial trial's attacks on logins, against `lab
/// serve`. The attacker connects from 127.0.0.2 and the owner from 127.0.0.1 (both
/// loopback; the server tells sources apart by address, docs/messaging.md).
@Suite(.tier(.load), .serialized, .timeLimit(.minutes(3)))
struct LoginAttackTests {
    static let attacker = "127.0.0.2"
    static let owner = "127.0.0.1"

    /// A client of `served`, connecting from `source`, and its endpoint to shut down.
    static func connect(
        _ served: MsgInteropTests.Served,
        from source: String
    ) async throws -> (MessagingClient, any TransportEndpoint) {
        let endpoint = try await TCPTransport(options: TransportOptions()).remote(
            host: served.address.host,
            port: served.address.port,
            from: source
        )
        var quiet = NoStepRecorder()
        return (MessagingClient(connection: try await endpoint.connect(recorder: &quiet)), endpoint)
    }

    /// One login attempt as `name` with `password`, its captcha read right.
    static func attempt(
        _ client: MessagingClient,
        name: String,
        password: String
    ) async throws -> Result<String, MsgFailure> {
        var user = MessagingUser(username: name, password: password)
        return try await Harness.attempt(&user, client, password: password)
    }

    /// What an answer shows an attacker: its code (or "ok") and whether it carries `until`.
    static func shape(_ result: Result<String, MsgFailure>) -> String {
        switch result {
        case .success: "ok"
        case .failure(let failure): failure.code.rawValue + (failure.until == nil ? "" : "+until")
        }
    }

    /// Break 1: the attacker throttles the owner's name from its own address, then keeps
    /// guessing; the owner's right password from another address logs in at once, every
    /// time, and the attacker stays held back.
    @Test("throttle: an attacker who keeps a name throttled never keeps its owner (another address) out")
    func throttledAttackerLeavesTheOwnerIn() async throws {
        let served = try await MsgInteropTests.Served.start()
        defer { served.cleanUp() }
        let (ownerClient, ownerEndpoint) = try await Self.connect(served, from: Self.owner)
        let (attackerClient, attackerEndpoint) = try await Self.connect(served, from: Self.attacker)
        try await withEndpoint(ownerEndpoint) { _ in
            try await withEndpoint(attackerEndpoint) { _ in
                var quiet = NoStepRecorder()
                var alice = MessagingUser(username: "alice", password: "correct horse")
                try await alice.register(ownerClient, recorder: &quiet).orThrow()
                // 5 free failures, then the 6th postpones the attacker's next try.
                var shapes: [String] = []
                for _ in 0..<7 {
                    shapes.append(Self.shape(try await Self.attempt(attackerClient, name: "alice", password: "guess")))
                }
                #expect(shapes == Array(repeating: "badCredentials", count: 5) + ["badCredentials+until", "postponed+until"])
                // The owner's right password, from its own address: in at once.
                #expect(try await Harness.attempt(&alice, ownerClient, password: "correct horse").succeeded)
                // Its success does not free the attacker, who is still postponed ...
                let again = try await Self.attempt(attackerClient, name: "alice", password: "guess")
                #expect(Self.shape(again) == "postponed+until", "\(again)")
                // ... and the owner's own wrong password is one of its own free failures.
                let typo = try await Harness.attempt(&alice, ownerClient, password: "correct hose")
                #expect(Self.shape(typo) == "badCredentials")
                #expect(try await Harness.attempt(&alice, ownerClient, password: "correct horse").succeeded)
                await attackerClient.connection.close()
                await ownerClient.connection.close()
            }
        }
        try await served.stop()
    }

    /// Break 8: a name that exists and one that does not get the same answers, wrong
    /// password after wrong password, under both policies.
    @Test(
        "a real name and an unknown one answer alike through the lockout (seed and throttle)",
        arguments: [["--policy", "seed"], ["--policy", "throttle"]]
    )
    func lockoutStateHidesWhichNamesExist(policy: [String]) async throws {
        let served = try await MsgInteropTests.Served.start(policy)
        defer { served.cleanUp() }
        let (client, endpoint) = try await Self.connect(served, from: Self.attacker)
        try await withEndpoint(endpoint) { _ in
            var quiet = NoStepRecorder()
            var alice = MessagingUser(username: "alice", password: "correct horse")
            try await alice.register(client, recorder: &quiet).orThrow()
            var real: [String] = []
            var unknown: [String] = []
            for _ in 0..<8 {
                real.append(Self.shape(try await Self.attempt(client, name: "alice", password: "guess")))
                unknown.append(Self.shape(try await Self.attempt(client, name: "nobody", password: "guess")))
            }
            #expect(real == unknown, "\(policy): a real name \(real), an unknown one \(unknown)")
            #expect(real.contains("postponed+until"), "\(policy): \(real)")
            await client.connection.close()
        }
        try await served.stop()
    }

    /// Break 2: 80 connections from one address log in as names that do not exist, with
    /// one KDF worker and a small queue; the owner's logins from another address are each
    /// served, none `busy`.
    @Test("one client's flood of logins for unknown names leaves another client's logins served")
    func floodOfUnknownNamesLeavesTheOwnerServed() async throws {
        let served = try await MsgInteropTests.Served.start([
            "--kdf", "scrypt", "--scrypt-log-n", "12", "--kdf-workers", "1", "--kdf-queue", "8",
        ])
        defer { served.cleanUp() }
        let (shapes, counts) = try await Self.ownerLogsInDuringFlood(
            served,
            owner: Self.owner,
            attackers: Array(repeating: Self.attacker, count: 80),
            logins: 10
        )
        #expect(shapes == Array(repeating: "ok", count: 10), "\(shapes)")
        #expect((counts["busy"] ?? 0) > 0 && (counts["badCredentials"] ?? 0) > 0, "\(counts)")
        try await served.stop()
    }
}

extension LoginAttackTests {
    /// The owner registers from `owner`; one connection from each of `attackers` logs in as
    /// names that do not exist, a new login as soon as the last is answered (bounded: 2,000
    /// each, until the owner is done); once an attacker has been answered `busy` (the queue
    /// is full), the owner logs in `logins` times. The owner's answers and the attackers'.
    static func ownerLogsInDuringFlood(
        _ served: MsgInteropTests.Served,
        owner: String,
        attackers: [String],
        logins: Int
    ) async throws -> (owner: [String], attackers: [String: Int]) {
        let (ownerClient, ownerEndpoint) = try await Self.connect(served, from: owner)
        var quiet = NoStepRecorder()
        var alice = MessagingUser(username: "alice", password: "correct horse")
        try await alice.register(ownerClient, recorder: &quiet).orThrow()
        let flooding = Flood()
        var shapes: [String] = []
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, address) in attackers.enumerated() {
                group.addTask {
                    let (client, endpoint) = try await Self.connect(served, from: address)
                    try await withEndpoint(endpoint) { _ in
                        for attempt in 0..<2_000 where !flooding.isOver {
                            let answer = try await Self.attempt(client, name: "ghost\(index)x\(attempt)", password: "guess")
                            flooding.count(Self.shape(answer))
                        }
                        await client.connection.close()
                    }
                }
            }
            try await flooding.busy(within: .seconds(60))
            try await withEndpoint(ownerEndpoint) { _ in
                for _ in 0..<logins {
                    shapes.append(Self.shape(try await Harness.attempt(&alice, ownerClient, password: "correct horse")))
                }
                await ownerClient.connection.close()
            }
            flooding.end()
            try await group.waitForAll()
        }
        return (shapes, flooding.counts)
    }
}

extension LoginAttackTests {
    /// Issue 51, break 1, as the trial ran it: many attacker addresses, each keeping one login
    /// waiting (one connection each, a new login as soon as the last is answered), fill the
    /// queue; no address has two more waiting than a newcomer's none. The owner, from another
    /// network (127.1.0.1, outside the attackers' 127.0/16), logs in every time. Compared by
    /// address alone the owner's logins were `busy` (the trial: 7 of 8 with 66 addresses).
    @Test("many attacker addresses each keeping one login waiting leave another network's owner served")
    func manyAddressesLeaveTheOwnerServed() async throws {
        let served = try await MsgInteropTests.Served.start([
            "--kdf", "scrypt", "--scrypt-log-n", "12", "--kdf-workers", "1", "--kdf-queue", "8",
        ])
        defer { served.cleanUp() }
        // Twice the queue's places and its worker: a newcomer compared by address alone never
        // finds a place.
        let (shapes, counts) = try await Self.ownerLogsInDuringFlood(
            served,
            owner: "127.1.0.1",
            attackers: (0..<20).map { "127.0.0.\(10 + $0)" },
            logins: 8
        )
        #expect(shapes == Array(repeating: "ok", count: 8), "\(shapes)")
        #expect((counts["busy"] ?? 0) > 0, "the attackers filled the queue: \(counts)")
        try await served.stop()
    }
}

extension LoginAttackTests {
    /// Break 9, against `lab serve`: an all-zero X25519 `publicKey` in `publishKey`, as the
    /// trial sent it (and in `register`): `badRequest`, and the user's key is unchanged.
    @Test("lab serve refuses an all-zero X25519 publicKey in publishKey and register")
    func lowOrderKeyAgainstLabServe() async throws {
        let served = try await MsgInteropTests.Served.start()
        defer { served.cleanUp() }
        let (client, endpoint) = try await Self.connect(served, from: Self.attacker)
        try await withEndpoint(endpoint) { _ in
            var quiet = NoStepRecorder()
            var alice = MessagingUser(username: "alice", password: "correct horse")
            try await alice.register(client, recorder: &quiet).orThrow()
            try await alice.logIn(client, recorder: &quiet)
            let token = try #require(alice.token)
            let zero = [UInt8](repeating: 0, count: 32)
            let published = try await client.call(
                .publishKey,
                {
                    $0.set(MsgKey.token, string: token)
                    $0.set(MsgKey.publicKey, data: zero)
                },
                recorder: &quiet
            )
            #expect(published.failureCode == .badRequest, "\(published)")
            let captcha = try await alice.solveCaptcha(client, recorder: &quiet)
            let registered = try await client.call(
                .register,
                {
                    $0.set(MsgKey.username, string: "mallory")
                    $0.set(MsgKey.password, data: Array(repeating: 7, count: 60))
                    $0.set(MsgKey.publicKey, data: zero)
                    $0.set(MsgKey.captchaID, string: captcha.id)
                    $0.set(MsgKey.captcha, string: captcha.challenge)
                },
                recorder: &quiet
            )
            #expect(registered.failureCode == .badRequest, "\(registered)")
            // alice's key is still her own.
            let key = try await client.call(
                .peerKey,
                {
                    $0.set(MsgKey.token, string: token)
                    $0.set(MsgKey.username, string: "alice")
                },
                recorder: &quiet
            ).orThrow()
            #expect(try key.data(MsgKey.publicKey) == alice.publicKey)
            await client.connection.close()
        }
        try await served.stop()
    }
}

/// The attackers' answers, counted, and the signal to stop.
private final class Flood: Sendable {
    private struct State {
        var counts: [String: Int] = [:]
        var over = false
        var busyWaiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    var isOver: Bool { self.state.withLock { $0.over } }
    var counts: [String: Int] { self.state.withLock { $0.counts } }

    func count(_ shape: String) {
        let waiter = self.state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.counts[shape, default: 0] += 1
            guard shape == "busy" else { return nil }
            defer { state.busyWaiter = nil }
            return state.busyWaiter
        }
        waiter?.resume()
    }

    func end() { self.state.withLock { $0.over = true } }

    /// Returns once an attacker has been answered `busy`; throws after `limit`.
    func busy(within limit: Duration) async throws {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let now = self.state.withLock { state -> Bool in
                        if state.counts["busy"] != nil { return true }
                        state.busyWaiter = continuation
                        return false
                    }
                    if now { continuation.resume() }
                }
                return true
            }
            group.addTask {
                try await Task.sleep(for: limit)
                return false
            }
            let first = try await group.next()!
            group.cancelAll()
            if !first {
                self.state.withLock { state in
                    defer { state.busyWaiter = nil }
                    return state.busyWaiter
                }?.resume()
                throw LabError(.timedOut, "no attacker was answered busy within \(limit)")
            }
        }
    }
}
