import Foundation
import LabCore
import LabMessaging
import LabTesting
import Testing

/// msg/1's plugin kinds (`MessagingChoices`): each listed choice is a setting the service
/// has, with the default and the insecure mark it really has, and `lab list` shows them all.
@Suite(.tier(.unit)) struct MessagingChoicesTests {
    @Test("Every listed KDF, policy, captcha and clock is one the service has, with its real default and mark")
    func choicesMatchTheSettings() throws {
        for choice in MessagingChoices.kdfs {
            let kdf = try #require(PasswordKDF(name: choice.name), "KDF \(choice.name)")
            #expect(kdf.isInsecure == choice.isInsecure, "KDF \(choice.name)")
        }
        #expect(MessagingChoices.kdfs.filter(\.isDefault).map(\.name) == [PasswordKDF.default.name])

        let policies = [LockoutPolicy.default, LockoutPolicy.seedDefault]
        #expect(MessagingChoices.policies.map(\.name) == policies.map(\.name))
        #expect(MessagingChoices.policies.map(\.isInsecure) == policies.map(\.isInsecure))
        #expect(MessagingChoices.policies.filter(\.isDefault).map(\.name) == [LockoutPolicy.default.name])

        #expect(MessagingChoices.captchas.map(\.name) == CaptchaGenerator.allCases.map(\.rawValue))
        #expect(MessagingChoices.captchas.map(\.isInsecure) == CaptchaGenerator.allCases.map(\.isInsecure))
        #expect(MessagingChoices.captchas.filter(\.isDefault).map(\.name) == [ServiceSpec().options.captcha.rawValue])

        #expect(MessagingChoices.clocks.map(\.name) == ClockKind.allCases.map(\.rawValue))
    }

    @Test("lab list shows every msg/1 choice, with its summary")
    func labListShowsThem() async throws {
        let outcome = try await ChildProcess.run(LabProcess.executable, ["list"])
        #expect(outcome.status == 0, "\(outcome.output)")
        let lines = outcome.output.split(separator: "\n").map(String.init)
        let start = try #require(lines.firstIndex { $0.hasPrefix("Messaging service (msg/1") }, "\(outcome.output)")
        let section = lines[start...].prefix { !$0.isEmpty }
        for (kind, choices) in MessagingChoices.all {
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
