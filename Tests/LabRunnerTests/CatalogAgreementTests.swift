import Foundation
import LabBuiltIns
import LabCX
import LabCore
import LabKit
import LabReport
import LabRunner
import LabServer
import LabTestSupport
import Testing

/// What describes the plugins outside the code agrees with the catalog `lab` runs with: the
/// scenario schema, `lab list`, and the docs' plugin tables. A plugin added to the catalog
/// and not to these fails here.
@Suite(.tier(.unit)) struct CatalogAgreementTests {
    static let catalog = BuiltInPlugins.catalog

    @Test("docs/scenario.schema.json is what `lab schema` prints for the built-in catalog")
    func schemaIsTheCatalogs() async throws {
        let printed = try await CLITests.lab(["schema"])
        #expect(printed.status == 0, "\(printed.errors)")
        let file = try String(contentsOf: ScenarioSchemaTests.schema, encoding: .utf8)
        #expect(printed.output == file, "regenerate it: .build/release/lab schema > docs/scenario.schema.json")
    }

    @Test("`lab list` names every plugin of the catalog")
    func listShowsTheCatalog() async throws {
        let listed = try await CLITests.lab(["list"])
        #expect(listed.status == 0, "\(listed.errors)")
        let plugins = Self.catalog.plugins
        let names =
            plugins.providers.names + plugins.suites.ids + plugins.flows.names + plugins.transports.names
            + plugins.served.map { $0.name }
            + Self.catalog.reporters.names
        let words = Set(listed.output.split(whereSeparator: { " \n,:()".contains($0) }).map(String.init))
        let missing = names.filter { !words.contains($0) }
        #expect(missing.isEmpty, "lab list does not name \(missing)")
    }

    /// The rows of the markdown table under `heading` in docs/architecture.md: cells, trimmed.
    static func table(under heading: String) throws -> [[String]] {
        let text = try String(
            contentsOf: RepositoryPaths.root.appendingPathComponent("docs/architecture.md"),
            encoding: .utf8
        )
        let lines = text.components(separatedBy: "\n")
        let start = try #require(lines.firstIndex(of: heading), "no heading \(heading)")
        let rows = lines[(start + 1)...].drop { !$0.hasPrefix("|") }.prefix { $0.hasPrefix("|") }
        return rows.dropFirst(2).map { row in
            row.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
                .map { $0.trimmingCharacters(in: .whitespaces) }
        }
    }

    /// `swift-crypto` from "`swift-crypto`", `openssl` from "`openssl` (3.0)".
    static func name(_ cell: String) -> String {
        cell.split(separator: "`").first.map(String.init) ?? cell
    }

    @Test("docs/architecture.md's suites table has one row per suite of the catalog")
    func suitesTable() throws {
        let rows = try Self.table(under: "### Suites (docs/protocol.md §2.4)")
        #expect(rows.map { Self.name($0[0]) } == Self.catalog.plugins.suites.ids)
    }

    @Test("docs/architecture.md's provider table says what each provider's capabilities say")
    func providersTable() throws {
        let rows = try Self.table(under: "### Providers and what they can do")
        #expect(rows.map { Self.name($0[0]) } == Self.catalog.plugins.providers.names)
        // Columns: classic @512, classic @1024+, rsa-modern, x25519, pq.
        let columns: [SuiteChoice] = [
            SuiteChoice("classic", rsaBits: 512), SuiteChoice("classic", rsaBits: 1024), SuiteChoice("rsa-modern"),
            SuiteChoice("x25519"), SuiteChoice("pq"),
        ]
        for row in rows {
            let provider = try Self.catalog.plugins.providers.make(Self.name(row[0]))
            for (index, choice) in columns.enumerated() {
                let can = try choice.make(Self.catalog.plugins.suites).unsupportedReason(on: provider) == nil
                let documented = row[index + 1].hasPrefix("yes")
                #expect(can == documented, "\(provider.name) × \(choice): the table says \(row[index + 1])")
            }
        }
    }
}
