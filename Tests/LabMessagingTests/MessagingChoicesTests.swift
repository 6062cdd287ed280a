import Foundation
import LabBuiltIns
import LabCore
import LabMessaging
import LabTestSupport
import Testing

/// msg/1's plugin kinds (`MessagingKinds`): each kind's default is the one the service
/// really starts with, every built-in KDF reads back what it stores, and `lab list` shows
/// them all.
@Suite(.tier(.unit)) struct MessagingChoicesTests {
    @Test("A catalog without msg/1's kinds refuses a messaging flow's options with a problem, not a trap")
    func noKindsIsAProblem() {
        let decoded = MessagingFlow<LoginScript>.decodeOptions(.object([:]), at: "$.flows[0].options")
        #expect(
            decoded.problems.map(\.path) == ["$.flows[0].options.kdf"]
                && decoded.problems.first?.message.contains("no msg/1 KDFs") == true,
            "\(decoded.problems)"
        )
        var extensions = PluginExtensions()
        extensions[MessagingKinds.self] = BuiltInPlugins.messagingKinds
        let withKinds = MessagingFlow<LoginScript>.decodeOptions(.object([:]), at: "$", extensions: extensions)
        #expect(withKinds.options != nil && withKinds.problems.isEmpty, "\(withKinds.problems)")
    }

    @Test("Each kind's marked default is what a service with no options runs")
    func defaultsAreTheServices() throws {
        let kinds = BuiltInPlugins.messagingKinds
        let service = ServiceSpec()
        #expect(kinds.defaultKDF.choice.name == service.options.kdf.name)
        #expect(kinds.defaultPolicy.choice.name == service.options.policy.name)
        #expect(kinds.defaultCaptcha.choice.name == service.options.captcha.name)
        for kdf in kinds.kdfs {
            let made = kdf.init()
            #expect(made.name == kdf.choice.name)
            #expect(kinds.kdf(stored: made.description) == PasswordKDF(made), "\(made) reads back")
        }
    }

    @Test("lab list shows every msg/1 choice, with its summary")
    func labListShowsThem() async throws {
        let outcome = try await ChildProcess.run(LabProcess.executable, ["list"])
        #expect(outcome.status == 0, "\(outcome.output)")
        let lines = outcome.output.split(separator: "\n").map(String.init)
        let start = try #require(lines.firstIndex { $0.hasPrefix("Messaging service (msg/1") }, "\(outcome.output)")
        let section = lines[start...].prefix { !$0.isEmpty }
        for (kind, choices) in BuiltInPlugins.messagingKinds.all {
            #expect(section.contains("  \(kind):"), "\(kind) in: \(section)")
            for choice in choices {
                #expect(
                    section.contains { $0.hasPrefix("    \(choice.name) ") && $0.contains(choice.summary) },
                    "\(kind) \(choice.name) in: \(section)"
                )
            }
        }
    }
}
