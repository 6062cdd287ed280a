import Foundation
import LabBuiltIns
import LabCX
import LabCore
import LabFuzzSupport
import LabMessaging
import LabRunner
import LabWire

/// Scenario files: `lab run`'s and `lab validate`'s parser and checks, on any text.
///
/// The plugins are the catalog's, but for the transports that cross a socket, which a fuzzer
/// must not open (a scenario naming `tcp` is reported as naming an unknown transport, through
/// the same code path as any other name).
///
/// Properties: a scenario is either a plan or at least one problem; every problem names a
/// JSON path that starts at the root (`$`) and says what was expected.
public enum ScenarioTarget {
    private static let plugins: Plugins = {
        var plugins = BuiltInPlugins.all
        plugins.transports = TransportRegistry(plugins.transports.types.filter { !$0.usesNetwork })
        return plugins
    }()

    /// One input from libFuzzer (`Fuzz/Targets/scenario`), on libFuzzer's thread: no task, no
    /// allocation that outlives the input (libFuzzer takes one for a leak and runs LeakSanitizer).
    public static func fuzz(_ data: UnsafePointer<UInt8>?, _ count: Int) {
        fuzzInput("scenario", data, count, Self.run)
    }

    /// Runs one input; throws `FuzzFailure` when a property does not hold.
    public static func run(_ input: [UInt8]) throws {
        switch ScenarioValidator.validate(data: Data(input), plugins: Self.plugins) {
        case .success:
            break
        case .failure(let errors):
            try expect(!errors.problems.isEmpty, "a scenario was refused without a problem")
            for problem in errors.problems {
                try expect(problem.path.hasPrefix("$"), "a problem's path '\(problem.path)' does not start at '$'")
                try expect(!problem.message.isEmpty, "a problem at \(problem.path) says nothing")
            }
        }
    }
}
