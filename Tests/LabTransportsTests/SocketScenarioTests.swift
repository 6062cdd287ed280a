import Foundation
import LabBuiltIns
import LabCore
import LabReport
import LabResults
import LabRunner
import LabScenario
import LabTestSupport
import Testing

/// The shipped socket scenarios run clean and their reports show `connect` and `exchange` per transport.
@Suite(.tier(.load)) struct SocketScenarioTests {
    static func plan(_ name: String) throws -> Plan {
        let path = RepositoryPaths.root.appendingPathComponent("Scenarios/\(name).json").path
        switch ScenarioValidator.validate(file: path, plugins: BuiltInPlugins.all) {
        case .success(let plan): return plan
        case .failure(let errors): throw errors.labError
        }
    }

    @Test("200 clients over real sockets on loopback complete with zero errors", arguments: ["tcp", "tls"])
    func loopbackScenario(transport: String) async throws {
        let plan = try Self.plan("loopback-\(transport)")
        let scenario = plan.scenario
        #expect(scenario.clients.count == 200 && scenario.server.transport == transport)
        let result = try await Runner(plan: plan).run()
        #expect(result.errorCount == 0, "errors: \(result.groups.map(\.errors))")
        #expect(result.completedIterations == scenario.clients.count * scenario.load.iterations)
        #expect(result.passed, "thresholds: \(result.thresholds)")

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lab-\(transport)-\(UUID().uuidString)"
        )
        defer { try? FileManager.default.removeItem(at: folder) }
        _ = try BuiltInPlugins.reporters.writeReports(result, formats: ["csv"], charts: false, to: folder)
        let rows = try String(contentsOf: folder.appendingPathComponent("results.csv"), encoding: .utf8)
            .split(separator: "\n").dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        for group in result.groups {
            let mine = rows.filter { $0[0] == group.key.flow && $0[3] == transport }
            let connect = try #require(mine.first { $0[4] == "connect" }, "\(group.key.flow) has a connect row")
            let exchange = try #require(mine.first { $0[4] == "exchange" }, "\(group.key.flow) has an exchange row")
            // One connect per client at its start (a client whose first attempt failed on an
            // overloaded machine connects again in its first iteration), and every exchange counted.
            #expect((Int(connect[5]) ?? 0) >= scenario.clients.count)
            #expect(Int(exchange[5]).map(UInt64.init) == group.iterations)
            // The server ran in this process: its steps came back over the socket with each answer.
            #expect(mine.contains { $0[4] == "sign" && Int($0[5]) == Int(exchange[5]) })
        }
    }
}
