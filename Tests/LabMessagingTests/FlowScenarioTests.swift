import Foundation
import LabCore
import LabMessaging
import LabResults
import LabRunner
import LabSwiftCrypto
import LabTestKit
import LabTestSupport
import Testing

/// The messaging flows as scenarios: each runs with zero errors and counts the outcomes its
/// policy dictates.
@Suite(.tier(.load)) struct FlowScenarioTests {
    static let cheap = #""kdf": "pbkdf2-sha256", "pbkdf2Iterations": 1000"#

    static func run(
        _ flows: String,
        clients: Int = 2,
        iterations: Int = 3,
        transport: String = "in-process"
    )
        async throws -> RunResult
    {
        try await TestPlan.run(Self.scenario(flows, clients: clients, iterations: iterations, transport: transport))
    }

    static func scenario(
        _ flows: String,
        clients: Int = 2,
        iterations: Int = 3,
        transport: String = "in-process",
        server: String = ""
    ) -> String {
        """
        {
          "name": "msg-flows",
          "server": { "transport": "\(transport)"\(server) },
          "clients": { "count": \(clients) },
          "load": { "model": "closed", "iterations": \(iterations) },
          "flows": [ \(flows) ]
        }
        """
    }

    /// A flow's outcomes, without `captchaRenewed` (how often another client's jump of the
    /// shared virtual clock expired a captcha depends on scheduling).
    static func outcomes(_ result: RunResult, _ flow: String) -> [String: UInt64] {
        (result.groups.first { $0.key.flow == flow }?.outcomes ?? [:]).filter { $0.key != "captchaRenewed" }
    }

    @Test func captchaGuessBeatsMidsquareAndNotCSPRNG() async throws {
        let result = try await Self.run(
            """
            { "flow": "captcha-guess", "name": "vs-midsquare", "weight": 1, "options": { \(Self.cheap), "captcha": "midsquare" } },
            { "flow": "captcha-guess", "name": "vs-csprng", "weight": 1, "options": { \(Self.cheap) } }
            """,
            clients: 2,
            iterations: 20
        )
        #expect(result.errorCount == 0)
        let midsquare = Self.outcomes(result, "vs-midsquare")
        let csprng = Self.outcomes(result, "vs-csprng")
        let midsquareTries = result.groups.first { $0.key.flow == "vs-midsquare" }!.iterations
        #expect(midsquareTries > 0)
        #expect(midsquare["guessed"] == midsquareTries)
        #expect(midsquare["missed"] == nil)
        #expect(csprng["guessed"] == nil)
        #expect(csprng["missed"] == result.groups.first { $0.key.flow == "vs-csprng" }!.iterations)
        #expect(result.groups.first { $0.key.flow == "vs-midsquare" }!.insecure)
    }

    /// On the system clock too: the attacker reads its own clock, as a real one would.
    @Test func captchaGuessOnTheSystemClock() async throws {
        let result = try await Self.run(
            #"{ "flow": "captcha-guess", "options": { \#(Self.cheap), "captcha": "midsquare", "clock": "system" } }"#,
            clients: 1,
            iterations: 20
        )
        let outcomes = Self.outcomes(result, "captcha-guess")
        // A second can turn between the captcha and the guess; nearly every guess lands.
        #expect((outcomes["guessed"] ?? 0) >= 18)
    }

    @Test func lockoutUnderTheSeedPolicyLocks() async throws {
        let result = try await Self.run(
            #"{ "flow": "lockout", "options": { \#(Self.cheap), "policy": "seed", "untilLocked": true } }"#
        )
        #expect(result.errorCount == 0)
        let accounts: UInt64 = 6
        #expect(
            Self.outcomes(result, "lockout")
                == ["attempts": 5 * accounts, "postponed": accounts, "locked": accounts, "refused": accounts]
        )
    }

    @Test func lockoutUnderThrottleNeverLocks() async throws {
        let result = try await Self.run(
            #"{ "flow": "lockout", "options": { \#(Self.cheap), "maxAttempts": 12, "untilLocked": true } }"#
        )
        #expect(result.errorCount == 0)
        let accounts: UInt64 = 6
        #expect(
            Self.outcomes(result, "lockout")
                == [
                    "attempts": 12 * accounts, "postponed": 7 * accounts, "neverLocked": accounts,
                    "recovered": accounts,
                ]
        )
    }

    @Test func lockoutStopsAtTheFirstAction() async throws {
        let result = try await Self.run(
            #"{ "flow": "lockout", "options": { \#(Self.cheap), "policy": "seed" } }"#
        )
        let accounts: UInt64 = 6
        #expect(
            Self.outcomes(result, "lockout") == [
                "attempts": 3 * accounts, "postponed": accounts, "recovered": accounts,
            ]
        )
        // Without waiting, the right password during the postponement is refused.
        let impatient = try await Self.run(
            #"{ "flow": "lockout", "options": { \#(Self.cheap), "policy": "seed", "waitOut": false } }"#
        )
        #expect(
            Self.outcomes(impatient, "lockout") == [
                "attempts": 3 * accounts, "postponed": accounts, "refused": accounts,
            ]
        )
    }

    @Test("Logins and password changes against a service storing Argon2id hashes")
    func argon2idService() async throws {
        let argon2 = #""kdf": "argon2id", "argon2MemoryKiB": 256"#
        let result = try await Self.run(
            """
            { "flow": "login", "options": { \(argon2) } },
            { "flow": "password-change", "options": { \(argon2) } }
            """,
            clients: 2,
            iterations: 4,
            transport: "in-process"
        )
        #expect(result.errorCount == 0)
        #expect(result.completedIterations == 8)
        for group in result.groups {
            #expect(group.key.suite == "argon2id")
            #expect(group.steps[.kdf] != nil, "\(group.key): the kdf step ran")
        }
    }

    @Test(arguments: ["in-process", "tcp"])
    func everyFlowRunsClean(transport: String) async throws {
        let result = try await Self.run(
            """
            { "flow": "login", "options": { \(Self.cheap) } },
            { "flow": "chat", "options": { \(Self.cheap) } },
            { "flow": "rekey", "options": { \(Self.cheap), "history": 50 } },
            { "flow": "password-change", "options": { \(Self.cheap) } }
            """,
            clients: 3,
            iterations: 8,
            transport: transport
        )
        #expect(result.errorCount == 0)
        #expect(result.completedIterations == 24)
        let steps = Dictionary(uniqueKeysWithValues: result.groups.map { ($0.key.flow, Set($0.steps.keys)) })
        #expect(steps["login"]?.isSuperset(of: [.login, .captcha, .kdf]) == true)
        #expect(steps["chat"]?.isSuperset(of: [.send, .fetch, .encrypt, .decrypt]) == true)
        #expect(steps["rekey"]?.isSuperset(of: [.rekey, .fetch]) == true)
        #expect(steps["password-change"]?.isSuperset(of: [.passwordChange, .kdf]) == true)
        for group in result.groups {
            #expect(group.key.suite == "pbkdf2-sha256")
            #expect(group.key.provider == "swift-crypto")
        }
    }

    @Test("chat and rekey make messages and chat keys on the entry's provider; the service stays on swift-crypto")
    func messagesOnTheEntrysProvider() async throws {
        let flows = """
            { "flow": "chat", "clientProvider": "openssl", "options": { \(Self.cheap) } },
            { "flow": "rekey", "clientProvider": "openssl", "options": { \(Self.cheap), "history": 5 } }
            """
        let clean = try await TestPlan.run(Self.scenario(flows))
        #expect(clean.errorCount == 0 && clean.completedIterations == 6, "\(clean.groups.map(\.errors))")
        #expect(Set(clean.groups.map(\.key.provider)) == ["openssl→swift-crypto"])

        // The clients' provider, swapped for one whose AES-GCM output has a flipped bit:
        // every message fails to decrypt, so the flows do use it.
        var plan = try TestPlan.from(Self.scenario(flows))
        for index in plan.flows.indices {
            plan.flows[index].setup.clientProvider = FaultyProvider(SwiftCryptoProvider(), faults: [.aesGCM])
        }
        let broken = try await Runner(plan: plan).run()
        // Every one of the 6 iterations fails (the flows share them by weight), on decryption.
        let failed = broken.groups.map { $0.errors.values.reduce(0, +) }
        #expect(failed.reduce(0, +) == 6 && failed.allSatisfy { $0 > 0 }, "\(broken.groups.map(\.errors))")
        #expect(broken.groups.allSatisfy { Array($0.errors.keys) == ["decryptFailed"] }, "\(broken.groups.map(\.errors))")

        // The service's HPKE and KDFs have no provider but swift-crypto: another is refused
        // there, where the scenario named it.
        for (server, entry, path) in [
            (#", "provider": "openssl""#, "", "$.server.provider"),
            ("", #""provider": "openssl", "#, "$.flows[0].provider"),
        ] {
            let refused = #expect(throws: LabError.self) {
                try TestPlan.from(Self.scenario(#"{ "flow": "chat", \#(entry)"options": { \#(Self.cheap) } }"#, server: server))
            }
            let said = refused.map { "\($0)" } ?? ""
            #expect(said.contains("\(path): the msg/1 service runs HPKE, scrypt and PBKDF2 on swift-crypto"), "\(said)")
        }

        // A clients' provider that does not claim AES-GCM is refused where the entry named it.
        var setup = plan.flows[0].setup
        setup.clientProvider = FaultyProvider(SwiftCryptoProvider(), faults: [], withholding: [.aesGCM])
        let options = try #require(MessagingFlow<ChatScript>.decodeOptions(setup.entry.options, at: "$", extensions: setup.extensions).options)
        let problems = MessagingFlow<ChatScript>.check(setup, options: options)
        #expect(problems.map(\.path) == ["clientProvider"], "\(problems)")
        #expect(problems.first?.message.contains("AES-256-GCM") == true, "\(problems)")
    }
}
