import ArgumentParser
import Foundation
import LabCore
import LabKit
import LabMessaging
import LabReport
import LabRunner

/// `lab schema`: the JSON schema of the scenarios this `lab` takes, its plugin names the catalog's.
struct Schema: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the JSON schema of scenario files, with this lab's plugin names (docs/scenario.schema.json).",
        discussion: """
            For editors and independent checks, e.g. `lab schema > scenario.schema.json` and \
            `check-jsonschema --schemafile scenario.schema.json my.json`. A lab built with more \
            plugins lists them too.
            """
    )

    func run() throws {
        print(Self.text(for: LabCLI.catalog), terminator: "")
    }

    /// The schema for `catalog`, ending in a newline.
    static func text(for catalog: PluginCatalog) -> String {
        let plugins = catalog.plugins
        let lists: [(String, [String])] = [
            ("reporters", catalog.reporters.names),
            ("providers", plugins.providers.names),
            ("transports", plugins.transports.names),
            ("flows", plugins.flows.names),
            ("suites", plugins.suites.ids),
        ]
        var text = ScenarioSchema.template.replacingOccurrences(
            of: "{{messagingKinds}}\n",
            with: Self.messagingLines(catalog.plugins.extensions[MessagingKinds.self])
        )
        for (kind, names) in lists {
            let list = "[" + names.map { "\"\($0)\"" }.joined(separator: ", ") + "]"
            text = text.replacingOccurrences(of: "{{\(kind)}}", with: list)
        }
        return text + "\n"
    }

    /// The messaging options' choices and their plugins' keys, one line each (the
    /// schema's `messagingOptions`).
    static func messagingLines(_ kinds: MessagingKinds) -> String {
        func choice(_ key: String, _ names: [String]) -> String {
            "\"\(key)\": { \"enum\": [" + names.map { "\"\($0)\"" }.joined(separator: ", ") + "] }"
        }
        func keys(_ keys: [ServiceOptionKey]) -> [String] { keys.map { "\"\($0.name)\": \($0.schema)" } }
        var seen = Set<String>()
        let lines =
            [choice("kdf", kinds.kdfs.map { $0.choice.name })] + keys(kinds.kdfs.flatMap { $0.optionKeys })
            + [choice("policy", kinds.policies.map { $0.choice.name })] + keys(kinds.policies.flatMap { $0.optionKeys })
            + [choice("captcha", kinds.captchas.map { $0.choice.name }), choice("clock", kinds.clocks.map { $0.choice.name })]
        return lines.filter { seen.insert($0).inserted }.map { "        \($0),\n" }.joined()
    }
}
