public import Foundation
public import LabCore
public import LabReport
public import LabResults
public import LabRunner
public import LabScenario

/// The registries a run draws on: what the scenario validator and the runner take
/// (`plugins`), and the reporters that write the run's reports. Tests and embedders add
/// their own plugins with `adding(provider:)`, `adding(suite:)`, `adding(flow:)`,
/// `adding(transport:)` and `adding(reporter:)`: a program that hands the result to
/// `LabCLI.main(catalog:)` is the `lab` with its plugins added (docs/architecture.md).
public struct PluginCatalog: Sendable {
    /// No plugins at all.
    public static let empty = PluginCatalog(
        plugins: Plugins(
            providers: ProviderRegistry([]),
            suites: SuiteRegistry([]),
            flows: FlowRegistry([]),
            transports: TransportRegistry([]),
            reporters: []
        ),
        reporters: ReporterRegistry([])
    )

    /// What the scenario validator and the runner take; its reporter names are `reporters`'.
    public private(set) var plugins: Plugins
    /// Reporters.
    public private(set) var reporters: ReporterRegistry

    /// A catalog of `plugins` and `reporters` (whose names it takes for `plugins.reporters`).
    public init(plugins: Plugins, reporters: ReporterRegistry) {
        self.plugins = plugins
        self.plugins.reporters = reporters.names
        self.reporters = reporters
    }


    /// This catalog with one more crypto provider (its name must be new).
    public func adding(provider: any CryptoProvider.Type) -> PluginCatalog {
        var catalog = self
        catalog.plugins.providers = ProviderRegistry(self.plugins.providers.types + [provider])
        return catalog
    }

    /// This catalog with one more cx/1 suite (its id must be new).
    public func adding(suite: any Suite.Type) -> PluginCatalog {
        var catalog = self
        catalog.plugins.suites = SuiteRegistry(self.plugins.suites.types + [suite])
        return catalog
    }

    /// This catalog with one more flow (its name must be new).
    public func adding(flow: any Flow.Type) -> PluginCatalog {
        var catalog = self
        catalog.plugins.flows = FlowRegistry(self.plugins.flows.types + [flow])
        return catalog
    }

    /// This catalog with one more transport (its name must be new).
    public func adding(transport: any Transport.Type) -> PluginCatalog {
        var catalog = self
        catalog.plugins.transports = TransportRegistry(self.plugins.transports.types + [transport])
        return catalog
    }

    /// This catalog with one more served protocol (its name and ops must be new): `lab serve`
    /// serves it beside the others.
    public func adding(served: any ServedProtocol.Type) -> PluginCatalog {
        var catalog = self
        ServedRequests.requireDistinct(self.plugins.served + [served])
        catalog.plugins.served.append(served)
        return catalog
    }

    /// This catalog with `value` under `key` in its extensions: the values of plugins with
    /// kinds of their own (msg/1's `MessagingKinds`), handed to every flow and server.
    public func with<Key: PluginExtensionKey>(_ key: Key.Type, _ value: Key.Value) -> PluginCatalog {
        var catalog = self
        catalog.plugins.extensions[key] = value
        return catalog
    }

    /// This catalog with one more reporter (its name must be new).
    public func adding(reporter: any Reporter.Type) -> PluginCatalog {
        var catalog = self
        catalog.reporters = ReporterRegistry(self.reporters.types + [reporter])
        catalog.plugins.reporters = catalog.reporters.names
        return catalog
    }

    /// Validates the scenario file at `path` against these plugins.
    public func plan(file path: String, overrides: [ScenarioOverride] = []) throws -> Plan {
        let result: Result<Plan, ScenarioErrors>
        if overrides.isEmpty {
            result = ScenarioValidator.validate(file: path, plugins: self.plugins)
        } else {
            let data = try InputFile.read(path)
            let changed = try ScenarioOverride.apply(overrides, to: data)
            result = ScenarioValidator.validate(data: changed, file: path, plugins: self.plugins)
        }
        switch result {
        case .success(let plan): return plan
        case .failure(let errors): throw Self.blamingOverrides(errors, overrides).labError
        }
    }

    /// `errors` with each problem an override made (at or under its path: a misspelled key,
    /// a value of the wrong type) said to come from `--set`, not the file; when every problem
    /// does, the heading names the overrides instead of the file.
    static func blamingOverrides(_ errors: ScenarioErrors, _ overrides: [ScenarioOverride]) -> ScenarioErrors {
        guard !overrides.isEmpty else { return errors }
        var blamed = errors
        var fromFile = 0
        blamed.problems = errors.problems.map { problem in
            guard let override = overrides.last(where: { $0.covers(problem.path) }) else {
                fromFile += 1
                return problem
            }
            return ScenarioProblem(
                path: problem.path,
                message: problem.message + " (set by --set \(override.argument), not in the file)"
            )
        }
        if fromFile == 0, let file = errors.file {
            blamed.file = "\(file) with " + overrides.map { "--set \($0.argument)" }.joined(separator: " ")
        }
        return blamed
    }

    /// Writes `result`'s reports in the formats its scenario asks for into `directory`,
    /// with these reporters.
    public func writeReports(_ result: RunResult, of plan: Plan, to directory: URL) throws -> [URL] {
        try self.reporters.writeReports(
            result,
            formats: plan.scenario.report.formats,
            charts: plan.scenario.report.charts,
            to: directory
        )
    }
}
