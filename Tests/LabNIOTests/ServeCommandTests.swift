import Foundation
import Histogram
import LabCore
import LabPlugins
import LabRunner
import LabTesting
import Testing

/// `lab serve` as an operator runs it: the port file, a run against it, a clean stop on
/// SIGINT with its own report.
@Suite(.tier(.integration)) struct ServeCommandTests {
    @Test("lab serve: port file, u64le framing, clean stop on SIGINT with the server's own report")
    func serveStopsCleanlyAndReports() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lab-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let portFile = folder.appendingPathComponent("port").path
        let report = folder.appendingPathComponent("report")
        let (server, address) = try await LabProcess.serve([
            "--port-file", portFile, "--report", report.path, "--framing", "u64le", "--suites", "x25519", "--provider",
            "openssl",
        ])
        defer { server.terminate() }
        #expect(server.lines.first == "listening on \(address)", "the first line of stdout")
        #expect(try String(contentsOfFile: portFile, encoding: .utf8) == "\(address.port)\n")

        let json = """
            {
              "name": "against-serve",
              "server": { "transport": "tcp", "address": "\(address)", "framing": "u64le" },
              "clients": { "count": 2 },
              "load": { "iterations": 5 },
              "flows": [ { "flow": "cx", "suite": "x25519" } ]
            }
            """
        let result = try await TestPlan.run(json)
        #expect(result.errorCount == 0 && result.completedIterations == 10)
        // The server's own steps come back over the wire (serverStats), for this run only:
        // a second run against the same server reports its own 10 exchanges, not 20.
        let again = try await TestPlan.run(json)
        for run in [result, again] {
            let server = run.groups.first { $0.isServerSide && $0.key.suite == "x25519" }
            #expect(server?.key.provider == "openssl", "the server's provider: \(run.groups.map(\.key))")
            #expect(server?.iterations == 10)
            #expect(server?.steps[.sign]?.totalCount == 10, "one signature per exchange")
            #expect(server?.steps[.exchange] == nil, "the client's end-to-end step is not the server's")
            #expect(run.groups.filter(\.isServerSide).count == 1, "no group for the statistics requests themselves")
            #expect(run.metadata.serverSide?.contains("serverStats") == true)
        }

        let status = try await server.stop(signal: SIGINT, timeout: .seconds(15))
        #expect(status == 0, "stderr: \(server.errors)")
        #expect(server.lines.contains { $0.hasPrefix("stopped:") && $0.contains(" 20 exchanges, 0 error answers") })
        let csv = try String(contentsOf: report.appendingPathComponent("results.csv"), encoding: .utf8)
        let sign = csv.split(separator: "\n").first { $0.hasPrefix("cx,x25519,openssl,tcp,sign,") }
        #expect(sign?.split(separator: ",")[5] == "20", "the server signed each exchange once: \(csv)")
        #expect(FileManager.default.fileExists(atPath: report.appendingPathComponent("report.md").path))
    }

    @Test("lab serve refuses a provider it does not have and a suite the provider cannot do, with exit 1")
    func badArgumentsAreRefused() async throws {
        let unknown = try await runBlocking {
            try ChildProcess.runWaiting(LabProcess.executable, ["serve", "--provider", "nope"])
        }
        #expect(unknown.status == 1)
        #expect(unknown.errors.contains("nope"))
        let unsupported = try await runBlocking {
            try ChildProcess.runWaiting(LabProcess.executable, ["serve", "--provider", "openssl", "--suites", "pq"])
        }
        #expect(unsupported.status == 1)
        #expect(unsupported.errors.contains("swift-crypto"), "names the provider that can: \(unsupported.errors)")
    }
}
