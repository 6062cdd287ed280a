import Foundation
import LabBuiltIns
import LabCore
import LabRunner
import LabScenario
import LabTestSupport
import Testing

/// Every shipped scenario validates; every broken one yields exactly the expected problems.
@Suite(.tier(.integration)) struct ScenarioFileTests {
    /// Every JSON file below Scenarios/, at any depth (`perf/`, `k8s/`, `two-host/` included).
    static let shipped: [String] = RepositoryPaths.filesBelow("Scenarios", withExtension: "json")
    static let broken: [String] = RepositoryPaths.files(in: "Tests/Scenarios/broken", withExtension: "json")

    @Test("Every JSON file below Scenarios/, at any depth, validates", arguments: shipped)
    func shippedScenarioValidates(_ name: String) throws {
        let path = RepositoryPaths.root.appendingPathComponent("Scenarios/\(name)").path
        let result = ScenarioValidator.validate(file: path, plugins: BuiltInPlugins.all)
        if case .failure(let errors) = result {
            Issue.record("\(errors)")
        }
        let plan = try result.get()
        let fileName = URL(fileURLWithPath: name).deletingPathExtension().lastPathComponent
        #expect(plan.scenario.name == fileName, "a scenario's name is its file's name")
    }

    @Test("There are shipped and broken scenarios to check")
    func scenariosExist() {
        #expect(Self.shipped.contains("quickstart.json"))
        // The nested folders are walked too.
        for nested in ["perf/inprocess-x25519.json", "k8s/fleet.json", "two-host/two-host.json"] {
            #expect(Self.shipped.contains(nested), "\(nested) is not among \(Self.shipped)")
        }
        #expect(Self.shipped.count >= 17)
        #expect(Self.broken.count >= 8)
    }

    @Test("A broken scenario yields every expected problem with its JSON path, and no other", arguments: broken)
    func brokenScenarioIsReported(_ name: String) throws {
        let folder = RepositoryPaths.root.appendingPathComponent("Tests/Scenarios/broken")
        let path = folder.appendingPathComponent(name).path
        let expectedText = try String(
            contentsOf: folder.appendingPathComponent(name.dropLast(".json".count) + ".expected"),
            encoding: .utf8
        )
        let expected = expectedText.split(separator: "\n").map(String.init)
        guard case .failure(let errors) = ScenarioValidator.validate(file: path, plugins: BuiltInPlugins.all) else {
            Issue.record("\(name) validated, but it is broken")
            return
        }
        var unmatched = errors.problems.map(\.description)
        for pattern in expected {
            if let index = unmatched.firstIndex(where: { Glob.matches(pattern, $0) }) {
                unmatched.remove(at: index)
            } else {
                Issue.record("no problem matches \(pattern)\nproblems:\n\(errors)")
            }
        }
        #expect(unmatched.isEmpty, "unexpected problems: \(unmatched)")
    }

    @Test("Validation errors read as one message naming the file and every problem")
    func errorMessageListsEveryProblem() throws {
        let data = Data(#"{ "name": "x", "clients": { "count": 0 }, "flows": [] }"#.utf8)
        guard
            case .failure(let errors) = ScenarioValidator.validate(
                data: data,
                file: "x.json",
                plugins: BuiltInPlugins.all
            )
        else {
            Issue.record("validated")
            return
        }
        let lines = errors.description.split(separator: "\n")
        #expect(lines.first == "x.json has 2 problems:")
        #expect(lines.dropFirst().allSatisfy { $0.hasPrefix("  $.") })
        #expect(errors.labError.code == .invalidScenario)
    }

    @Test("Default labels are the flow's name, then flow-suite, then flow-suite-provider")
    func defaultLabels() throws {
        let data = Data(
            #"""
            { "name": "labels", "flows": [
                { "flow": "cx", "suite": "x25519", "provider": "openssl" },
                { "flow": "cx", "suite": "x25519", "provider": "swift-crypto" },
                { "flow": "cx", "suite": "pq" },
                { "flow": "cx", "name": "mine", "suite": "classic", "provider": "openssl" } ] }
            """#.utf8
        )
        let plan = try ScenarioValidator.validate(data: data, plugins: BuiltInPlugins.all).get()
        #expect(plan.flows.map(\.label) == ["cx-x25519-openssl", "cx-x25519-swift-crypto", "cx-pq", "mine"])
    }

    @Test("Durations parse with their units and refuse anything else")
    func durations() {
        #expect(TimeSpan(parsing: "250 ms")?.nanoseconds == 250_000_000)
        #expect(TimeSpan(parsing: "2s")?.nanoseconds == 2_000_000_000)
        #expect(TimeSpan(parsing: "30 min")?.nanoseconds == 1_800_000_000_000)
        #expect(TimeSpan(parsing: "1.5 µs")?.nanoseconds == 1_500)
        #expect(TimeSpan(parsing: "0")?.nanoseconds == 0)
        for bad in ["", "5", "fast", "-1 s", "1 parsec", "s"] {
            #expect(TimeSpan(parsing: bad) == nil, "\(bad)")
        }
        // Compound: terms from the largest unit down, spaces optional.
        #expect(TimeSpan(parsing: "1m30s")?.nanoseconds == 90_000_000_000)
        #expect(TimeSpan(parsing: "1 h 30 min")?.nanoseconds == 5_400_000_000_000)
        #expect(TimeSpan(parsing: "2s 500ms")?.nanoseconds == 2_500_000_000)
        #expect(TimeSpan(parsing: "1h1m1s1ms1us1ns")?.nanoseconds == 3_661_001_001_001)
        for bad in ["30s1m", "1m1m", "1m30", "1m 30 parsec", "1m-30s", "m30s"] {
            #expect(TimeSpan(parsing: bad) == nil, "\(bad)")
        }
        #expect(TimeSpan(nanoseconds: 1_500_000).description == "1.5 ms")
    }
}

/// `*` matches any run of characters; everything else matches itself.
enum Glob {
    static func matches(_ pattern: String, _ text: String) -> Bool {
        let parts = pattern.components(separatedBy: "*")
        guard parts.count > 1 else { return pattern == text }
        guard text.hasPrefix(parts[0]), text.hasSuffix(parts[parts.count - 1]) else { return false }
        var rest = Substring(text.dropFirst(parts[0].count))
        for part in parts.dropFirst().dropLast() where !part.isEmpty {
            guard let range = rest.range(of: part) else { return false }
            rest = rest[range.upperBound...]
        }
        return rest.count >= parts[parts.count - 1].count
    }
}
