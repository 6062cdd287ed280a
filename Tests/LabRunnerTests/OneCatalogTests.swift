import Foundation
import LabTestSupport
import Testing

/// The built-in plugins are listed once, in the catalog (`BuiltInPlugins`): every other list
/// of them, in the lab's modules, the examples, the fuzzers and the benchmarks, reads it.
/// A second list goes stale the day a plugin is added (a fuzz target once knew 3 reporters of 8).
@Suite(.tier(.unit)) struct OneCatalogTests {
    /// The catalog's file: the one place that lists the built-in plugins.
    static let catalogFile = "Sources/LabBuiltIns/BuiltInPlugins.swift"
    /// Where the shipped code lives (the tests choose suites and providers for their own cases).
    static let folders = ["Sources", "Examples", "Fuzz", "Benchmarks"]

    /// The built-in plugin types: every `Type.self` in the catalog's file, a generic's
    /// argument included (`MessagingFlow<LoginScript>.self` lists `LoginScript`).
    static func builtInTypes() throws -> Set<String> {
        let text = try String(contentsOf: RepositoryPaths.root.appendingPathComponent(Self.catalogFile), encoding: .utf8)
        var names: Set<String> = []
        for match in text.matches(of: /([A-Z][A-Za-z0-9]*)(?:<([A-Z][A-Za-z0-9]*)>)?\.self/) {
            names.insert(String(match.output.2 ?? match.output.1))
        }
        return names
    }

    /// Every array literal in `text` (comments left out) that names two or more of `types`,
    /// with its line: a list of built-ins. One alone is a choice (`suites: [X25519Suite()]`).
    static func lists(naming types: Set<String>, in text: String) -> [(line: Int, names: [String])] {
        let code = text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { line in line.range(of: "//").map { line[..<$0.lowerBound] } ?? line[...] }
            .joined(separator: "\n")
        var found: [(Int, [String])] = []
        var opens: [(index: String.Index, line: Int)] = []
        var line = 1
        var index = code.startIndex
        while index < code.endIndex {
            switch code[index] {
            case "\n": line += 1
            case "[": opens.append((index, line))
            case "]":
                if let open = opens.popLast() {
                    let literal = code[open.index...index]
                    let names = Set(literal.matches(of: /[A-Za-z_][A-Za-z0-9_]*/).map { String($0.output) })
                        .intersection(types)
                    if names.count >= 2 { found.append((open.line, names.sorted())) }
                }
            default: break
            }
            index = code.index(after: index)
        }
        return found
    }

    @Test("No file but the catalog's lists built-in plugin types")
    func builtInsAreListedOnce() throws {
        let types = try Self.builtInTypes()
        #expect(types.isSuperset(of: ["SwiftCryptoProvider", "X25519Suite", "CXFlow", "TCPTransport", "CSVReporter"]), "\(types)")
        var files = 0
        for folder in Self.folders {
            let root = RepositoryPaths.root.appendingPathComponent(folder)
            guard let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else {
                Issue.record("cannot read \(folder)/")
                continue
            }
            for case let file as URL in enumerator {
                let relative = String(file.path.dropFirst(RepositoryPaths.root.path.count + 1))
                guard file.pathExtension == "swift", !relative.contains("/.build/"), relative != Self.catalogFile else {
                    continue
                }
                files += 1
                let text = try String(contentsOf: file, encoding: .utf8)
                for list in Self.lists(naming: types, in: text) {
                    Issue.record(
                        "\(relative):\(list.line) lists built-in plugins (\(list.names.joined(separator: ", "))): read them from the catalog, \(Self.catalogFile)"
                    )
                }
            }
        }
        #expect(files > 150, "Swift files read: \(files)")
    }

    @Test("The list finder finds lists of two built-ins or more, nested or not, and nothing in comments")
    func findsLists() {
        let types: Set<String> = ["A", "B", "C"]
        let text = """
            let one = [A.self]
            let two = [A.self, B.self]
            // let commented = [A.self, B.self]
            let made = [
                (x, A()), (y, C(bits: [1, 2])),
            ]
            let names = ["A", "B"]
            let nested = [[A.self], [B.self]]
            """
        let found = Self.lists(naming: types, in: text)
        #expect(found.map(\.line) == [2, 4, 7, 8], "\(found)")
        #expect(found.first?.names == ["A", "B"])
    }
}
