import ArgumentParser
import LabCore
import LabKit
import LabMessaging
import LabReport
import LabRunner

/// `lab list`: every plugin, and which provider can do which suite.
struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List plugins (each flow with its steps and outcomes) and the provider × suite capability matrix."
    )

    func run() async throws {
        try await reportingErrors {
            let providers = try LabCLI.catalog.plugins.providers.makeAll()
            print("Providers:")
            for provider in providers {
                print("  \(provider.name.padding(12))\(provider.version)")
            }
            print("\nFlows:")
            for flow in LabCLI.catalog.plugins.flows.types {
                print("  \(flow.name.padding(12))\(flow.summary)")
                Self.printWrapped("steps: ", flow.steps.map(\.name))
                // What `outcomes.<name>` thresholds may name.
                let indent = String(repeating: " ", count: 14)
                switch flow.outcomes {
                case .none: print(indent + "outcomes: any name (the flow does not list them)")
                case .some([]): print(indent + "outcomes: none")
                case .some(let names): Self.printWrapped("outcomes: ", names)
                }
            }
            // The steps the runner adds to a flow's (Planner's steps for thresholds).
            print(
                "  Beside a flow's steps: \(Step.connect) over a socket, \(Step.handshake) over tls, "
                    + "\(Step.discover) with a discovered server, \(Step.exchange)\(ScenarioValidator.serviceSuffix) "
                    + "in an open load, \(Step.work) and \(Step.waiting) with report.stepUsage; and over tls "
                    + "the outcomes tls.version.…, tls.group.… and tls.cipher.…"
            )
            print("\nServed by lab serve:")
            for served in LabCLI.catalog.plugins.served {
                print("  \(served.name.padding(12))\(served.summary)")
            }
            print("\nTransports: \(LabCLI.catalog.plugins.transports.names.joined(separator: ", "))")
            print("Reporters: \(LabCLI.catalog.reporters.names.joined(separator: ", "))")
            if let discovery = LabCLI.catalog.plugins.discovery {
                print("Discovery: \(type(of: discovery).name) (\"server\": { \"discover\": \"_crypttest._tcp\" })")
            }
            print("\nMessaging service (msg/1; in a messaging flow's \"options\", and lab serve options):")
            for (kind, choices) in LabCLI.messagingKinds.all {
                print("  \(kind):")
                for choice in choices {
                    let marks = (choice.isDefault ? " (default)" : "") + (choice.isInsecure ? " [INSECURE]" : "")
                    print("    \(choice.name.padding(16))\(choice.summary)\(marks)")
                }
            }
            try Self.printSuites(providers: providers)
        }
    }

    /// `label` and `names`, comma-separated, under a flow's summary, in lines of at most 100 columns.
    static func printWrapped(_ label: String, _ names: [String]) {
        let indent = String(repeating: " ", count: 14)
        var line = indent + label
        for (index, name) in names.enumerated() {
            let item = name + (index < names.count - 1 ? "," : "")
            if line.count + item.count + 1 > 100, line.count > indent.count + label.count {
                print(line)
                line = indent + String(repeating: " ", count: label.count)
            } else if line.count > indent.count + label.count {
                line += " "
            }
            line += item
        }
        print(line)
    }

    /// The catalog's suites, then which provider can do which (with the reason where one cannot).
    static func printSuites(providers: [any CryptoProvider]) throws {
        print("\nSuites:")
        var suites: [any Suite] = []
        for id in LabCLI.catalog.plugins.suites.ids {
            let suite = try LabCLI.catalog.plugins.suites.make(id)
            suites.append(suite)
            let insecure = suite.isInsecure ? "  [INSECURE: kept for fidelity]" : ""
            print("  \(id.padding(12))\(suite.clientKey) → \(suite.serverKey), \(suite.signature)\(insecure)")
            // A suite whose RSA keys are smaller by default is also shown at 1024 bits, the
            // smallest size swift-crypto accepts (classic: the 2009 sample's 512).
            if let larger = try? LabCLI.catalog.plugins.suites.make(id, options: SuiteOptions(rsaBits: 1024)),
                "\(larger.clientKey)" != "\(suite.clientKey)"
            {
                suites.append(larger)
            }
        }
        print("\nProvider × suite (default options):")
        let header = "  " + "suite".padding(22) + providers.map { $0.name.padding(14) }.joined()
        print(header)
        for suite in suites {
            let label = suite.rsaBits.map { "\(suite.id) (RSA-\($0))" } ?? suite.id
            let cells = providers.map { provider in
                (suite.unsupportedReason(on: provider) == nil ? "yes" : "no").padding(14)
            }
            print("  " + label.padding(22) + cells.joined())
        }
        for provider in providers {
            for suite in suites {
                if let reason = suite.unsupportedReason(on: provider) {
                    print("  note: \(provider.name) × \(suite.id): \(reason)")
                }
            }
        }
    }
}

extension String {
    func padding(_ width: Int) -> String {
        self.count >= width ? self + " " : self + String(repeating: " ", count: width - self.count)
    }
}
