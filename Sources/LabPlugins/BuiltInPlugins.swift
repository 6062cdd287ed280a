public import Foundation
public import LabCore
import LabCrypto
import LabDiscovery
public import LabMessaging
import LabNIO
import LabOpenSSL
import LabProviders
public import LabReport
public import LabResults
public import LabRunner
public import LabScenario
import LabWire

/// The plugins that ship with the lab, listed once; the CLI and the tests share these lists.
/// A new plugin is one file plus one line in its list (docs/architecture.md, "Adding a
/// plugin"); reporters are listed in `ReporterRegistry.builtIn`, the others here.
public enum BuiltInPlugins {
    /// `swift-crypto` and `openssl`.
    public static let providers = BuiltInProviders.registry
    /// `classic`, `rsa-modern`, `x25519`, `pq`.
    public static let suites = SuiteRegistry.builtIn
    /// `cx`, then the messaging flows: `login`, `lockout`, `captcha-guess`, `chat`, `rekey`, `password-change`.
    public static let flows = FlowRegistry([CXFlow.self] + MessagingFlows.all)
    /// `in-process`, `tcp`, `tls`.
    public static let transports = TransportRegistry([InProcessTransport.self, TCPTransport.self, TLSTransport.self])
    /// `csv`, `markdown`, `json`.
    public static let reporters = ReporterRegistry.builtIn

    /// Every registry, as `lab run` uses them. The calibration yardstick runs on OpenSSL
    /// where it loads: the system's optimised library, the same in a debug and a release
    /// build of the lab, so calibrated figures compare across builds (docs/performance.md).
    public static let catalog = PluginCatalog(
        providers: providers,
        suites: suites,
        flows: flows,
        transports: transports,
        reporters: reporters,
        discovery: DNSSDDiscovery(),
        calibrationProviders: [OpenSSLProvider.name]
    )

    /// Everything, as the runner takes it.
    public static let all = catalog.plugins
}

/// The registries a run draws on: what the scenario validator and the runner take
/// (`plugins`), and the reporters that write the run's reports. Tests and embedders add
/// their own plugins with `adding(provider:)`, `adding(suite:)`, `adding(flow:)`,
/// `adding(transport:)` and `adding(reporter:)`: a program that hands the result to
/// `LabCLI.main(catalog:)` is the `lab` with its plugins added (docs/architecture.md).
public struct PluginCatalog: Sendable {
    /// What the scenario validator and the runner take; its reporter names are `reporters`'.
    public private(set) var plugins: Plugins
    /// Reporters.
    public private(set) var reporters: ReporterRegistry

    /// A catalog of these registries.
    public init(
        providers: ProviderRegistry,
        suites: SuiteRegistry,
        flows: FlowRegistry,
        transports: TransportRegistry,
        reporters: ReporterRegistry,
        discovery: (any Discovery)? = nil,
        calibrationProviders: [String] = []
    ) {
        self.plugins = Plugins(
            providers: providers,
            suites: suites,
            flows: flows,
            transports: transports,
            reporters: reporters.names,
            discovery: discovery,
            calibrationProviders: calibrationProviders
        )
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

    /// msg/1's KDFs, lockout policies, captchas and clocks: what messaging flows' options,
    /// stored hashes, `lab serve`'s msg/1 options, `lab list` and `lab schema` read.
    public var messagingKinds: MessagingKinds { self.plugins.extensions[MessagingKinds.self] }

    /// This catalog with one more msg/1 password KDF (its name must be new).
    public func adding(kdf: any PasswordKDFPlugin.Type) -> PluginCatalog {
        self.with(self.messagingKinds.adding(kdf: kdf))
    }

    /// This catalog with one more msg/1 lockout policy (its name must be new).
    public func adding(policy: any LockoutPolicyPlugin.Type) -> PluginCatalog {
        self.with(self.messagingKinds.adding(policy: policy))
    }

    /// This catalog with one more msg/1 captcha generator (its name must be new).
    public func adding(captcha: any CaptchaPlugin.Type) -> PluginCatalog {
        self.with(self.messagingKinds.adding(captcha: captcha))
    }

    /// This catalog with one more msg/1 clock (its name must be new).
    public func adding(clock: any ClockPlugin.Type) -> PluginCatalog {
        self.with(self.messagingKinds.adding(clock: clock))
    }

    private func with(_ kinds: MessagingKinds) -> PluginCatalog {
        var catalog = self
        catalog.plugins.extensions[MessagingKinds.self] = kinds
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
