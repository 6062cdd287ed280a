import Foundation
import LabBuiltIns
import LabCore
import LabKit
import LabRunner
import LabScenario
import LabTestSupport
import Testing

/// `Plan.countedAlone(flow:)`: what one process of a counted run runs.
@Suite(.tier(.unit)) struct CountedAloneTests {
    static func plan(load: String) throws -> Plan {
        let folder = try CLITests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("scenario.json")
        let text = """
            {
              "name": "two-flows",
              "server": { "transport": "in-process", "provider": "swift-crypto" },
              "clients": { "count": 1 },
              "load": \(load),
              "flows": [
                { "flow": "cx", "suite": "x25519" },
                { "flow": "cx", "suite": "rsa-modern", "weight": 3 }
              ],
              "thresholds": { "errors": "== 0" }
            }
            """
        try text.write(to: file, atomically: true, encoding: .utf8)
        return try BuiltInPlugins.catalog.plan(file: file.path)
    }

    @Test("Closed: one flow, its share of the iterations, warm-up and rounds by weight, no thresholds")
    func closedShare() throws {
        let plan = try Self.plan(load: #"{ "iterations": 24, "warmupIterations": 4, "rounds": 8 }"#)
        #expect(plan.thresholds.count == 1)
        let first = plan.countedAlone(flow: 0)
        let second = plan.countedAlone(flow: 1)
        #expect(first.flows.map(\.entry.suite) == ["x25519"])
        #expect(second.flows.map(\.entry.suite) == ["rsa-modern"])
        #expect([first, second].map(\.scenario.load.iterations) == [6, 18])
        #expect([first, second].map(\.scenario.load.warmupIterations) == [1, 3])
        #expect([first, second].map(\.scenario.load.rounds) == [6, 8])
        #expect(first.thresholds.isEmpty && second.thresholds.isEmpty)
        #expect(plan.flows.count == 2 && plan.scenario.load.iterations == 24, "the plan itself is left alone")
    }

    @Test("Open: its share of the rate")
    func openShare() throws {
        let plan = try Self.plan(load: #"{ "model": "open", "rate": 40, "duration": "10 s" }"#)
        #expect(plan.countedAlone(flow: 0).scenario.load.rate == 10)
        #expect(plan.countedAlone(flow: 1).scenario.load.rate == 30)
        #expect(plan.countedAlone(flow: 1).scenario.load.duration == plan.scenario.load.duration)
    }
}
