import Foundation
import LabCore
import LabPlugins
import LabRunner
import LabTesting
import Testing

/// `lab serve` as an operator runs it: the port file, a run against it, a clean stop on
/// SIGINT with its own report.
struct ServeCommandTests {
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

        let status = try await server.stop(signal: SIGINT, timeout: .seconds(15))
        #expect(status == 0, "stderr: \(server.errors)")
        #expect(server.lines.contains { $0.hasPrefix("stopped:") && $0.contains(" 10 exchanges, 0 error answers") })
        let csv = try String(contentsOf: report.appendingPathComponent("results.csv"), encoding: .utf8)
        let sign = csv.split(separator: "\n").first { $0.hasPrefix("cx,x25519,openssl,tcp,sign,") }
        #expect(sign?.split(separator: ",")[5] == "10", "the server signed each exchange once: \(csv)")
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
