import Foundation
import LabCore
import LabMessaging
import LabTestSupport
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

    /// Issue 51, break 5: the cap was global, so one account's logins ended everyone's
    /// sessions (the trial: 100,200 logins of one account ended the owner's). Scaled down: a
    /// book of 100, one account's 200 logins.
    @Test("one account's logins past every cap end only its own sessions; the owner's stays")
    func oneAccountEndsOnlyItsOwnSessions() async throws {
        let harness = try await Harness(maxSessions: 100, maxSessionsPerAccount: 16)
        var (alice, client) = try await harness.registered("alice")
        var quiet = NoStepRecorder()
        try await alice.logIn(client, recorder: &quiet)
        let owner = try #require(alice.token)
        var (mallory, _) = try await harness.registered("mallory")
        var tokens: [String] = []
        for _ in 0..<200 {
            try await mallory.logIn(client, recorder: &quiet)
            tokens.append(try #require(mallory.token))
        }
        #expect(try await Self.works(owner, client), "the owner's session ended")
        #expect(harness.service.sessionCount == 17, "16 of mallory's and the owner's")
        #expect(try await Self.works(tokens[183], client) == false, "mallory's 17th newest outlived its account's cap")
        #expect(try await Self.works(tokens[184], client))
    }

    /// Past the book's cap, the session that ends is the oldest of an account holding the
    /// most, not the oldest of all: the owner's single session outlives accounts of four.
    @Test("past the book's cap, an account holding the most gives up its oldest, not the owner")
    func theBusiestAccountGivesUpASession() async throws {
        let harness = try await Harness(maxSessions: 12, maxSessionsPerAccount: 4)
        var (alice, client) = try await harness.registered("alice")
        var quiet = NoStepRecorder()
        try await alice.logIn(client, recorder: &quiet)
        let owner = try #require(alice.token)
        var firsts: [String] = []
        for index in 0..<4 {
            var (attacker, _) = try await harness.registered("mallory\(index)")
            for login in 0..<4 {
                try await attacker.logIn(client, recorder: &quiet)
                if login == 0 { firsts.append(try #require(attacker.token)) }
            }
        }
        #expect(harness.service.sessionCount == 12)
        #expect(try await Self.works(owner, client), "the owner's session, the oldest of all, ended")
        // 17 logins into 12 places: five ended, each the oldest of an account at four.
        let ended = try await firsts.asyncFilter { try await Self.works($0, client) == false }
        #expect(ended.count >= 2, "the attackers' oldest sessions ended: \(ended.count)")
    }
}

extension Array {
    fileprivate func asyncFilter(_ isIncluded: (Element) async throws -> Bool) async rethrows -> [Element] {
        var kept: [Element] = []
        for element in self where try await isIncluded(element) { kept.append(element) }
        return kept
    }
}
