import Foundation
import Histogram
import LabBuiltIns
import LabCX
import LabCore
import LabResults
import LabRunner
import LabTestSupport
import NIOCore
import Testing

/// `lab serve` as an operator runs it: the port file, a run against it, a clean stop on
/// SIGINT with its own report.
@Suite(.tier(.integration)) struct ServeCommandTests {
    /// Wrong option values are refused by the parser, before anything listens: exit 1, the
    /// option named, and for a fixed set of values the set.
    @Test(
        "lab serve refuses a wrong option value with exit 1, naming it",
        arguments: [
            (["--kdf", "md5"], "one of 'sha512-salted', 'pbkdf2-sha256', 'scrypt' or 'argon2id'"),
            (["--argon2-memory-kib", "32"], "--argon2-memory-kib must be 64...4194304"),
            (["--tls", "--tls-groups", "x25519,x448"], "--tls-groups takes distinct groups from x25519, secp256r1"),
            (["--tls", "--tls-version", "1.1"], "--tls-version must be 1.2 or 1.3, not '1.1'"),
            (["--tls-groups", "x25519"], "--tls-groups and --tls-version go with --tls"),
            (
                ["--tls", "--tls-groups", "x25519-mlkem768", "--tls-version", "1.2"],
                "--tls-version 1.2 has no post-quantum group: add a classical one to --tls-groups"
            ),
            (["--policy", "lenient"], "'lenient' is invalid for '--policy <policy>'. Please provide one of 'throttle'"),
            (["--idle-timeout", "soon"], "--idle-timeout"),
            (["--frame-timeout", "0 s"], "--frame-timeout must be longer than 0 s"),
            (["--postpone-for", "1 s"], "--postpone-for goes with --policy seed"),
            (["--scrypt-log-n", "21"], "--scrypt-log-n must be 1...20"),
            (["--tls-key", "key.pem"], "--tls-certificate and --tls-key go together"),
            (["--port", "70000"], "--port must be 0...65535"),
        ]
    )
    func refusesWrongValues(arguments: [String], expected: String) async throws {
        // Bounded: a value the parser let through would start a server that listens until killed.
        let refused = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/timeout"),
            ["20", LabProcess.executable.path, "serve"] + arguments,
            in: RepositoryPaths.root
        )
        #expect(refused.status == 1, "\(arguments): exit \(refused.status), \(refused.errors)")
        #expect(refused.errors.contains(expected), "\(arguments): \(refused.errors)")
        #expect(!refused.output.contains("listening on"), "\(arguments): it listened")
    }

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

    /// Starts `lab serve --drain-timeout drain`, sends half of an x25519 request frame, then
    /// SIGTERM once the server has logged the request's arrival, and `afterSignal` once it
    /// has logged `waitFor`; returns the server's exit status, the bytes it sent back before
    /// it closed, its log, and the client that made the request. Every step waits for an
    /// event, not for time.
    func signalDuringARequest(
        drain: String,
        waitFor: String,
        afterSignal: @escaping @Sendable (NIOAsyncChannelOutboundWriter<ByteBuffer>, ByteBuffer) async throws -> Void
    ) async throws -> (status: Int32, received: [UInt8], log: String, open: @Sendable ([UInt8]) throws -> [UInt8]) {
        let (server, address) = try await LabProcess.serve([
            "--suites", "x25519", "--no-messaging", "--log-level", "trace", "--drain-timeout", drain,
        ])
        defer { server.terminate() }
        let (request, open) = try Self.exchange(try BuiltInPlugins.providers.make("swift-crypto"))
        let frame = HostileInputTests.frame(request)
        let half = frame.readableBytes / 2
        let outcome = try await RawPeer.run(port: address.port, limit: .seconds(60)) { outbound in
            try await outbound.write(frame.getSlice(at: frame.readerIndex, length: half)!)
            try await server.errors(containing: "a request is arriving", timeout: .seconds(30))
            _ = kill(server.pid, SIGTERM)
            try await server.errors(containing: waitFor, timeout: .seconds(30))
            try await afterSignal(outbound, frame.getSlice(at: frame.readerIndex + half, length: frame.readableBytes - half)!)
        }
        // Signal 0 sends nothing: this waits for the exit the SIGTERM above began.
        let status = try await server.stop(signal: 0, timeout: .seconds(30))
        return (status, outcome.received, server.errors, open)
    }

    /// An x25519 request, and what opens and verifies its answer.
    static func exchange<P: CryptoProvider>(
        _ provider: P
    ) throws -> (request: [UInt8], open: @Sendable ([UInt8]) throws -> [UInt8]) {
        var none = NoStepRecorder()
        var client = try CXClient(
            provider: provider,
            options: CXClientOptions(suite: try BuiltInPlugins.suites.make("x25519")),
            recorder: &none
        )
        let request = try client.makeRequest(recorder: &none)
        let opener = client
        return (
            request,
            { body in
                var none = NoStepRecorder()
                return try opener.open(body, recorder: &none)
            }
        )
    }

    @Test("lab serve on SIGTERM finishes the request in flight, writes its answer, then exits 0")
    func sigtermDrainsTheRequestInFlight() async throws {
        let (status, received, log, open) = try await self.signalDuringARequest(
            drain: "2 min",
            waitFor: "draining: finishing the answers in flight"
        ) { outbound, rest in
            // The rest of the request arrives after the drain began.
            try await outbound.write(rest)
        }
        #expect(status == 0, "stderr: \(log)")
        #expect(log.contains("answering=1"), "\(log)")
        #expect(log.contains("drained: every answer in flight was written"), "\(log)")
        // The answer is a whole frame that the client opens and verifies.
        #expect(received.count > 4, "\(log)")
        let length = received.prefix(4).reduce(0) { $0 << 8 | Int($1) }
        #expect(length == received.count - 4)
        let plaintext = try open(Array(received.dropFirst(4)))
        #expect(!plaintext.isEmpty)
    }

    @Test("With a drain timeout shorter than the request, lab serve closes it and still exits 0")
    func drainTimeoutCutsTheRequest() async throws {
        let (status, received, log, _) = try await self.signalDuringARequest(
            drain: "100 ms",
            waitFor: "the grace period is over"
        ) { outbound, rest in
            // Too late: the server has closed the connection.
            try? await outbound.write(rest)
        }
        #expect(status == 0, "stderr: \(log)")
        #expect(log.contains("answering=1"), "\(log)")
        #expect(received.isEmpty, "no answer once the grace period is over")
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
