import ArgumentParser
import LabCore
import LabKit
import LabRunner
import LabScenario

/// `lab validate FILE…`: checks scenario files without running them.
struct Validate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check scenario files and print every problem, with its JSON path."
    )

    @Argument(help: "Scenario files.")
    var files: [String]

    @OptionGroup var changes: ScenarioChanges

    func run() async throws {
        var failed = false
        for file in self.files {
            do {
                let plan = try LabCLI.catalog.plan(file: file, overrides: self.changes.overrides)
                print(
                    "\(file): ok (\(plan.scenario.name): \(plan.flows.count) flow\(plan.flows.count == 1 ? "" : "s"), \(plan.thresholds.count) threshold\(plan.thresholds.count == 1 ? "" : "s"))"
                )
            } catch let error as LabError {
                failed = true
                var standardError = StandardError()
                print(error.message, to: &standardError)
            }
        }
        if failed { throw LabError.Code.invalidScenario.exitCode }
    }
}

/// `--set PATH=VALUE`: changes to a scenario before it is read, the same for `lab run` and
/// `lab validate`.
struct ScenarioChanges: ParsableArguments {
    @Option(
        name: .customLong("set"),
        help: ArgumentHelp(
            "Change the scenario before it is read (repeatable): a JSON path and a JSON value, e.g. --set load.iterations=100 --set 'flows[0].suite=x25519'; null removes a key or an element.",
            valueName: "PATH=VALUE"
        ),
        transform: ScenarioOverride.argument
    )
    var overrides: [ScenarioOverride] = []
}
