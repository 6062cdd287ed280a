public import ArgumentParser
import Foundation
public import LabCore
import LabMessaging
public import LabRunner
import LabScenario
import LabServer
import LabWire
import Logging

// Options whose values are a fixed set parse into their types, so that `--help` lists the
// values and a wrong one is refused, with the list, before the command runs (exit 1,
// `Lab.main`).
extension FramingStyle: ExpressibleByArgument {}
extension KeyLifetime: ExpressibleByArgument {}
extension MsgHPKE: ExpressibleByArgument {}
extension Logger.Level: @retroactive ExpressibleByArgument {}
extension LogFormat: ExpressibleByArgument {}

// `lab run --shard K/N`, with 1 ≤ K ≤ N.
extension Shard: ExpressibleByArgument {
    public init?(argument: String) { self.init(parsing: argument) }
}

/// `lab run --test-slowdown STEP=PERCENT%` (test only), e.g. `encrypt=25%`: the step made
/// that much slower with real work (`StepSlowdown`).
struct Slowdown: ExpressibleByArgument {
    /// The steps `--test-slowdown exchange.work=P%` slows: cx/1's steps of an exchange, each
    /// side's, so that its work (`Step.work`) grows by P%.
    static let workSteps: [Step] = [.keygenSession, .encode, .decode, .wrap, .unwrap, .encrypt, .decrypt, .sign, .verify]

    var step: Step
    /// 0.25 for 25%.
    var fraction: Double
    /// As given.
    var argument: String

    init?(argument: String) {
        self.argument = argument
        let parts = argument.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2, !parts[0].isEmpty, parts[1].hasSuffix("%"),
            let percent = Double(parts[1].dropLast()), percent > 0, percent.isFinite
        else { return nil }
        self.step = Step(parts[0])
        self.fraction = percent / 100
    }
}

// Durations such as "30 s" or "1.5 min" (docs/scenarios.md), as in scenario files.
extension TimeSpan: ExpressibleByArgument {
    public init?(argument: String) { self.init(parsing: argument) }
    public var defaultValueDescription: String { self.description }
}

/// `lab run --tag KEY=VALUE`: a label carried into results.json and report.md (a branch, a
/// pull request, a machine pool). The key is letters, digits, `_`, `-` and `.`.
struct Tag: ExpressibleByArgument {
    var key: String
    var value: String

    init?(argument: String) {
        let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")
        guard parts.count == 2, !parts[0].isEmpty, parts[0].allSatisfy(allowed.contains) else { return nil }
        self.key = parts[0]
        self.value = parts[1]
    }
}

/// `lab run --start-at 2026-11-25T05:00:00Z`: an instant in ISO 8601 (UTC or with an
/// offset, seconds fractions allowed), or seconds since 1970.
struct StartTime: ExpressibleByArgument {
    var date: Date

    init?(argument: String) {
        if let seconds = Double(argument), seconds.isFinite, seconds > 0 {
            self.date = Date(timeIntervalSince1970: seconds)
            return
        }
        let plain = ISO8601DateFormatter()
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let date = plain.date(from: argument) ?? fractional.date(from: argument) else { return nil }
        self.date = date
    }
}

extension ScenarioOverride {
    /// `lab run --set PATH=VALUE`: a change to the scenario before it is read, or a usage
    /// error saying what is wrong with the argument (ArgumentParser prints it after "The
    /// value … is invalid").
    static func argument(_ text: String) throws -> ScenarioOverride {
        do {
            return try ScenarioOverride.parse(text)
        } catch let error as LabError {
            throw ValidationError(error.message)
        }
    }
}

/// `lab serve --suites x25519,classic@1024`: the suites offered, each `id` or `id@bits`. The
/// ids are checked against the registry when the server is built, with the list of known ones.
struct SuiteList: ExpressibleByArgument {
    var choices: [SuiteChoice]

    init?(argument: String) {
        guard let choices = SuiteChoice.list(parsing: argument) else { return nil }
        self.choices = choices
    }

    var defaultValueDescription: String { self.choices.map(\.description).joined(separator: ",") }
}
