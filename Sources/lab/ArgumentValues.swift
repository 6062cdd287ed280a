import ArgumentParser
import LabCore
import LabMessaging
import LabWire
import Logging

// Options whose values are a fixed set parse into their types, so that `--help` lists the
// values and a wrong one is refused, with the list, before the command runs (exit 1,
// `Lab.main`).
extension FramingStyle: ExpressibleByArgument {}
extension KeyLifetime: ExpressibleByArgument {}
extension CaptchaGenerator: ExpressibleByArgument {}
extension ClockKind: ExpressibleByArgument {}
extension Logger.Level: @retroactive ExpressibleByArgument {}

// Durations such as "30 s" or "1.5 min" (docs/scenarios.md), as in scenario files.
extension TimeSpan: ExpressibleByArgument {
    public init?(argument: String) { self.init(parsing: argument) }
    public var defaultValueDescription: String { self.description }
}
