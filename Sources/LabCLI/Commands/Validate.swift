import ArgumentParser
import LabCore
import LabPlugins
import LabRunner
import LabScenario

/// `lab validate FILE…`: checks scenario files without running them.
struct Validate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check scenario files and print every problem, with its JSON path."
    )

    @Argument(help: "Scenario files.")
    var files: [String]

    func run() async throws {
        var failed = false
        for file in self.files {
            switch ScenarioValidator.validate(file: file, plugins: LabCLI.catalog.plugins) {
            case .success(let plan):
                print(
                    "\(file): ok (\(plan.scenario.name): \(plan.flows.count) flow\(plan.flows.count == 1 ? "" : "s"), \(plan.thresholds.count) threshold\(plan.thresholds.count == 1 ? "" : "s"))"
                )
            case .failure(let errors):
                failed = true
                var standardError = StandardError()
                print(errors.description, to: &standardError)
            }
        }
        if failed { throw LabError.Code.invalidScenario.exitCode }
    }
}
