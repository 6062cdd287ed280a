import Foundation
import LabCore
import LabMessaging
import LabNIO
import Synchronization
import Testing

/// 100 wrong passwords at once on one account, over real sockets: the counters must end
/// exactly where the policy says, with no update lost and none counted past the gate.
@Suite(.serialized) struct ConcurrencyTests {
    static let attempts = 100

    @Test(arguments: [LockoutPolicy.seedDefault, LockoutPolicy.default])
    func concurrentWrongPasswordsLoseNoUpdate(policy: LockoutPolicy) async throws {
        // A KDF slow enough (a few ms) that the attempts overlap while it runs, on four
        // workers, with room for every attempt to wait for one (none is answered busy).
        let harness = try await Harness(
            kdf: .pbkdf2SHA256(iterations: 20_000),
            policy: policy,
            kdfWorkers: 4,
            kdfQueueLimit: Self.attempts
        )
        let endpoint = try await TCPTransport(options: TransportOptions()).serve(harness.service)
        defer { Task { await endpoint.shutdown() } }
        var quiet = NoStepRecorder()
        var owner = MessagingUser(username: "target", password: "correct horse")
        let setupClient = MessagingClient(connection: try await endpoint.connect(recorder: &quiet))
        try await owner.register(setupClient, recorder: &quiet).orThrow()

        let codes = try await Self.wrongPasswordsAtOnce(Self.attempts, on: "target") {
            MessagingClient(connection: try await endpoint.connect(recorder: &quiet))
        }
        let counted = codes.filter { $0 == .badCredentials }.count
        let state = try #require(try await harness.state("target"))
        let now = harness.clock.now()
        switch policy {
        case .seed(let postponeAfter, let postponeFor, _):
            // Exactly the failures up to the postponement count; the rest are refused unchecked.
            #expect(counted == postponeAfter)
            #expect(state == LoginState(failures: postponeAfter, postponedUntil: now.addingTimeInterval(postponeFor)))
        case .throttle(let free, let delay, _):
            #expect(counted == free + 1)
            #expect(state == LoginState(failures: free + 1, postponedUntil: now.addingTimeInterval(delay)))
        }
        #expect(codes.filter { $0 == .postponed }.count == Self.attempts - counted)
        #expect(codes.allSatisfy { $0 == .badCredentials || $0 == .postponed })
        await setupClient.connection.close()
    }

    /// `count` logins with a wrong password on `username`, each on its own connection from
    /// `connect`; every attacker gets its captcha first, so that the logins start together.
    /// Returns each answer's error code (nil for a login that succeeded).
    static func wrongPasswordsAtOnce(
        _ count: Int,
        on username: String,
        connect: () async throws -> MessagingClient
    ) async throws -> [MsgErrorCode?] {
        var quiet = NoStepRecorder()
        var prepared: [(MessagingClient, MessagingUser, IssuedCaptcha)] = []
        for _ in 0..<count {
            let client = try await connect()
            var attacker = MessagingUser(username: username, password: "wrong password")
            let captcha = try await attacker.solveCaptcha(client, recorder: &quiet)
            prepared.append((client, attacker, captcha))
        }
        return try await withThrowingTaskGroup(of: MsgErrorCode?.self) { group in
            for (client, attacker, captcha) in prepared {
                group.addTask {
                    var attacker = attacker
                    var quiet = NoStepRecorder()
                    let answer = try await attacker.login(client, captcha: captcha, recorder: &quiet)
                    await client.connection.close()
                    return answer.failureCode
                }
            }
            var codes: [MsgErrorCode?] = []
            for try await code in group { codes.append(code) }
            return codes
        }
    }
}

/// Password checks run off the event loops, a bounded number at once: beyond the queue, a
/// check is refused `busy` at once, and through the service it counts nothing.
@Suite(.serialized) struct PasswordCheckLimitTests {
    @Test("with its worker busy and its queue full, the next check is refused busy at once")
    func checksBeyondTheQueueAreBusy() async throws {
        let checks = PasswordChecks(workers: 1, queueLimit: 2)
        let gate = DispatchSemaphore(value: 0)
        // One running (held at the gate) and two waiting.
        let held = (0..<3).map { index in
            Task {
                try await checks.run { () -> Int in
                    gate.wait()
                    return index
                }
            }
        }
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(30)
        // Admission is counted as each task starts; there is no event to await.
        while checks.admitted < 3, clock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        try #require(checks.admitted == 3)
        let refused = try await #require(throws: MsgFailure.self) { _ = try await checks.run { 0 } }
        #expect(refused.code == .busy)
        for _ in 0..<3 { gate.signal() }
        var finished: [Int] = []
        for task in held { finished.append(try await task.value.0) }
        #expect(finished.sorted() == [0, 1, 2])
        #expect(checks.admitted == 0)
        // Room again.
        #expect(try await checks.run { 7 }.0 == 7)
    }

    @Test("a waiting check whose task is cancelled is dropped at once, and its work never runs")
    func cancelledWaitingCheckIsDropped() async throws {
        let checks = PasswordChecks(workers: 1, queueLimit: 2)
        let gate = DispatchSemaphore(value: 0)
        let running = Task {
            try await checks.run { () -> Int in
                gate.wait()
                return 1
            }
        }
        let ran = Mutex(false)
        let waiting = Task {
            try await checks.run { () -> Int in
                ran.withLock { $0 = true }
                return 2
            }
        }
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(30)
        // Admission is counted as each task starts; there is no event to await.
        while checks.admitted < 2, clock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        try #require(checks.admitted == 2)
        var opened = false
        defer { if !opened { gate.signal() } }
        waiting.cancel()
        // Dropped while the worker is still held at the gate (without the drop, it would wait
        // there for ever: hence a bounded look, not an await on the task).
        while checks.admitted > 1, clock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        try #require(checks.admitted == 1, "the cancelled check still waits for the worker")
        await #expect(throws: CancellationError.self) { _ = try await waiting.value }
        opened = true
        gate.signal()
        #expect(try await running.value.0 == 1)
        // The worker is free: anything queued before this check has run or been dropped.
        #expect(try await checks.run { 3 }.0 == 3)
        #expect(ran.withLock { $0 } == false, "the cancelled check's work ran")
    }

    @Test("logins refused busy count nothing; the checked ones count exactly")
    func busyLoginsCountNothing() async throws {
        let harness = try await Harness(
            kdf: .pbkdf2SHA256(iterations: 200_000),
            policy: .default,
            kdfWorkers: 1,
            kdfQueueLimit: 2
        )
        var quiet = NoStepRecorder()
        var owner = MessagingUser(username: "target", password: "correct horse")
        try await owner.register(try await harness.client(), recorder: &quiet).orThrow()
        let codes = try await ConcurrencyTests.wrongPasswordsAtOnce(12, on: "target") { try await harness.client() }
        let counted = codes.filter { $0 == .badCredentials }.count
        #expect(codes.allSatisfy { $0 == .busy || $0 == .badCredentials || $0 == .postponed }, "codes: \(codes)")
        // However many were busy (that depends on timing), only the checked ones counted.
        let state = try #require(try await harness.state("target"))
        #expect(state.failures == counted, "failures \(state.failures), counted answers \(counted); codes \(codes)")
        // The owner still gets in if the flood left the account open (throttle: five free failures).
        if counted < 5 {
            #expect(
                (try? await Harness.attempt(&owner, try await harness.client(), password: "correct horse").get()) != nil
            )
        }
    }
}
