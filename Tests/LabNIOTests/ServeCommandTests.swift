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

    /// Starts `lab serve` with `--drain-timeout drain`, sends it SIGTERM while it answers an
    /// exchange (it makes a fresh RSA-4096 key for it, hundreds of milliseconds), and returns
    /// its exit status, the client's run and the server's log.
    ///
    /// The server runs its tasks on Swift's own thread pool (`LAB_EXECUTOR=swift`). By default
    /// `lab serve` runs them on NIO's event loops, where the key generation holds one loop
    /// until it ends, and with it whatever else is queued there (the listener's close, the
    /// signal's task): the drain may then begin only after the answer, and the test would
    /// not know what it saw (docs/serve.md, "Stopping").
    func signalDuringAnExchange(drain: String) async throws -> (status: Int32, result: RunResult, log: String) {
        let (server, address) = try await LabProcess.serve(
            [
                "--provider", "openssl", "--suites", "rsa-modern", "--keys", "per-exchange", "--no-messaging",
                "--log-level", "trace", "--drain-timeout", drain,
            ],
            environment: ["LAB_EXECUTOR": "swift"]
        )
        defer { server.terminate() }
        let json = """
            {
              "name": "drain",
              "server": { "transport": "tcp", "address": "\(address)", "serverStats": false },
              "clients": { "count": 1 },
              "load": { "iterations": 1, "warmupIterations": 0 },
              "flows": [ { "flow": "cx", "suite": "rsa-modern", "provider": "openssl", "options": { "rsaBits": 4096 } } ]
            }
            """
        let run = Task { try await TestPlan.run(json) }
        try await server.errors(containing: "answering a request", timeout: .seconds(120))
        let status = try await server.stop(signal: SIGTERM, timeout: .seconds(150))
        return (status, try await run.value, server.errors)
    }

    @Test("lab serve on SIGTERM finishes the exchange in flight, writes its answer, then exits 0")
    func sigtermDrainsTheAnswerInFlight() async throws {
        let (status, result, log) = try await self.signalDuringAnExchange(drain: "2 min")
        #expect(status == 0, "stderr: \(log)")
        #expect(result.errorCount == 0, "errors: \(result.groups.map(\.errors))")
        #expect(result.completedIterations == 1)
        #expect(log.contains("draining: finishing the answers in flight") && log.contains("answering=1"), "\(log)")
        #expect(log.contains("drained: every answer in flight was written"), "\(log)")
    }

    @Test("With a drain timeout shorter than the answer, lab serve closes the exchange and still exits 0")
    func drainTimeoutCutsTheAnswer() async throws {
        let (status, result, log) = try await self.signalDuringAnExchange(drain: "1 ms")
        #expect(status == 0, "stderr: \(log)")
        #expect(result.errorCount == 1, "the client's exchange was cut: \(result.groups.map(\.errors))")
        #expect(log.contains("answering=1") && log.contains("the grace period is over"), "\(log)")
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
