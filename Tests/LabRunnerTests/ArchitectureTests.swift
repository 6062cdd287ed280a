import Foundation
import LabTestSupport
import Testing

/// The import rules of docs/architecture.md ("What each module may import"), checked against
/// every source file under `Sources/`.
@Suite(.tier(.unit)) struct ArchitectureTests {
    /// The platform's modules, allowed everywhere.
    static let platform: Set<String> = [
        "Foundation", "FoundationEssentials", "Dispatch", "Synchronization", "Glibc", "Musl", "Darwin",
    ]

    /// Each module's row: the modules it may import.
    static func rules() throws -> [String: Set<String>] {
        let text = try DocumentationTests.readme()
        let start = try #require(
            text.range(of: "\n## What each module may import\n"),
            "docs/architecture.md has a 'What each module may import' section"
        )
        let section = text[start.upperBound...]
        let end = section.range(of: "\n## ")?.lowerBound ?? section.endIndex
        var rules: [String: Set<String>] = [:]
        for row in section[..<end].split(separator: "\n") where row.hasPrefix("| `") {
            let cells = row.split(separator: "|", omittingEmptySubsequences: false).dropFirst().map(Self.names)
            guard cells.count >= 3 else { continue }
            let allowed = cells[1].union(cells[2])
            for module in cells[0] { rules[module] = allowed }
        }
        return rules
    }

    /// The names in backticks in a table cell (its parenthesised remarks included, which
    /// hold no backticked name by convention).
    static func names(_ cell: Substring) -> Set<String> {
        Set(cell.matches(of: /`([A-Za-z_][A-Za-z0-9_]*)`/).map { String($0.output.1) })
    }

    /// Every import in the Swift files of one module's folder, with where it is.
    static func imports(in folder: URL) throws -> [(module: String, at: String)] {
        let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        let pattern =
            /^\s*(?:@[A-Za-z_]+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|fileprivate|private)\s+)?import\s+(?:(?:class|struct|enum|protocol|func|var|let|typealias)\s+)?([A-Za-z_][A-Za-z0-9_]*)/
        var found: [(String, String)] = []
        for file in files.sorted(by: { $0.path < $1.path }) {
            let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            for (index, line) in lines.enumerated() {
                if let match = line.prefixMatch(of: pattern) {
                    found.append((String(match.output.1), "\(file.lastPathComponent):\(index + 1)"))
                }
            }
        }
        return found
    }

    @Test("Every import under Sources/ is one docs/architecture.md allows")
    func importsFollowTheRules() throws {
        let rules = try Self.rules()
        let sources = RepositoryPaths.root.appendingPathComponent("Sources")
        let modules = try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted()
        #expect(modules.count >= 20, "modules found under Sources/: \(modules)")
        var checked = 0
        for module in modules {
            guard let allowed = rules[module] else {
                Issue.record("Sources/\(module) has no row in docs/architecture.md's 'What each module may import'")
                continue
            }
            for (imported, at) in try Self.imports(in: sources.appendingPathComponent(module)) {
                checked += 1
                if imported != module, !allowed.contains(imported), !Self.platform.contains(imported) {
                    Issue.record(
                        "Sources/\(module)/\(at) imports \(imported), which its row in docs/architecture.md does not allow"
                    )
                }
            }
        }
        #expect(checked > 100, "imports read: \(checked)")
    }

    @Test("The module diagram and the import table of docs/architecture.md are Package.swift's (scripts/module-map.py)")
    func moduleMapIsTheManifests() async throws {
        let check = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["python3", RepositoryPaths.root.appendingPathComponent("scripts/module-map.py").path, "--check",
             RepositoryPaths.root.appendingPathComponent("docs/architecture.md").path]
        )
        #expect(check.status == 0, "\(check.output)\(check.errors)")
    }

    @Test("The import reader finds every form of import, and nothing else")
    func readsEveryFormOfImport() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imports-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try """
        import LabCore
        public import LabWire
        @_implementationOnly import CLabOpenSSL
        @preconcurrency internal import Dispatch
        import struct NIOCore.ByteBuffer
          #if canImport(Glibc)
          import Glibc
          #endif
        // import LabTransports
        let text = "import LabRunner"
        """.write(to: folder.appendingPathComponent("A.swift"), atomically: true, encoding: .utf8)
        let modules = try Self.imports(in: folder).map(\.module)
        #expect(modules == ["LabCore", "LabWire", "CLabOpenSSL", "Dispatch", "NIOCore", "Glibc"])
    }
}
