import Foundation
import LabBuiltIns
import LabCX
import LabCore
import LabReport
import LabTestSupport
import Testing

/// docs/scenario.schema.json: every shipped scenario passes it by an independent validator
/// (check-jsonschema), a misspelled key fails it, and its lists of plugin names are the
/// registries' (the schema is written by hand, so it must not drift from the lab).
@Suite(.tier(.unit)) struct ScenarioSchemaTests {
    static let schema = RepositoryPaths.root.appendingPathComponent("docs/scenario.schema.json")

    static func check(_ files: [String]) async throws -> ChildProcess.Outcome {
        try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["python3", "-m", "check_jsonschema", "--schemafile", Self.schema.path] + files,
            in: RepositoryPaths.root
        )
    }

    @Test("Every scenario under Scenarios/ passes the schema")
    func shippedScenariosPass() async throws {
        let files = RepositoryPaths.filesBelow("Scenarios", withExtension: "json").map { "Scenarios/\($0)" }
        #expect(files.count >= 18, "\(files)")
        let outcome = try await Self.check(files)
        #expect(outcome.status == 0, "\(outcome.output)\(outcome.errors)")
    }

    @Test(
        "A misspelled key fails the schema, at the top and deep inside",
        arguments: [
            ("clients", "clinets"), ("load.iterations", "load.iteratons"), ("flows[0].suite", "flows[0].suit"),
        ]
    )
    func misspelledKeysFail(_ key: String, _ typo: String) async throws {
        let folder = try CLITests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let data = try Data(contentsOf: RepositoryPaths.root.appendingPathComponent("Scenarios/quickstart.json"))
        var document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        switch key {
        case "clients":
            document["clinets"] = document.removeValue(forKey: "clients") ?? ["count": 1]
        case "load.iterations":
            var load = document["load"] as? [String: Any] ?? [:]
            load["iteratons"] = load.removeValue(forKey: "iterations") ?? 10
            document["load"] = load
        default:
            var flows = document["flows"] as? [[String: Any]] ?? []
            flows[0]["suit"] = flows[0].removeValue(forKey: "suite") ?? "x25519"
            document["flows"] = flows
        }
        let file = folder.appendingPathComponent("typo.json")
        try JSONSerialization.data(withJSONObject: document).write(to: file)
        let outcome = try await Self.check([file.path])
        #expect(outcome.status == 1, "\(typo): \(outcome.output)")
        let misspelled = String(typo.split(separator: ".").last!.split(separator: "]").last!)
        #expect(outcome.output.contains("'\(misspelled)' was unexpected"), "\(typo): \(outcome.output)")
    }

    @Test("The schema's plugin names are the registries'")
    func namesMatchTheRegistries() throws {
        let schema = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: Self.schema)) as? [String: Any]
        )
        let definitions = schema["$defs"] as? [String: [String: Any]] ?? [:]
        func names(_ object: [String: Any]?, _ property: String) -> Set<String> {
            let properties = object?["properties"] as? [String: [String: Any]]
            return Set(properties?[property]?["enum"] as? [String] ?? [])
        }
        #expect(names(definitions["flow"], "flow") == Set(BuiltInPlugins.flows.names))
        #expect(names(definitions["flow"], "suite") == Set(BuiltInPlugins.suites.ids))
        #expect(names(definitions["server"], "transport") == Set(BuiltInPlugins.transports.names))
        #expect(Set(definitions["provider"]?["enum"] as? [String] ?? []) == Set(BuiltInPlugins.providers.names))
        let report = (schema["properties"] as? [String: [String: Any]])?["report"]
        let formats = ((report?["properties"] as? [String: [String: Any]])?["formats"]?["items"] as? [String: Any])?[
            "enum"
        ]
        #expect(Set(formats as? [String] ?? []) == Set(BuiltInPlugins.reporters.names))
    }
}
