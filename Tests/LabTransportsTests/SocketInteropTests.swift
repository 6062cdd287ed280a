import Foundation
import LabBuiltIns
import LabCore
import LabResults
import LabRunner
import LabTestSupport
import Testing

/// The lab against an independent cx/1 implementation (`Tests/Interop/cx_peer.py`: Python's
/// `cryptography` + `plistlib`, written from docs/protocol.md alone) over real TCP sockets on
/// loopback: the Python client against `lab serve`, and the lab's client (the runner, with a
/// scenario naming the server's `address`) against the Python server. Every suite, both
/// framings, the legacy request, both providers wherever both can do the suite.
@Suite(.tier(.integration), .timeLimit(.minutes(1)))
struct SocketInteropTests {
    /// Exchanges per Python client (one connection each).
    static let exchanges = 5
    /// How long a server may take to print a line or to stop.
    static let wait = Duration.seconds(20)

    // MARK: - The Python client against `lab serve`

    /// One `cx_peer.py exchange` run and what it must end with.
    struct PythonClient: Sendable, CustomStringConvertible {
        enum Expectation: Sendable {
            /// Every exchange verified.
            case ok
            /// The client stops at `stage` after `exchanges` good ones; `code` is the server's error answer.
            case fails(stage: String, code: String? = nil, exchanges: Int = 0)
        }

        var suite: String
        var rsaBits: Int? = nil
        var legacy = false
        var payloadBytes: Int? = nil
        var expectation = Expectation.ok

        var arguments: [String] {
            var arguments = ["--suite", self.suite, "--count", "\(SocketInteropTests.exchanges)"]
            if let bits = self.rsaBits { arguments += ["--rsa-bits", "\(bits)"] }
            if self.legacy { arguments.append("--legacy") }
            if let bytes = self.payloadBytes { arguments += ["--payload-bytes", "\(bytes)"] }
            return arguments
        }

        /// The exchanges `lab serve` answers without an error for this client.
        var answered: Int {
            switch self.expectation {
            case .ok: SocketInteropTests.exchanges
            // The client gives up after the first exchange it cannot verify: the server answered it.
            case .fails(_, let code, let good): good + (code == nil ? 1 : 0)
            }
        }

        /// Error answers `lab serve` sends this client.
        var errorAnswers: Int {
            if case .fails(_, _?, _) = self.expectation { return 1 }
            return 0
        }

        var description: String {
            var text = self.suite
            if let bits = self.rsaBits { text += "@\(bits)" }
            if self.legacy { text += " legacy" }
            if let bytes = self.payloadBytes { text += " payload \(bytes)" }
            return text
        }
    }

    /// One `lab serve` process and the Python clients it answers.
    struct LabServer: Sendable, CustomStringConvertible {
        var provider: String
        var framing: String
        var suites: String
        var clients: [PythonClient]

        var description: String { "lab serve --provider \(self.provider) --framing \(self.framing)" }
    }

    /// One server per provider × framing, each offering every suite its provider can do.
    static let labServers: [LabServer] = ["u32be", "u64le"].flatMap { framing in
        [
            LabServer(
                provider: "openssl",
                framing: framing,
                suites: "classic@512,rsa-modern,x25519",
                clients: [
                    PythonClient(suite: "classic", rsaBits: 512),
                    PythonClient(suite: "classic", rsaBits: 512, legacy: true),
                    PythonClient(suite: "rsa-modern"),
                    PythonClient(suite: "x25519"),
                    // OpenSSL 3.0 has no ML-DSA: §2.3's `unsupported`, then the server closes.
                    PythonClient(suite: "pq", expectation: .fails(stage: "server-error", code: "unsupported")),
                ]
            ),
            LabServer(
                provider: "swift-crypto",
                framing: framing,
                suites: "classic@1024,rsa-modern,x25519,pq",
                clients: [
                    PythonClient(suite: "classic", rsaBits: 1024),
                    PythonClient(suite: "classic", rsaBits: 1024, legacy: true),
                    PythonClient(suite: "rsa-modern"),
                    PythonClient(suite: "x25519"),
                    PythonClient(suite: "pq"),
                    // `lab serve` always sends the 427-byte text: a client expecting another
                    // payload must find the difference after decrypting and verifying.
                    PythonClient(suite: "x25519", payloadBytes: 100, expectation: .fails(stage: "payload")),
                ]
            ),
        ]
    }

    @Test("The Python client completes verified exchanges with lab serve for every suite", arguments: labServers)
    func pythonClientAgainstLabServe(_ setup: LabServer) async throws {
        let (server, address) = try await LabProcess.serve([
            "--provider", setup.provider, "--framing", setup.framing, "--suites", setup.suites,
        ])
        defer { server.terminate() }
        let results = try await withThrowingTaskGroup(of: (Int, PythonPeer.Result).self) { group in
            for (index, client) in setup.clients.enumerated() {
                group.addTask {
                    (
                        index,
                        try await PythonPeer.exchange(with: address, client.arguments + ["--framing", setup.framing])
                    )
                }
            }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        for (index, client) in setup.clients.enumerated() {
            let result = try #require(results[index])
            let output = "\(client): \(result.output) \(result.errors)"
            switch client.expectation {
            case .ok:
                #expect(result.status == 0, "\(output)")
                #expect(result.bool("ok") == true, "\(output)")
                #expect(result.int("exchanges") == Self.exchanges, "\(output)")
            case .fails(let stage, let code, let good):
                #expect(result.status == 1, "\(output)")
                #expect(result.bool("ok") == false, "\(output)")
                #expect(result.string("stage") == stage, "\(output)")
                #expect(result.int("exchanges") == good, "\(output)")
                if let code {
                    #expect(result.string("code") == code, "\(output)")
                    #expect(result.bool("closed") == true, "§2.3: the server closes after an error answer: \(output)")
                }
            }
        }

        let status = try await server.stop(timeout: Self.wait)
        #expect(status == 0, "\(server.errors)")
        let answered = setup.clients.map(\.answered).reduce(0, +)
        let errors = setup.clients.map(\.errorAnswers).reduce(0, +)
        #expect(
            server.lines.last
                == "stopped: \(setup.clients.count) connections, \(answered) exchanges, \(errors) error answers",
            "\(server.output)"
        )
    }

    // MARK: - The lab's client against the Python server

    /// One scenario entry run against the Python server, and what it must end with.
    struct LabClient: Sendable, CustomStringConvertible {
        var suite: String
        var provider: String
        var rsaBits: Int? = nil
        var legacy = false
        var payloadBytes: Int? = nil
        /// The error kind every iteration must end with; nil: none may fail.
        var failure: String? = nil

        var description: String {
            var text = "\(self.suite) on \(self.provider)"
            if let bits = self.rsaBits { text += "@\(bits)" }
            if self.legacy { text += " legacy" }
            if let bytes = self.payloadBytes { text += " payload \(bytes)" }
            return text
        }

        /// The connections the runner opens for this scenario: one probe before the run, one per
        /// client, and after a failed iteration (the server may have closed) a fresh one.
        var connections: Int {
            let perClient = self.failure == nil ? 1 : SocketInteropTests.exchanges
            return 1 + SocketInteropTests.labClients * perClient
        }

        func scenario(address: ListeningAddress, framing: String) -> String {
            var options: [String] = []
            if let bits = self.rsaBits { options.append(#""rsaBits": \#(bits)"#) }
            if self.legacy { options.append(#""legacy": true"#) }
            if let bytes = self.payloadBytes { options.append(#""payloadBytes": \#(bytes)"#) }
            return #"""
                { "name": "python-server", "clients": { "count": \#(SocketInteropTests.labClients) },
                  "load": { "iterations": \#(SocketInteropTests.exchanges), "warmupIterations": 0, "deadline": "30 s" },
                  "server": { "transport": "tcp", "address": "\#(address)", "framing": "\#(framing)", "idleTimeout": "15 s",
                              "serverStats": false },
                  "flows": [ { "flow": "cx", "suite": "\#(self.suite)", "provider": "\#(self.provider)",
                               "options": { \#(options.joined(separator: ", ")) } } ] }
                """#
        }
    }

    /// Simulated clients per scenario (each opens one connection).
    static let labClients = 2

    /// Every suite with every client provider that can do it.
    static let labClientCases: [LabClient] = [
        LabClient(suite: "classic", provider: "openssl", rsaBits: 512),
        LabClient(suite: "classic", provider: "openssl", rsaBits: 512, legacy: true),
        LabClient(suite: "classic", provider: "openssl", rsaBits: 1024),
        LabClient(suite: "classic", provider: "swift-crypto", rsaBits: 1024),
        LabClient(suite: "classic", provider: "swift-crypto", rsaBits: 1024, legacy: true),
        LabClient(suite: "rsa-modern", provider: "openssl"),
        LabClient(suite: "rsa-modern", provider: "swift-crypto"),
        LabClient(suite: "x25519", provider: "openssl"),
        LabClient(suite: "x25519", provider: "swift-crypto"),
        LabClient(suite: "pq", provider: "swift-crypto"),
    ]

    @Test(
        "The lab's client completes every iteration against the Python server for every suite",
        arguments: ["u32be", "u64le"]
    )
    func labClientAgainstPythonServer(_ framing: String) async throws {
        let (server, address) = try await PythonPeer.serve(["--framing", framing])
        defer { server.terminate() }
        let results = try await Self.run(Self.labClientCases, address: address, framing: framing)
        for (client, result) in zip(Self.labClientCases, results) {
            #expect(result.completedIterations == Self.labClients * Self.exchanges, "\(client)")
            #expect(result.errorsByKind.isEmpty, "\(client): \(result.errorsByKind)")
            #expect(!result.stoppedByDeadline, "\(client)")
            #expect(result.groups.map(\.iterations) == [UInt64(Self.labClients * Self.exchanges)], "\(client)")
            #expect(result.groups.first?.steps[.exchange] != nil, "\(client): timed exchanges")
        }
        try await server.stop(timeout: Self.wait)
        let connections = Self.labClientCases.map(\.connections).reduce(0, +)
        let exchanges = Self.labClientCases.count * Self.labClients * Self.exchanges
        #expect(
            server.lines.last == "stopped: \(connections) connections, \(exchanges) exchanges, 0 error answers",
            "\(server.output) \(server.errors)"
        )
    }

    @Test("The lab's client checks what the Python server sends: payload, error answers")
    func labClientNoticesPythonServerDifferences() async throws {
        // This server sends a 100-byte payload and offers no `pq`.
        let (server, address) = try await PythonPeer.serve(["--payload-bytes", "100", "--suites", "classic,x25519"])
        defer { server.terminate() }
        let cases = [
            LabClient(suite: "x25519", provider: "swift-crypto", payloadBytes: 100),
            LabClient(suite: "classic", provider: "openssl", rsaBits: 512, payloadBytes: 100),
            // Decrypts and verifies, then finds another message than the 427-byte default.
            LabClient(suite: "x25519", provider: "openssl", failure: "payloadMismatch"),
            // §2.3 `unsupported`: every iteration gets the error answer on a fresh connection.
            LabClient(suite: "pq", provider: "swift-crypto", failure: "serverError"),
        ]
        let results = try await Self.run(cases, address: address, framing: "u32be")
        let iterations = Self.labClients * Self.exchanges
        for (client, result) in zip(cases, results) {
            #expect(result.completedIterations == iterations, "\(client)")
            let expected = client.failure.map { [$0: UInt64(iterations)] } ?? [:]
            #expect(result.errorsByKind == expected, "\(client)")
        }
        try await server.stop(timeout: Self.wait)
        let connections = cases.map(\.connections).reduce(0, +)
        #expect(
            server.lines.last
                == "stopped: \(connections) connections, \(3 * iterations) exchanges, \(iterations) error answers",
            "\(server.output) \(server.errors)"
        )
        #expect(server.errors.contains("answered unsupported (pq)"), "\(server.errors)")
    }

    // MARK: - Where implementations may disagree (docs/protocol.md §2.4)

    @Test("§2.4: an RSA suite's server key has the client key's size (\"RSA, same encoding and size\")")
    func rsaServerKeyHasClientKeySize() async throws {
        // lab serve is set up for classic at 512 bits; the Python client sends a 1024-bit key.
        let (labServer, labAddress) = try await LabProcess.serve([
            "--provider", "openssl", "--suites", "classic@512",
        ])
        defer { labServer.terminate() }
        let python = try await PythonPeer.exchange(with: labAddress, ["--suite", "classic", "--rsa-bits", "1024"])
        // Answering with a 1024-bit key, or refusing the size with an error answer, both keep §2.4;
        // lab serve answers with a 1024-bit key, made on first use.
        #expect(python.string("stage") != "decode", "\(python.output)")
        #expect(python.bool("ok") == true, "\(python.output)")

        // The Python server, told to (--rsa-bits 512), breaks §2.4 the same way: the lab's client should refuse.
        let (pythonServer, pythonAddress) = try await PythonPeer.serve(["--suites", "classic", "--rsa-bits", "512"])
        defer { pythonServer.terminate() }
        let result = try await Self.run(
            [LabClient(suite: "classic", provider: "openssl", rsaBits: 1024)],
            address: pythonAddress,
            framing: "u32be"
        )[0]
        #expect(result.errorCount == UInt64(Self.labClients * Self.exchanges), "\(result.errorsByKind)")
    }

    /// Runs one scenario per case, all at once, each against `address`.
    static func run(_ cases: [LabClient], address: ListeningAddress, framing: String) async throws -> [RunResult] {
        try await withThrowingTaskGroup(of: (Int, RunResult).self) { group in
            for (index, client) in cases.enumerated() {
                let json = client.scenario(address: address, framing: framing)
                group.addTask {
                    (index, try await TestPlan.run(json))
                }
            }
            let results = try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
            return cases.indices.map { results[$0]! }
        }
    }
}
