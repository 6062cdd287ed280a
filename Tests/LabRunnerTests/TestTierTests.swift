import Foundation
import LabTestSupport
import Testing

/// The test tiers (`TestTier`): what `LAB_TEST_TIERS` selects, that every suite has a tier,
/// and that `scripts/test` runs each tier exactly once.
@Suite(.tier(.unit)) struct TestTierTests {
    @Test("LAB_TEST_TIERS: unset is unit, all is every tier, a list is its tiers, a misspelt name is an error")
    func parsing() throws {
        #expect(try TestTier.parse(nil) == [.unit])
        #expect(try TestTier.parse(" ") == [.unit])
        #expect(try TestTier.parse("all") == Set(TestTier.allCases))
        #expect(try TestTier.parse("load, hostile-load") == [.load, .hostileLoad])
        let error = try #require(throws: TierError.self) { try TestTier.parse("unit,lod") }
        #expect(error.description.contains("'lod'"))
        #expect(error.description.contains("daemon-restart"))
    }

    /// Every top-level test type in the test targets, with whether it declares a tier.
    static func suites() throws -> [(name: String, at: String, tiered: Bool)] {
        let tests = RepositoryPaths.root.appendingPathComponent("Tests")
        let declaration = /^(?:@Suite(?:\(.*\))?\s+)?(?:final\s+)?(?:struct|class|enum)\s+([A-Za-z0-9_]+Tests)\b/
        var found: [(String, String, Bool)] = []
        for target in try FileManager.default.contentsOfDirectory(atPath: tests.path).sorted()
        where target.hasSuffix("Tests") {
            let folder = tests.appendingPathComponent(target)
            for file in try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
            where file.hasSuffix(".swift") {
                let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
                for (index, line) in lines.enumerated() {
                    guard let match = line.prefixMatch(of: declaration) else { continue }
                    let attributes = line.hasPrefix("@Suite") ? line : (index > 0 ? lines[index - 1] : "")
                    found.append((String(match.output.1), "\(target)/\(file):\(index + 1)", attributes.hasPrefix("@Suite(.tier(.")))
                }
            }
        }
        return found
    }

    @Test("Every test suite declares its tier")
    func everySuiteHasATier() throws {
        let suites = try Self.suites()
        #expect(suites.count >= 70, "suites found: \(suites.map(\.name))")
        for suite in suites where !suite.tiered {
            Issue.record("\(suite.at): \(suite.name) declares no tier: add @Suite(.tier(.unit)) or another TestTier")
        }
    }

    @Test("scripts/test runs every tier, each in one pass")
    func scriptRunsEveryTierOnce() throws {
        let script = try String(
            contentsOf: RepositoryPaths.root.appendingPathComponent("scripts/test"),
            encoding: .utf8
        )
        let passes = script.matches(of: /LAB_TEST_TIERS=([a-z,-]+)/).map { String($0.output.1) }
        var seen: [TestTier] = []
        for pass in passes { seen += try TestTier.parse(pass).sorted { $0.rawValue < $1.rawValue } }
        #expect(Set(seen) == Set(TestTier.allCases), "tiers run by scripts/test: \(seen)")
        #expect(seen.count == Set(seen).count, "a tier run by two passes of scripts/test: \(seen)")
    }
}
