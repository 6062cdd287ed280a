import Foundation
import LabCore
import LabMessaging
import LabTesting
import LabWire
import Testing

/// Issue 37 ("sessions never expire and are not capped; a locked account's old token still
/// works"): the session book is capped, and a lock ends the account's sessions.
@Suite(.tier(.load)) struct SessionLimitTests {
    /// Whether `token` still opens a session: `peerKey` answers, or `notLoggedIn`.
    static func works(_ token: String, _ client: MessagingClient) async throws -> Bool {
        var quiet = NoStepRecorder()
        let answer = try await client.call(
            .peerKey,
            {
                $0.set(MsgKey.token, string: token)
                $0.set(MsgKey.username, string: "alice")
            },
            recorder: &quiet
        )
        if case .failure(let failure) = answer {
            #expect(failure.code == .notLoggedIn, "\(failure)")
            return false
        }
        return true
    }

    @Test("seed: the login that locks an account ends its sessions; the owner's old token stops working")
    func lockEndsTheSessions() async throws {
        let harness = try await Harness(policy: .seedDefault)
        var (alice, client) = try await harness.registered("alice")
        var quiet = NoStepRecorder()
        try await alice.logIn(client, recorder: &quiet)
        let token = try #require(alice.token)
        #expect(try await Self.works(token, client))
        var attacker = MessagingUser(username: "alice", password: "a guess")
        var codes: [MsgErrorCode?] = []
        for _ in 0..<5 {
            codes.append(try await Harness.attempt(&attacker, client, password: "a guess").failureCode)
            // Harness's clock: wait out the seed policy's postponement.
            harness.clock.advance(by: 3_600)
        }
        #expect(try await harness.state("alice")?.locked == true, "\(codes)")
        #expect(try await Self.works(token, client) == false, "the locked account's token still works")
    }

    @Test("past the cap, a login ends the oldest session")
    func sessionsAreCapped() async throws {
        let harness = try await Harness(maxSessions: 3)
        var (alice, client) = try await harness.registered("alice")
        var quiet = NoStepRecorder()
        var tokens: [String] = []
        for _ in 0..<4 {
            try await alice.logIn(client, recorder: &quiet)
            tokens.append(try #require(alice.token))
        }
        #expect(try await Self.works(tokens[0], client) == false, "the oldest session outlived the cap")
        for token in tokens.dropFirst() { #expect(try await Self.works(token, client)) }
        #expect(harness.service.sessionCount == 3)
    }
}
