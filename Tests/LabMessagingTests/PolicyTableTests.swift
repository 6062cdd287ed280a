import Foundation
import LabCore
import LabMessaging
import LabTestSupport
import Testing

/// The lockout tables, walked through the service on the virtual clock: every attempt is a
/// real msg/1 request, and the counters are read back from the SQLite file.
@Suite(.tier(.load)) struct PolicyTableTests {
    @Test func seedPolicyWalksTheReferenceTable() async throws {
        let harness = try await Harness(policy: .seedDefault)
        var (user, client) = try await harness.registered("alice")
        let start = harness.clock.now()

        // Failures 1 and 2: counted, no delay.
        for expected in 1...2 {
            let answer = try await Harness.attempt(&user, client, password: "wrong")
            #expect(answer.failureCode == .badCredentials)
            #expect(try await harness.state("alice") == LoginState(failures: expected))
        }
        // Failure 3 postpones for exactly 30 minutes.
        #expect(try await Harness.attempt(&user, client, password: "wrong").failureCode == .badCredentials)
        let postponed = LoginState(failures: 3, postponedUntil: start.addingTimeInterval(1800))
        #expect(try await harness.state("alice") == postponed)

        // During the postponement the right password is refused and nothing is counted.
        let refused = try await Harness.attempt(&user, client, password: "correct horse")
        #expect(refused.failureCode == .postponed)
        if case .failure(let failure) = refused { #expect(failure.until == start.addingTimeInterval(1800)) }
        #expect(try await Harness.attempt(&user, client, password: "wrong").failureCode == .postponed)
        #expect(try await harness.state("alice") == postponed)

        // One second before the end it still holds; at the end it has passed.
        harness.clock.advance(to: start.addingTimeInterval(1799))
        #expect(try await Harness.attempt(&user, client, password: "wrong").failureCode == .postponed)
        harness.clock.advance(to: start.addingTimeInterval(1800))

        // Failure 4 adds no delay.
        #expect(try await Harness.attempt(&user, client, password: "wrong").failureCode == .badCredentials)
        #expect(try await harness.state("alice") == LoginState(failures: 4))
        #expect(try await Harness.attempt(&user, client, password: "wrong").failureCode != .postponed)
        // That was failure 5: locked for good.
        #expect(try await harness.state("alice")?.locked == true)
        #expect(try await harness.state("alice")?.failures == 5)

        // A locked account refuses the right password, now and a year later, counting nothing.
        #expect(try await Harness.attempt(&user, client, password: "correct horse").failureCode == .locked)
        harness.clock.advance(by: 365 * 86400)
        #expect(try await Harness.attempt(&user, client, password: "correct horse").failureCode == .locked)
        #expect(try await harness.state("alice")?.failures == 5)
    }

    @Test func seedSuccessResetsTheCount() async throws {
        let harness = try await Harness(policy: .seedDefault)
        var (user, client) = try await harness.registered("bob")
        for _ in 1...2 { _ = try await Harness.attempt(&user, client, password: "wrong") }
        #expect(try await harness.state("bob")?.failures == 2)
        #expect(try await Harness.attempt(&user, client, password: "correct horse").succeeded)
        #expect(try await harness.state("bob") == LoginState())
        // Two more failures do not postpone: the count started again.
        for _ in 1...2 {
            #expect(try await Harness.attempt(&user, client, password: "wrong").failureCode == .badCredentials)
        }
        #expect(try await harness.state("bob")?.postponedUntil == nil)
    }

    @Test func defaultPolicyThrottlesAndNeverLocks() async throws {
        let throttle = try #require(LockoutPolicy.default.rules as? ThrottlePolicy, "the default policy is not throttle")
        let (free, delay, maxDelay) = (throttle.freeFailures, throttle.delay, throttle.maxDelay)
        let harness = try await Harness()
        var (user, client) = try await harness.registered("carol")

        // The free failures cost nothing.
        for expected in 1...free {
            #expect(try await Harness.attempt(&user, client, password: "wrong").failureCode == .badCredentials)
            #expect(try await harness.state("carol") == LoginState(failures: expected))
        }
        // Each further failure postpones the next check: delay, doubled each time, capped.
        var expectedDelay = delay
        for failure in (free + 1)...(free + 9) {
            let now = harness.clock.now()
            #expect(try await Harness.attempt(&user, client, password: "wrong").failureCode == .badCredentials)
            let state = try #require(try await harness.state("carol"))
            #expect(state.failures == failure)
            #expect(state.locked == false)
            #expect(state.postponedUntil == now.addingTimeInterval(expectedDelay))

            // During the postponement the right password is refused and not counted.
            #expect(try await Harness.attempt(&user, client, password: "correct horse").failureCode == .postponed)
            #expect(try await harness.state("carol") == state)

            try await harness.clock.sleep(until: state.postponedUntil!)
            expectedDelay = min(expectedDelay * 2, maxDelay)
        }
        #expect(expectedDelay == maxDelay)
        // Never locked: after the last postponement the right password works and resets.
        #expect(try await Harness.attempt(&user, client, password: "correct horse").succeeded)
        #expect(try await harness.state("carol") == LoginState())
    }

    @Test func unknownUserAndWrongPasswordAnswerAlikeAndCountNothing() async throws {
        let harness = try await Harness(policy: .seedDefault)
        _ = try await harness.registered("dave")
        let client = try await harness.client()
        var ghost = MessagingUser(username: "nobody", password: "whatever1")
        var real = MessagingUser(username: "dave", password: "wrong")
        let unknown = try await Harness.attempt(&ghost, client, password: "whatever1")
        let wrong = try await Harness.attempt(&real, client, password: "wrong")
        guard case .failure(let first) = unknown, case .failure(let second) = wrong else {
            Issue.record("expected two failures")
            return
        }
        #expect(first.code == .badCredentials)
        #expect(first.code == second.code)
        #expect(first.message == second.message)
        #expect(try await harness.store.counts().users == 1)
    }

    @Test func wrongCaptchaCountsNothingAndIssuesANewOne() async throws {
        let harness = try await Harness(policy: .seedDefault)
        var (user, client) = try await harness.registered("erin")
        var quiet = NoStepRecorder()
        for _ in 1...6 {
            let captcha = try await user.solveCaptcha(client, recorder: &quiet)
            let answer = try await user.login(
                client,
                password: "wrong",
                captcha: captcha,
                captchaAnswer: "?????",
                recorder: &quiet
            )
            guard case .failure(let failure) = answer else {
                Issue.record("a wrong captcha logged in")
                return
            }
            #expect(failure.code == .badCaptcha)
            let fresh = try #require(failure.captcha)
            #expect(fresh.id != captcha.id)
            #expect(fresh.challenge.count == 5)
            // The new captcha works once.
            #expect(try await user.login(client, captcha: fresh, recorder: &quiet).succeeded)
            // and is used up.
            #expect(try await user.login(client, captcha: fresh, recorder: &quiet).failureCode == .badCaptcha)
        }
        #expect(try await harness.state("erin") == LoginState())
    }

    @Test("A captcha answer over 16 bytes is refused badCaptcha and leaves that captcha usable")
    func oversizedCaptchaAnswerLeavesTheCaptcha() async throws {
        let harness = try await Harness(policy: .seedDefault)
        var (user, client) = try await harness.registered("olga")
        var quiet = NoStepRecorder()
        let captcha = try await user.solveCaptcha(client, recorder: &quiet)
        let oversized = try await user.login(
            client,
            captcha: captcha,
            captchaAnswer: String(repeating: "A", count: 17),
            recorder: &quiet
        )
        #expect(oversized.failureCode == .badCaptcha)
        #expect(try await user.login(client, captcha: captcha, recorder: &quiet).succeeded, "the captcha is still good")
    }

    @Test func policyTablesAsPureFunctions() {
        let now = Date(timeIntervalSince1970: 1_000_000)
        let seed = LockoutPolicy.seedDefault
        var state = LoginState()
        var timeline: [String] = []
        for _ in 1...5 {
            state = seed.failed(state, now: now)
            timeline.append(
                "\(state.failures):\(state.postponedUntil.map { Int($0.timeIntervalSince(now)) } ?? 0):\(state.locked)"
            )
        }
        #expect(timeline == ["1:0:false", "2:0:false", "3:1800:false", "4:0:false", "5:0:true"])
        #expect(seed.gate(state, now: now.addingTimeInterval(1e9)) == .locked)
    }
}
