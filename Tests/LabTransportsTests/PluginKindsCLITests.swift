import Foundation
import LabTestSupport
import Testing

/// msg/1's plugin kinds defined in a test target (Tests/PluginLab: `test-kdf`, `lock-at`,
/// `fixed`, `late`), added through the catalog: a messaging flow's options name them under
/// `lab run`, `lab serve` runs them, and the built-in lab refuses them where they are named.
@Suite(.tier(.integration)) struct PluginKindsCLITests {
    /// A `lockout` flow whose service is made of the test plugins.
    static func scenario(server: String, options: String) -> String {
        """
        {
          "name": "test-kinds",
          "server": \(server),
          "clients": { "count": 1 },
          "load": { "iterations": 3, "deadline": "60 s" },
          "flows": [ { "flow": "lockout", "options": { "untilLocked": true, "maxAttempts": 6\(options) } } ],
          "thresholds": { "errors": "== 0" }
        }
        """
    }

    static let testKinds = #", "kdf": "test-kdf", "testKDFRounds": 3, "policy": "lock-at", "lockAt": 2, "captcha": "fixed", "clock": "late""#

    /// What `lock-at` with `lockAt` 2 does to each of 3 victims: two wrong passwords counted,
    /// the second locks, the third is refused as locked, and so is the right one. The
    /// built-in policies postpone before they lock, so their counts differ.
    static func expectLockedAtTwo(_ groups: [[String: Any]], _ outcome: ChildProcess.Outcome) {
        #expect(outcome.status == 0, "\(outcome.output)\(outcome.errors)")
        let group = groups.first { $0["flowKind"] as? String == "lockout" }
        let outcomes = group?["outcomes"] as? [String: Any] ?? [:]
        #expect(outcomes["attempts"] as? Int == 6, "\(outcomes)")
        #expect(outcomes["locked"] as? Int == 3, "\(outcomes)")
        #expect(outcomes["refused"] as? Int == 3, "\(outcomes)")
        #expect(outcomes["postponed"] == nil, "\(outcomes)")
    }

    @Test("lab run: a lockout flow on the test KDF, policy, captcha and clock, named in its options")
    func runUsesThem() async throws {
        let (outcome, groups) = try await PluginCLITests.run(
            PluginCLITests.pluginLab,
            Self.scenario(server: #"{ "transport": "in-process" }"#, options: Self.testKinds)
        )
        Self.expectLockedAtTwo(groups, outcome)
        let group = groups.first { $0["flowKind"] as? String == "lockout" }
        let key = group?["key"] as? [String: Any] ?? [:]
        #expect(key["suite"] as? String == "test-kdf", "the KDF names the group: \(key)")
        #expect(group?["insecure"] as? Bool == true, "lock-at and fixed are marked insecure")
    }

    @Test("lab serve: --kdf, --policy, --captcha and --clock take the test plugins, --msg-option their keys")
    func serveRunsThem() async throws {
        let server = try ServerProcess(
            PluginCLITests.pluginLab,
            [
                "serve", "--host", "127.0.0.1", "--port", "0", "--kdf", "test-kdf", "--msg-option", "testKDFRounds=3",
                "--policy", "lock-at", "--msg-option", "lockAt=2", "--captcha", "fixed", "--clock", "late", "--db",
                FileManager.default.temporaryDirectory.appendingPathComponent("kinds-\(UUID().uuidString).sqlite").path,
            ]
        )
        let address = try await ListeningAddress.of(server, timeout: .seconds(20))
        try await withCleanup({ _ = try? await server.stop(timeout: .seconds(10)) }) {
            let line = try await server.line(startingWith: "msg/1:", timeout: .seconds(10))
            for part in ["kdf test-kdf:3", "policy lock-at (locked at 2 failures)", "captcha fixed"] {
                #expect(line.contains(part), "\(part) in: \(line)")
            }
            let (outcome, groups) = try await PluginCLITests.run(
                PluginCLITests.pluginLab,
                Self.scenario(server: #"{ "transport": "tcp", "address": "\#(address)" }"#, options: "")
            )
            Self.expectLockedAtTwo(groups, outcome)
        }
    }

    @Test("lab serve refuses a test plugin's key out of range, naming it, before it listens")
    func serveRefusesABadKey() async throws {
        let outcome = try await ChildProcess.run(
            PluginCLITests.pluginLab,
            ["serve", "--policy", "lock-at", "--msg-option", "lockAt=0", "--port", "0"]
        )
        #expect(outcome.status == 1)
        #expect(outcome.errors.contains("--msg-option lockAt: expected a count from 1 to 1000"), "\(outcome.errors)")
    }

    @Test("The built-in lab refuses each test plugin and key where the scenario names it")
    func builtInLabRefusesThem() async throws {
        let (outcome, _) = try await PluginCLITests.run(
            LabProcess.executable,
            Self.scenario(server: #"{ "transport": "in-process" }"#, options: Self.testKinds)
        )
        #expect(outcome.status == 1)
        for key in ["kdf", "testKDFRounds", "policy", "lockAt", "captcha", "clock"] {
            #expect(outcome.errors.contains("$.flows[0].options.\(key)"), "\(key) in: \(outcome.errors)")
        }
        let serve = try await ChildProcess.run(LabProcess.executable, ["serve", "--kdf", "test-kdf", "--port", "0"])
        #expect(serve.status == 1)
        #expect(serve.errors.contains("test-kdf"), "\(serve.errors)")
    }
}
