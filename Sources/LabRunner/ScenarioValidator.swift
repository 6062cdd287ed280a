public import Foundation
import LabCore
import LabResults
import LabScenario

/// Checks a scenario file against the plugins before anything runs, finding every problem at once.
public enum ScenarioValidator {
    /// The step the runner adds in the open model: time from an exchange's actual start.
    public static let serviceSuffix = ".service"

    /// Reads and checks the file at `path`.
    public static func validate(file path: String, plugins: Plugins) -> Result<Plan, ScenarioErrors> {
        switch InputFile.contents(path) {
        case .success(let data):
            return self.validate(data: data, file: path, plugins: plugins)
        case .failure(let unreadable):
            let problem = ScenarioProblem(path: "$", message: "cannot read the file: \(unreadable.reason)")
            return .failure(ScenarioErrors(file: path, problems: [problem]))
        }
    }

    /// Checks a scenario's JSON text.
    public static func validate(data: Data, file: String? = nil, plugins: Plugins) -> Result<Plan, ScenarioErrors> {
        let (decoded, shapeProblems) = Scenario.decode(data)
        guard let scenario = decoded else {
            return .failure(ScenarioErrors(file: file, problems: shapeProblems))
        }
        var planner = Planner(scenario: scenario, file: file, plugins: plugins)
        planner.problems = shapeProblems
        let (transportOptions, serverProvider) = planner.checkServerAndReporters()
        let flows = planner.planFlows(serverProvider: serverProvider)
        let thresholds = planner.thresholds(for: flows)
        guard planner.problems.isEmpty else { return .failure(ScenarioErrors(file: file, problems: planner.problems)) }
        return .success(
            Plan(
                scenario: scenario,
                text: String(decoding: data, as: UTF8.self),
                file: file,
                flows: flows,
                thresholds: thresholds,
                providers: planner.loaded,
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
        var problems = Self.serverProblems(server, flowCount: flowCount, plugins: plugins)
        let folder = file.map { URL(fileURLWithPath: $0).deletingLastPathComponent() }
        let (tls, fileProblems) = Self.tlsSettings(server.tls, folder: folder)
        problems += fileProblems
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

    /// What `"server"` asks that the transports, the discovery or the other fields rule out.
    private static func serverProblems(_ server: ServerSpec, flowCount: Int, plugins: Plugins) -> [ScenarioProblem] {
        var problems: [ScenarioProblem] = []
        let transport = plugins.transports.type(named: server.transport)
        let remotePath = server.address != nil ? "$.server.address" : "$.server.discover"
        if let transport, !server.startsServer, !transport.usesNetwork {
            let network = plugins.transports.types.filter { $0.usesNetwork }.map { $0.name }
            problems.append(
                ScenarioProblem(
                    path: remotePath,
                    message:
                        "the '\(server.transport)' transport cannot reach a server elsewhere; set server.transport to \(network.joined(separator: " or "))"
                )
            )
        }
        if server.discover != nil, plugins.discovery == nil {
            problems.append(
                ScenarioProblem(path: "$.server.discover", message: "this build of the lab has no DNS-SD discovery")
            )
        }
        problems += Self.tlsProblems(server, usesTLS: transport?.usesTLS ?? false, plugins: plugins)
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
        return problems
    }

    /// What `"server"."tls"` asks that the transport rules out: TLS settings for a transport
    /// without TLS; for a TLS client of a server elsewhere, a missing pin or a certificate to
    /// present.
    private static func tlsProblems(_ server: ServerSpec, usesTLS: Bool, plugins: Plugins) -> [ScenarioProblem] {
        var problems: [ScenarioProblem] = []
        if server.tls != TLSSpec(), !usesTLS {
            let tlsTransports = plugins.transports.types.filter { $0.usesTLS }.map { $0.name }
            problems.append(
                ScenarioProblem(
                    path: "$.server.tls",
                    message:
                        "only the \(tlsTransports.joined(separator: " or ")) transport uses certificates and pins; server.transport is '\(server.transport)'"
                )
            )
        }
        if !server.startsServer, usesTLS {
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
        return problems
    }

    /// The TLS settings, with the certificate, key and pinned certificate files resolved
    /// against `folder` (the scenario file's), and a problem for each file that is not there.
    private static func tlsSettings(_ spec: TLSSpec, folder: URL?) -> (TLSSettings, [ScenarioProblem]) {
        var problems: [ScenarioProblem] = []
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
        var tls = TLSSettings(groups: spec.groups, version: spec.version)
        tls.certificateFile = spec.certificate.map { resolve($0, at: "$.server.tls.certificate") }
        tls.privateKeyFile = spec.key.map { resolve($0, at: "$.server.tls.key") }
        if let pin = spec.pin {
            if let certificate = pin.certificate {
                tls.pin = .certificateFile(resolve(certificate, at: "$.server.tls.pin.certificate"))
            } else if let digest = pin.spkiSHA256 {
                tls.pin = .spkiSHA256(digest)
            }
        }
        return (tls, problems)
    }

    static func plan<F: Flow>(_ type: F.Type, index: Int, setup: FlowSetup) -> (PlannedFlow?, [ScenarioProblem])
    {
        let path = setup.entry.path(index: index)
        var problems: [ScenarioProblem] = []
        if !F.usesSuite, setup.entry.suite != nil {
            problems.append(ScenarioProblem(path: "\(path).suite", message: "flow '\(F.name)' takes no suite"))
        }
        let (decoded, optionProblems) = F.decodeOptions(
            setup.entry.options,
            at: "\(path).options",
            extensions: setup.extensions
        )
        problems += optionProblems
        guard let options = decoded, optionProblems.isEmpty else { return (nil, problems) }
        for (relative, message) in F.check(setup, options: options) {
            // The provider came from the server's default: point at the suite that asked too much.
            let key = relative == "provider" && setup.entry.provider == nil ? "suite" : relative
            // A path from the root ("$.server.provider") is the scenario's, not the entry's.
            problems.append(ScenarioProblem(path: key.hasPrefix("$.") ? key : "\(path).\(key)", message: message))
        }
        guard problems.isEmpty else { return (nil, problems) }
        return (
            PlannedFlow(
                index: index,
                entry: setup.entry,
                label: setup.label,
                kind: F.name,
                steps: F.steps,
                outcomes: F.outcomes,
                setup: setup,
                make: { setup, recorder in try F(setup: setup, options: options, recorder: &recorder) }
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

extension Step {
    /// An open-model exchange's service time (`exchange.service`): from its real start, not
    /// its intended one.
    static let exchangeService = Step(Step.exchange.name + ScenarioValidator.serviceSuffix)
}
