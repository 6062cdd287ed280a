import Foundation
import LabTestSupport
import Testing

/// What docs/architecture.md states about the repository's own shape, checked against the files.
@Suite(.tier(.unit)) struct DocumentationTests {
    static func readme() throws -> String {
        try String(contentsOf: RepositoryPaths.root.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
    }

    /// The names of the package's non-test targets, read from Package.swift's text.
    static func targets() throws -> [String] {
        let manifest = try String(
            contentsOf: RepositoryPaths.root.appendingPathComponent("Package.swift"),
            encoding: .utf8
        )
        let pattern = try Regex(#"\.(?:target|executableTarget|systemLibrary)\(\s*name:\s*"([^"]+)""#)
        return manifest.matches(of: pattern).compactMap { $0.output[1].substring.map(String.init) }
    }

    @Test("The module table of docs/architecture.md names every target of Package.swift")
    func moduleTableIsComplete() throws {
        let readme = try Self.readme()
        let start = try #require(readme.range(of: "\n## What is here\n"), "docs/architecture.md has a 'What is here' section")
        let section = readme[start.upperBound...]
        let end = section.range(of: "\n## ")?.lowerBound ?? section.endIndex
        // The first column of each table row: `LabOpenSSL`, `CLabOpenSSL` | ...
        let firstColumns = section[..<end].split(separator: "\n")
            .filter { $0.hasPrefix("| `") }
            .map { $0.dropFirst(2).prefix { $0 != "|" } }
            .joined(separator: " ")
        let targets = try Self.targets()
        #expect(targets.count >= 20, "targets read from Package.swift: \(targets)")
        let missing = targets.filter { !firstColumns.contains("`\($0)`") }
        #expect(missing.isEmpty, "modules missing from the table in docs/architecture.md: \(missing)")
    }
}
