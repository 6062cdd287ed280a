import Foundation
import LabCore
import LabMessaging
import LabNIO
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

        // Every attacker first gets its captcha, so that the logins themselves start together.
        var prepared: [(MessagingClient, MessagingUser, IssuedCaptcha)] = []
        for _ in 0..<Self.attempts {
            let client = MessagingClient(connection: try await endpoint.connect(recorder: &quiet))
            var attacker = MessagingUser(username: "target", password: "wrong password")
            let captcha = try await attacker.solveCaptcha(client, recorder: &quiet)
            prepared.append((client, attacker, captcha))
        }
        let codes = try await withThrowingTaskGroup(of: MsgErrorCode?.self) { group in
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
}

/// Password checks run off the event loops, a bounded number at once: beyond the queue, a
/// login is answered `busy` at once, counts nothing and changes nothing.
@Suite(.serialized) struct PasswordCheckLimitTests {
    @Test("logins beyond the password-check queue are answered busy and count nothing")
    func loginsBeyondTheQueueAreBusy() async throws {
        // A check of most of a second (debug), so that the twelve logins all reach the queue while the
        // first runs, even on a loaded machine.
        let harness = try await Harness(
            kdf: .pbkdf2SHA256(iterations: 1_000_000),
            policy: .default,
            kdfWorkers: 1,
            kdfQueueLimit: 2
        )
        var quiet = NoStepRecorder()
        var owner = MessagingUser(username: "target", password: "correct horse")
        try await owner.register(try await harness.client(), recorder: &quiet).orThrow()
        var prepared: [(MessagingClient, MessagingUser, IssuedCaptcha)] = []
        for _ in 0..<12 {
            let client = try await harness.client()
            var attacker = MessagingUser(username: "target", password: "wrong password")
            let captcha = try await attacker.solveCaptcha(client, recorder: &quiet)
            prepared.append((client, attacker, captcha))
        }
        let codes = try await withThrowingTaskGroup(of: MsgErrorCode?.self) { group in
            for (client, attacker, captcha) in prepared {
                group.addTask {
                    var attacker = attacker
                    var quiet = NoStepRecorder()
                    return try await attacker.login(client, captcha: captcha, recorder: &quiet).failureCode
                }
            }
            var codes: [MsgErrorCode?] = []
            for try await code in group { codes.append(code) }
            return codes
        }
        let busy = codes.filter { $0 == .busy }.count
        let counted = codes.filter { $0 == .badCredentials }.count
        // One running and two waiting at most: of twelve at once, at least nine are busy.
        #expect(busy >= 9, "codes: \(codes)")
        #expect(codes.allSatisfy { $0 == .busy || $0 == .badCredentials || $0 == .postponed }, "codes: \(codes)")
        // Only the checked ones counted.
        let state = try #require(try await harness.state("target"))
        #expect(state.failures == counted, "failures \(state.failures), counted answers \(counted)")
        // The owner still gets in once the flood is over (at most three counted failures;
        // throttle's first five are free).
        #expect(
            (try? await Harness.attempt(&owner, try await harness.client(), password: "correct horse").get()) != nil
        )
    }
}
