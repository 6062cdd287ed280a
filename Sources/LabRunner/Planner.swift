import Foundation
import LabCore
import LabResults
import LabScenario

/// Turns a decoded scenario into a plan, collecting every problem on the way instead of
/// stopping at the first (`ScenarioValidator.validate`): the plugins it names, the server,
/// each flow entry with its options, then the thresholds against the steps the planned
/// flows record.
struct Planner {
    let scenario: Scenario
    /// The scenario file, whose folder relative paths start from.
    let file: String?
    let plugins: Plugins
    /// The providers that started on this machine, by name.
    let providers: [String: any CryptoProvider]
    /// The same, in the plugins' order.
    let loaded: [any CryptoProvider]
    /// Every problem found so far, in the order found.
    var problems: [ScenarioProblem] = []

    /// A planner; every provider the plugins list is started once, here.
    init(scenario: Scenario, file: String?, plugins: Plugins) {
        self.scenario = scenario
        self.file = file
        self.plugins = plugins
        let started = plugins.providers.types.compactMap { type in (try? type.init()).map { (type.name, $0) } }
        self.providers = Dictionary(started, uniquingKeysWith: { first, _ in first })
        self.loaded = started.map(\.1)
    }

    /// The provider named `name` at the JSON path `path`, or nil and a problem saying
    /// whether it is unknown or could not start.
    mutating func provider(_ name: String, at path: String) -> (any CryptoProvider)? {
        if let provider = self.providers[name] { return provider }
        let names = self.plugins.providers.names
        let message =
            names.contains(name)
            ? "the provider '\(name)' could not start on this machine"
            : unknownPluginMessage(kind: "provider", name: name, known: names)
        self.problems.append(ScenarioProblem(path: path, message: message))
        return nil
    }

    /// Checks `"server"` (its transport, settings and provider) and `"report"`'s formats;
    /// returns the transport's settings and the server's provider, if it started.
    mutating func checkServerAndReporters() -> (TransportOptions, (any CryptoProvider)?) {
        let server = self.scenario.server
        if !self.plugins.transports.names.contains(server.transport) {
            self.problems.append(
                ScenarioProblem(
                    path: "$.server.transport",
                    message: unknownPluginMessage(
                        kind: "transport",
                        name: server.transport,
                        known: self.plugins.transports.names
                    )
                )
            )
        }
        var (options, serverProblems) = ScenarioValidator.checkServer(
            server,
            flowCount: self.scenario.flows.count,
            file: self.file,
            plugins: self.plugins
        )
        self.problems += serverProblems
        options.readsUsage = self.scenario.report.stepUsage
        let provider = self.provider(server.provider, at: "$.server.provider")
        for (index, format) in self.scenario.report.formats.enumerated() where !self.plugins.reporters.contains(format) {
            self.problems.append(
                ScenarioProblem(
                    path: "$.report.formats[\(index)]",
                    message: unknownPluginMessage(kind: "reporter", name: format, known: self.plugins.reporters)
                )
            )
        }
        self.checkStages()
        return (options, provider)
    }

    /// An open load's stages are measured on the run's intervals: each must span whole ones.
    mutating func checkStages() {
        let load = self.scenario.load
        guard load.model != .idle, !load.stages.isEmpty else { return }
        for (index, stage) in load.stages.enumerated() where stage.clients > self.scenario.clients.count {
            self.problems.append(
                ScenarioProblem(
                    path: "$.load.stages[\(index)].clients",
                    message: "expected at most clients.count (\(self.scenario.clients.count)) clients, found \(stage.clients)"
                )
            )
        }
        let width = self.scenario.report.interval.nanoseconds
        guard width > 0 else {
            self.problems.append(
                ScenarioProblem(
                    path: "$.report.interval",
                    message: "expected intervals with load.stages (each stage is measured on them), found \"0\""
                )
            )
            return
        }
        for (index, stage) in load.stages.enumerated() where stage.duration.nanoseconds % width != 0 {
            self.problems.append(
                ScenarioProblem(
                    path: "$.load.stages[\(index)].duration",
                    message:
                        "expected a whole number of report.interval (\(self.scenario.report.interval)), found \"\(stage.duration)\""
                )
            )
        }
    }

    /// Each flow entry checked and planned, in file order; an entry with a problem is left out.
    mutating func planFlows(serverProvider: (any CryptoProvider)?) -> [PlannedFlow] {
        let flows = self.scenario.flows
        let labels = ScenarioValidator.labels(for: flows)
        var planned: [PlannedFlow] = []
        for (index, entry) in flows.enumerated() {
            let path = entry.path(index: index)
            if let name = entry.name, let first = flows.firstIndex(where: { $0.name == name }), first != index {
                self.problems.append(
                    ScenarioProblem(
                        path: entry.cell.isEmpty ? "\(path).name" : path,
                        message:
                            "the label '\(name)' is already used by \(flows[first].path(index: first)); labels must be unique"
                    )
                )
            }
            guard let type = self.plugins.flows.type(named: entry.flow) else {
                if !entry.flow.isEmpty {
                    self.problems.append(
                        ScenarioProblem(
                            path: "\(path).flow",
                            message: unknownPluginMessage(kind: "flow", name: entry.flow, known: self.plugins.flows.names)
                        )
                    )
                }
                continue
            }
            guard let setup = self.setup(entry, index: index, label: labels[index], serverProvider: serverProvider)
            else { continue }
            let (flow, flowProblems) = ScenarioValidator.plan(type, index: index, setup: setup)
            self.problems += flowProblems.map { Self.suggestingExclude($0, entry, path: path) }
            if let flow { planned.append(flow) }
        }
        if planned.count < flows.count, self.problems.isEmpty {
            self.problems.append(ScenarioProblem(path: "$.flows", message: "a flow could not be planned"))
        }
        return planned
    }

    /// `problem` with, when it is a matrix combination's suite or provider that cannot be,
    /// the `"exclude"` that leaves the combination out.
    static func suggestingExclude(_ problem: ScenarioProblem, _ entry: FlowEntry, path: String) -> ScenarioProblem {
        guard let hint = entry.excludeHint, let origin = entry.origin,
            ["suite", "provider", "clientProvider"].contains(where: { problem.path == "\(path).\($0)" })
        else { return problem }
        let message = problem.message + " To leave this combination out, add it to \"exclude\" in $.flows[\(origin)].matrix: "
        return ScenarioProblem(path: problem.path, message: message + "\"exclude\": [\(hint)]")
    }

    /// What a flow entry is built from: its providers (the server's unless it names its
    /// own), the server's settings, the database path resolved against the file's folder.
    private mutating func setup(
        _ entry: FlowEntry,
        index: Int,
        label: String,
        serverProvider: (any CryptoProvider)?
    ) -> FlowSetup? {
        let path = entry.path(index: index)
        let serverSide = entry.provider.map { self.provider($0, at: "\(path).provider") } ?? serverProvider
        let clientSide = entry.clientProvider.map { self.provider($0, at: "\(path).clientProvider") } ?? serverSide
        guard var server = serverSide, let client = clientSide else { return nil }
        let spec = self.scenario.server
        // A server elsewhere brings its own provider; the label shows the clients' alone.
        if !spec.startsServer { server = client }
        return FlowSetup(
            entry: entry,
            label: label,
            suite: entry.suite,
            suites: self.plugins.suites,
            clientProvider: client,
            serverProvider: server,
            providers: self.loaded,
            serverKeys: spec.keys,
            transport: spec.transport,
            startsServer: spec.startsServer,
            database: spec.database.map(self.resolved),
            extensions: self.plugins.extensions
        )
    }

    /// `path` as given if absolute (or if there is no file), else from the file's folder.
    private func resolved(_ path: String) -> String {
        guard let file = self.file, !path.hasPrefix("/") else { return path }
        return URL(fileURLWithPath: path, relativeTo: URL(fileURLWithPath: file).deletingLastPathComponent())
            .standardizedFileURL.path
    }

    /// The steps each label and each flow name records, for the thresholds to name: the
    /// transport's, the flow's, and in the open model each exchange's service time.
    func steps(of planned: [PlannedFlow]) -> [String: [Step]] {
        let spec = self.scenario.server
        let transport = self.plugins.transports.type(named: spec.transport)
        let usesNetwork = transport?.usesNetwork ?? false
        let transportSteps: [Step] =
            (spec.discover != nil ? [.discover] : []) + (usesNetwork ? [.connect] : [])
            + (transport?.usesTLS == true ? [.handshake] : [])
        var steps: [String: [Step]] = [:]
        for flow in planned {
            let service: [Step] =
                (self.scenario.load.model == .open && flow.steps.contains(.exchange)) ? [.exchangeService] : []
            let split: [Step] = self.scenario.report.stepUsage ? [.work, .waiting] : []
            let all = transportSteps + flow.steps + service + split
            steps[flow.label] = all
            steps[flow.kind, default: []] += all.filter { !(steps[flow.kind] ?? []).contains($0) }
        }
        return steps
    }

    /// `"thresholds"` parsed against the planned flows' steps, sorted by metric. A metric
    /// naming a flow that failed its own checks is not reported again.
    mutating func thresholds(for planned: [PlannedFlow]) -> [Threshold] {
        let flows = self.scenario.flows
        let labels = ScenarioValidator.labels(for: flows)
        var failedNames = Set<String>()
        for (index, entry) in flows.enumerated() where !planned.contains(where: { $0.index == index }) {
            failedNames.insert(labels[index])
            // The flow's name still has steps to check against if another entry of it planned.
            if !planned.contains(where: { $0.kind == entry.flow }) { failedNames.insert(entry.flow) }
        }
        let steps = self.steps(of: planned)
        var thresholds: [Threshold] = []
        for (metric, condition) in self.scenario.thresholds.sorted(by: { $0.key < $1.key }) {
            let path = JSONPath.string([AnyCodingKey("thresholds"), AnyCodingKey(metric)])
            switch Threshold.parse(metric: metric, condition: condition, flows: steps) {
            case .success(let threshold):
                if let problem = self.unknownOutcome(threshold, planned) {
                    self.problems.append(ScenarioProblem(path: path, message: problem))
                    continue
                }
                thresholds.append(threshold)
            case .failure(let problem):
                let named = String(metric.prefix { $0 != "." && $0 != "{" })
                if problem.inMetric, failedNames.contains(named) { continue }
                self.problems.append(ScenarioProblem(path: path, message: problem.message))
            }
        }
        self.checkMatrixMetric(planned, steps: steps)
        return thresholds
    }

    /// Why an `outcomes.<name>` threshold names an outcome none of its flows counts (as a
    /// step name is checked against the flow's steps), or nil. A flow that does not declare its
    /// outcomes takes any name; so does the transport's prefix (`tls.`).
    private func unknownOutcome(_ threshold: Threshold, _ planned: [PlannedFlow]) -> String? {
        guard case .outcome(let name) = threshold.measure else { return nil }
        let flows = planned.filter { threshold.flow == nil || $0.label == threshold.flow || $0.kind == threshold.flow }
        let prefix = self.plugins.transports.type(named: self.scenario.server.transport)?.outcomePrefix
        if let prefix, name.hasPrefix(prefix) { return nil }
        var known: [String] = []
        for flow in flows {
            guard let outcomes = flow.outcomes else { return nil }
            known += outcomes.filter { !known.contains($0) }
        }
        guard !known.contains(name) else { return nil }
        let whose =
            threshold.flow.map { "flow '\($0)' counts no outcome '\(name)'" } ?? "no flow counts an outcome '\(name)'"
        let counted =
            known.isEmpty
            ? "it counts none" + (prefix.map { " but the transport's \($0)…" } ?? "")
            : "the outcomes are " + known.map { "'\($0)'" }.joined(separator: ", ")
                + (prefix.map { ", and the transport's \($0)…" } ?? "")
        return "\(whose); \(counted)"
    }

    /// `report.matrixMetric`, read as a threshold's metric on the first planned matrix cell.
    private mutating func checkMatrixMetric(_ planned: [PlannedFlow], steps: [String: [Step]]) {
        guard let cell = planned.first(where: { !$0.entry.cell.isEmpty }) else { return }
        let metric = self.scenario.report.matrixMetric
        if case .failure(let problem) = Threshold.parse(metric: "\(cell.label).\(metric)", flows: steps) {
            self.problems.append(
                ScenarioProblem(
                    path: "$.report.matrixMetric",
                    message: "expected \"<step>.<stat>\" or \"bytes.<direction>\": \(problem.message)"
                )
            )
        }
    }
}
