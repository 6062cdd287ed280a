import Foundation
import LabCore
import LabResults
import LabScenario

/// A flow entry ready to build: its label, type and checked options.
public struct PlannedFlow: Sendable {
    /// Index in `"flows"`.
    public var index: Int
    /// The entry as written.
    public var entry: FlowEntry
    /// The label reports and thresholds use.
    public var label: String
    /// The flow plugin's name.
    public var kind: String
    /// The steps the flow records.
    public var steps: [Step]
    /// The plugins and settings it is built from.
    public var setup: FlowSetup
    /// Builds the flow (its server side) with the run's data folder, recording set-up steps.
    let make: @Sendable (inout StepTimings, String?) throws -> any Flow
}

/// A scenario that passed every check, with its plugins resolved: what `Runner` runs.
public struct Plan: Sendable {
    /// The scenario.
    public var scenario: Scenario
    /// The file's text.
    public var text: String
    /// The file's path, if it came from one.
    public var file: String?
    /// The flows, in file order.
    public var flows: [PlannedFlow]
    /// The parsed thresholds, sorted by metric.
    public var thresholds: [Threshold]
    /// The loaded providers.
    public var providers: [any CryptoProvider]
    /// The plugins.
    public var plugins: Plugins
    /// The transport's settings, with the TLS files' paths resolved.
    public var transportOptions: TransportOptions
    /// Where the run keeps its files, e.g. the messaging service's default database (`lab
    /// run` sets the report folder); nil: a fresh temporary folder.
    public var dataDirectory: String?
    /// The slice of the client population to run (`lab run --shard K/N`); nil: every client.
    public var shard: Shard?
    /// Test-only: steps made slower by real work inside their timed region, as a fraction of
    /// their own time (0.25 = 25% slower; see `StepSlowdown`), so comparisons and checks can
    /// be shown to find a real slowdown. Empty in every normal run.
    public var slowdowns: [Step: Double] = [:]
}

/// One of N equal slices of a scenario's clients: `lab run --shard K/N`.
///
/// Clients keep their index in the whole population, so each one's seed, ramp-up offset
/// and open-model schedule are those it has in the unsharded run, and no two shards share a
/// seed: N shards together run exactly the unsharded run's clients and exchanges.
public struct Shard: Sendable, Hashable, CustomStringConvertible {
    /// Which slice, 1 to `count`.
    public var index: Int
    /// How many slices.
    public var count: Int

    /// `K/N` with 1 ≤ K ≤ N; nil otherwise.
    public init?(parsing text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]), count >= 1,
            (1...count).contains(index)
        else { return nil }
        self.index = index
        self.count = count
    }

    /// A shard.
    public init(index: Int, count: Int) {
        precondition(count >= 1 && (1...count).contains(index), "shard \(index)/\(count)")
        self.index = index
        self.count = count
    }

    /// `K/N`.
    public var description: String { "\(self.index)/\(self.count)" }

    /// The indices of this slice's clients among `population`: slices differ by at most one.
    public func clients(of population: Int) -> Range<Int> {
        (population * (self.index - 1) / self.count)..<(population * self.index / self.count)
    }
}

/// Checks a scenario file against the plugins before anything runs, finding every problem at once.
public enum ScenarioValidator {
    /// The step the runner adds in the open model: time from an exchange's actual start.
    public static let serviceSuffix = ".service"

    /// Reads and checks the file at `path`.
    public static func validate(file path: String, plugins: Plugins) -> Result<Plan, ScenarioErrors> {
        guard let data = FileManager.default.contents(atPath: path) else {
            return .failure(
                ScenarioErrors(file: path, problems: [ScenarioProblem(path: "$", message: "cannot read the file")])
            )
        }
        return self.validate(data: data, file: path, plugins: plugins)
    }

    /// Checks a scenario's JSON text.
    public static func validate(data: Data, file: String? = nil, plugins: Plugins) -> Result<Plan, ScenarioErrors> {
        let (decoded, shapeProblems) = Scenario.decode(data)
        var problems = shapeProblems
        guard let scenario = decoded else {
            return .failure(ScenarioErrors(file: file, problems: problems))
        }
        var providers: [String: any CryptoProvider] = [:]
        var loaded: [any CryptoProvider] = []
        for type in plugins.providers.types {
            if let provider = try? type.init() {
                providers[type.name] = provider
                loaded.append(provider)
            }
        }
        func provider(_ name: String, at path: String) -> (any CryptoProvider)? {
            if let provider = providers[name] { return provider }
            if plugins.providers.names.contains(name) {
                problems.append(
                    ScenarioProblem(path: path, message: "the provider '\(name)' could not start on this machine")
                )
            } else {
                let names = plugins.providers.names
                problems.append(
                    ScenarioProblem(
                        path: path,
                        message:
                            unknownPluginMessage(kind: "provider", name: name, known: names)
                    )
                )
            }
            return nil
        }

        if !plugins.transports.names.contains(scenario.server.transport) {
            let names = plugins.transports.names
            problems.append(
                ScenarioProblem(
                    path: "$.server.transport",
                    message:
                        unknownPluginMessage(kind: "transport", name: scenario.server.transport, known: names)
                )
            )
        }
        let (transportOptions, serverProblems) = Self.checkServer(
            scenario.server,
            flowCount: scenario.flows.count,
            file: file,
            plugins: plugins
        )
        problems += serverProblems
        let serverProvider = provider(scenario.server.provider, at: "$.server.provider")
        for (index, format) in scenario.report.formats.enumerated() where !plugins.reporters.contains(format) {
            problems.append(
                ScenarioProblem(
                    path: "$.report.formats[\(index)]",
                    message:
                        unknownPluginMessage(kind: "reporter", name: format, known: plugins.reporters)
                )
            )
        }

        let labels = Self.labels(for: scenario.flows)
        var planned: [PlannedFlow] = []
        for (index, entry) in scenario.flows.enumerated() {
            let path = "$.flows[\(index)]"
            if let name = entry.name, let first = scenario.flows.firstIndex(where: { $0.name == name }), first != index
            {
                problems.append(
                    ScenarioProblem(
                        path: "\(path).name",
                        message: "the label '\(name)' is already used by $.flows[\(first)]; labels must be unique"
                    )
                )
            }
            guard let type = plugins.flows.type(named: entry.flow) else {
                if !entry.flow.isEmpty {
                    let names = plugins.flows.names
                    problems.append(
                        ScenarioProblem(
                            path: "\(path).flow",
                            message:
                                unknownPluginMessage(kind: "flow", name: entry.flow, known: names)
                        )
                    )
                }
                continue
            }
            let serverSide = entry.provider.map { provider($0, at: "\(path).provider") } ?? serverProvider
            let clientSide = entry.clientProvider.map { provider($0, at: "\(path).clientProvider") } ?? serverSide
            guard var server = serverSide, let client = clientSide else { continue }
            // A server elsewhere brings its own provider; the label shows the clients' alone.
            if !scenario.server.startsServer { server = client }
            let setup = FlowSetup(
                entry: entry,
                label: labels[index],
                suite: entry.suite,
                clientProvider: client,
                serverProvider: server,
                providers: loaded,
                serverKeys: scenario.server.keys,
                transport: scenario.server.transport,
                startsServer: scenario.server.startsServer,
                database: scenario.server.database.map { database in
                    database.hasPrefix("/") || file == nil
                        ? database
                        : URL(
                            fileURLWithPath: database,
                            relativeTo: URL(fileURLWithPath: file!).deletingLastPathComponent()
                        )
                        .standardizedFileURL.path
                }
            )
            let (flow, flowProblems) = Self.plan(type, index: index, setup: setup)
            problems += flowProblems
            if let flow { planned.append(flow) }
        }

        var failedNames = Set<String>()
        for (index, entry) in scenario.flows.enumerated() where !planned.contains(where: { $0.index == index }) {
            failedNames.insert(labels[index])
            // The flow's name still has steps to check against if another entry of it planned.
            if !planned.contains(where: { $0.kind == entry.flow }) { failedNames.insert(entry.flow) }
        }
        if planned.count < scenario.flows.count, problems.isEmpty {
            problems.append(ScenarioProblem(path: "$.flows", message: "a flow could not be planned"))
        }
        let usesNetwork = plugins.transports.types.first { $0.name == scenario.server.transport }?.usesNetwork ?? false
        let transportSteps: [Step] =
            (scenario.server.discover != nil ? [.discover] : []) + (usesNetwork ? [.connect] : [])
        var steps: [String: [Step]] = [:]
        for flow in planned {
            let all =
                transportSteps + flow.steps
                + (scenario.load.model == .open
                    ? flow.steps.filter { $0 == .exchange }.map { Step($0.name + Self.serviceSuffix) } : [])
            steps[flow.label] = all
            steps[flow.kind, default: []] += all.filter { !(steps[flow.kind] ?? []).contains($0) }
        }
        var thresholds: [Threshold] = []
        for (metric, condition) in scenario.thresholds.sorted(by: { $0.key < $1.key }) {
            let path = JSONPath.string([AnyCodingKey("thresholds"), AnyCodingKey(metric)])
            switch Threshold.parse(metric: metric, condition: condition, flows: steps) {
            case .success(let threshold): thresholds.append(threshold)
            case .failure(let problem):
                // A metric naming a flow that failed its own checks is already reported there.
                let named = String(metric.prefix { $0 != "." && $0 != "{" })
                if problem.inMetric, failedNames.contains(named) { continue }
                problems.append(ScenarioProblem(path: path, message: problem.message))
            }
        }

        guard problems.isEmpty else { return .failure(ScenarioErrors(file: file, problems: problems)) }
        return .success(
            Plan(
                scenario: scenario,
                text: String(decoding: data, as: UTF8.self),
                file: file,
                flows: planned,
                thresholds: thresholds,
                providers: loaded,
                plugins: plugins,
                transportOptions: transportOptions
            )
        )
    }

    /// Checks `"server"` against the transports and discovery, and resolves its TLS files
    /// against the scenario file's folder.
    static func checkServer(
        _ server: ServerSpec,
        flowCount: Int,
        file: String?,
        plugins: Plugins
    ) -> (
        TransportOptions, [ScenarioProblem]
    ) {
        var problems: [ScenarioProblem] = []
        let folder = file.map { URL(fileURLWithPath: $0).deletingLastPathComponent() }
        func resolve(_ path: String, at jsonPath: String) -> String {
            let url =
                path.hasPrefix("/")
                ? URL(fileURLWithPath: path) : URL(fileURLWithPath: path, relativeTo: folder).standardizedFileURL
            if !FileManager.default.fileExists(atPath: url.path) {
                problems.append(
                    ScenarioProblem(
                        path: jsonPath,
                        message: "no file at \(url.path) (paths are relative to the scenario file)"
                    )
                )
            }
            return url.path
        }
        let transport = plugins.transports.types.first { $0.name == server.transport }
        let remotePath = server.address != nil ? "$.server.address" : "$.server.discover"
        if let transport, !server.startsServer, !transport.usesNetwork {
            problems.append(
                ScenarioProblem(
                    path: remotePath,
                    message:
                        "the '\(server.transport)' transport cannot reach a server elsewhere; set server.transport to tcp or tls"
                )
            )
        }
        if server.discover != nil, plugins.discovery == nil {
            problems.append(
                ScenarioProblem(path: "$.server.discover", message: "this build of the lab has no DNS-SD discovery")
            )
        }
        if server.tls != TLSSpec(), server.transport != "tls" {
            problems.append(
                ScenarioProblem(
                    path: "$.server.tls",
                    message:
                        "only the tls transport uses certificates and pins; server.transport is '\(server.transport)'"
                )
            )
        }
        if !server.startsServer, server.transport == "tls" {
            if server.tls.pin == nil {
                problems.append(
                    ScenarioProblem(
                        path: "$.server.tls.pin",
                        message:
                            "missing; a tls client reaching a server the lab did not start must pin its certificate ('certificate') or public key ('spkiSHA256')"
                    )
                )
            }
            if server.tls.certificate != nil {
                problems.append(
                    ScenarioProblem(
                        path: "$.server.tls.certificate",
                        message:
                            "the lab presents a certificate only for a server it starts; this scenario connects to one elsewhere"
                    )
                )
            }
        }
        if !server.startsServer, server.listen != ServerSpec().listen {
            problems.append(
                ScenarioProblem(
                    path: "$.server.listen",
                    message: "the lab starts no server when it is given '\(remotePath.dropFirst(9))'"
                )
            )
        }
        if server.startsServer, server.listen.port != 0, flowCount > 1 {
            problems.append(
                ScenarioProblem(
                    path: "$.server.listen",
                    message:
                        "each flow entry gets its own listener, so \(flowCount) entries cannot share port \(server.listen.port); use port 0"
                )
            )
        }
        var tls = TLSSettings()
        tls.certificateFile = server.tls.certificate.map { resolve($0, at: "$.server.tls.certificate") }
        tls.privateKeyFile = server.tls.key.map { resolve($0, at: "$.server.tls.key") }
        if let pin = server.tls.pin {
            if let certificate = pin.certificate {
                tls.pin = .certificateFile(resolve(certificate, at: "$.server.tls.pin.certificate"))
            } else if let digest = pin.spkiSHA256 {
                tls.pin = .spkiSHA256(digest)
            }
        }
        let options = TransportOptions(
            framing: server.framing,
            maxFrameBytes: server.maxFrameBytes,
            host: server.listen.host,
            port: server.listen.port,
            idleTimeout: server.idleTimeout,
            tls: tls
        )
        return (options, problems)
    }

    private static func plan<F: Flow>(_ type: F.Type, index: Int, setup: FlowSetup) -> (PlannedFlow?, [ScenarioProblem])
    {
        let path = "$.flows[\(index)]"
        var problems: [ScenarioProblem] = []
        if !F.usesSuite, setup.entry.suite != nil {
            problems.append(ScenarioProblem(path: "\(path).suite", message: "flow '\(F.name)' takes no suite"))
        }
        let (decoded, optionProblems) = F.decodeOptions(setup.entry.options, at: "\(path).options")
        problems += optionProblems
        guard let options = decoded, optionProblems.isEmpty else { return (nil, problems) }
        for (relative, message) in F.check(setup, options: options) {
            // The provider came from the server's default: point at the suite that asked too much.
            let key = relative == "provider" && setup.entry.provider == nil ? "suite" : relative
            problems.append(ScenarioProblem(path: "\(path).\(key)", message: message))
        }
        guard problems.isEmpty else { return (nil, problems) }
        return (
            PlannedFlow(
                index: index,
                entry: setup.entry,
                label: setup.label,
                kind: F.name,
                steps: F.steps,
                setup: setup,
                make: { recorder, dataDirectory in
                    var setup = setup
                    setup.dataDirectory = dataDirectory
                    return try F(setup: setup, options: options, recorder: &recorder)
                }
            ),
            []
        )
    }

    /// Each entry's label: its `name`; else the flow's name if it is the only such entry;
    /// else `flow-suite`, then `flow-suite-provider`, then a number, until unique.
    static func labels(for flows: [FlowEntry]) -> [String] {
        var taken = Set(flows.compactMap(\.name))
        return flows.map { entry in
            if let name = entry.name { return name }
            let providers = [entry.clientProvider, entry.provider].compactMap { $0 }.joined(separator: "-")
            let candidates = [
                flows.filter { $0.flow == entry.flow }.count == 1 ? entry.flow : nil,
                entry.suite.map { "\(entry.flow)-\($0)" },
                entry.suite.map { "\(entry.flow)-\($0)-\(providers.isEmpty ? "server" : providers)" },
            ]
            let alike = { (other: FlowEntry) in
                other.name == nil && other.flow == entry.flow && other.suite == entry.suite
            }
            var label = candidates.compactMap { $0 }.first { candidate in
                !taken.contains(candidate)
                    && (candidate == entry.flow || flows.filter(alike).count == 1
                        || candidate.hasSuffix(providers.isEmpty ? "server" : providers))
            }
            if label == nil {
                var number = 2
                while taken.contains("\(entry.flow)-\(number)") { number += 1 }
                label = "\(entry.flow)-\(number)"
            }
            taken.insert(label!)
            return label!
        }
    }
}

/// Every problem found in a scenario, as one error.
public struct ScenarioErrors: Error, Sendable, CustomStringConvertible {
    /// The file, if any.
    public var file: String?
    /// The problems, in the order found.
    public var problems: [ScenarioProblem]

    /// Errors in a file.
    public init(file: String?, problems: [ScenarioProblem]) {
        self.file = file
        self.problems = problems
    }

    /// One line per problem, under a heading naming the file.
    public var description: String {
        let count = self.problems.count
        let heading = "\(self.file ?? "The scenario") has \(count) problem\(count == 1 ? "" : "s"):"
        return ([heading] + self.problems.map { "  \($0)" }).joined(separator: "\n")
    }

    /// As a `LabError` of code `.invalidScenario`.
    public var labError: LabError { LabError(.invalidScenario, self.description) }
}
