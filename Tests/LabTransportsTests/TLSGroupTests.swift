import Foundation
import Histogram
import LabCore
import LabReport
import LabResults
import LabTestSupport
import LabTransports
import Testing

/// The `tls` transport's key exchange, chosen (`server.tls.groups`, `--tls-groups`,
/// `server.tls.version`) and recorded: what the lab's client reads off the handshake is
/// checked against an independent peer, the `openssl` command line, in both directions.
@Suite(.tier(.integration)) struct TLSGroupTests {
    /// The outcomes one connection of the lab's client counted.
    static func connect(to port: Int, pin: CertificatePin, groups: [TLSGroup]? = nil) async throws -> StepTimings {
        let transport = try TLSTransport(options: TransportOptions(tls: TLSSettings(pin: pin, groups: groups)))
        var recorder = StepTimings()
        let connection = try await transport.remote(host: "127.0.0.1", port: port).connect(recorder: &recorder)
        await connection.close()
        return recorder
    }

    @Test(
        "Against openssl s_server, the lab's client records the version, group and cipher the server chose",
        arguments: [
            // The server's only cipher suite in each, so that its choice is known. The client
            // sends key shares for its first two groups (x25519-mlkem768, x25519): a P-256
            // server must first ask for another (a HelloRetryRequest).
            (
                ["-groups", "X25519", "-ciphersuites", "TLS_CHACHA20_POLY1305_SHA256"], "1.3", "x25519",
                "TLS_CHACHA20_POLY1305_SHA256", false
            ),
            (
                ["-groups", "P-256", "-ciphersuites", "TLS_AES_256_GCM_SHA384"], "1.3", "secp256r1",
                "TLS_AES_256_GCM_SHA384", true
            ),
            // TLS 1.2 names its group in the ServerKeyExchange (the certificates are ECDSA P-256).
            (
                ["-groups", "P-384", "-tls1_2", "-cipher", "ECDHE-ECDSA-AES256-GCM-SHA384"], "1.2", "secp384r1",
                "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", false
            ),
        ]
    )
    func readsWhatAnIndependentServerChose(
        options: [String],
        version: String,
        group: String,
        cipher: String,
        helloRetry: Bool
    ) async throws {
        let certificates = try await TestCertificates()
        defer { certificates.cleanUp() }
        let server = try ServerProcess(
            URL(fileURLWithPath: "/usr/bin/openssl"),
            [
                "s_server", "-accept", "127.0.0.1:0", "-cert", certificates.certificate("server"), "-key",
                certificates.key("server"), "-www",
            ] + options
        )
        defer { server.terminate() }
        let accept = try await server.line(startingWith: "ACCEPT", timeout: .seconds(10))
        let port = try #require(Int(accept.split(separator: ":").last ?? ""), "s_server printed '\(accept)'")
        // The client offers all four groups (the server's choice among them is the point).
        let recorder = try await Self.connect(
            to: port,
            pin: .certificateFile(certificates.certificate("server")),
            groups: [.x25519MLKEM768, .x25519, .secp256r1, .secp384r1]
        )
        #expect(recorder.outcomes["tls.version.\(version)"] == 1, "\(recorder.outcomes)")
        #expect(recorder.outcomes["tls.group.\(group)"] == 1, "\(recorder.outcomes)")
        #expect(recorder.outcomes["tls.cipher.\(cipher)"] == 1, "\(recorder.outcomes)")
        #expect(recorder.outcomes["tls.hello-retry"] == (helloRetry ? 1 : nil), "\(recorder.outcomes)")
        #expect(recorder.steps.contains(.handshake) && recorder.steps.contains(.connect))
    }

    @Test(
        "lab serve --tls-groups: openssl s_client and the lab's client see the same group",
        arguments: [("x25519", "Server Temp Key: X25519"), ("secp256r1", "Server Temp Key: ECDH, prime256v1")]
    )
    func serveGroupsAsOpenSSLSeesThem(group: String, opensslSays: String) async throws {
        let certificates = try await TestCertificates()
        defer { certificates.cleanUp() }
        let (server, address) = try await LabProcess.serve([
            "--tls-certificate", certificates.certificate("server"), "--tls-key", certificates.key("server"),
            "--tls-groups", group, "--suites", "x25519",
        ])
        defer { server.terminate() }
        // It offers all three it can speak; its input ends at once, and so does it.
        let client = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/timeout"),
            [
                "20", "/bin/sh", "-c",
                "openssl s_client -connect 127.0.0.1:\(address.port) -groups X25519:P-256:P-384 < /dev/null",
            ]
        )
        #expect(client.output.contains(opensslSays), "s_client: \(client.output)")
        let recorder = try await Self.connect(
            to: address.port,
            pin: .certificateFile(certificates.certificate("server"))
        )
        #expect(recorder.outcomes["tls.group.\(group)"] == 1, "\(recorder.outcomes)")
        // The lab's client shares x25519-mlkem768 and x25519 keys first: secp256r1 takes a retry.
        #expect(recorder.outcomes["tls.hello-retry"] == (group == "secp256r1" ? 1 : nil), "\(recorder.outcomes)")
        // A client that offers only another group cannot agree with this server at all.
        let other: TLSGroup = group == "x25519" ? .secp256r1 : .x25519
        await #expect(throws: LabError.self) {
            _ = try await Self.connect(
                to: address.port,
                pin: .certificateFile(certificates.certificate("server")),
                groups: [other]
            )
        }
    }

    @Test("server.tls.version holds both sides to one version: 1.2 runs as 1.2, and a 1.3 server refuses a 1.2 client")
    func versionHoldsBothSides() async throws {
        let result = try await TestPlan.run(
            """
            { "name": "tls-1.2", "server": { "transport": "tls", "tls": { "version": "1.2", "groups": ["secp384r1", "secp256r1"] } },
              "clients": { "count": 2 }, "load": { "iterations": 3 }, "flows": [ { "flow": "cx", "suite": "x25519" } ] }
            """
        )
        #expect(result.errorCount == 0 && result.completedIterations == 6)
        let client = try #require(result.groups.first { !$0.isServerSide })
        #expect(client.outcomes["tls.version.1.2"] == 2, "\(client.outcomes)")
        // The client's first group, read from the ServerKeyExchange. (TLS 1.2 ties an ECDSA
        // certificate to the groups too: the lab's self-signed P-256 one needs secp256r1 listed.)
        #expect(client.outcomes["tls.group.secp384r1"] == 2, "\(client.outcomes)")

        let certificates = try await TestCertificates()
        defer { certificates.cleanUp() }
        let (server, address) = try await LabProcess.serve([
            "--tls-certificate", certificates.certificate("server"), "--tls-key", certificates.key("server"),
            "--tls-version", "1.3", "--suites", "x25519",
        ])
        defer { server.terminate() }
        for (version, accepted) in [("-tls1_2", false), ("-tls1_3", true)] {
            let client = try await ChildProcess.run(
                URL(fileURLWithPath: "/usr/bin/timeout"),
                ["20", "/bin/sh", "-c", "openssl s_client -connect 127.0.0.1:\(address.port) \(version) < /dev/null"]
            )
            #expect(client.output.contains("Server Temp Key") == accepted, "s_client \(version): \(client.output)")
        }
    }

    @Test("A tls run with x25519 and one with x25519-mlkem768 both verify, each recording its group and handshake")
    func hybridAndClassicRuns() async throws {
        for group in ["x25519", "x25519-mlkem768"] {
            let result = try await TestPlan.run(
                """
                { "name": "tls-\(group)", "server": { "transport": "tls", "tls": { "groups": ["\(group)"] } },
                  "clients": { "count": 2 }, "load": { "iterations": 5 },
                  "flows": [ { "flow": "cx", "suite": "x25519" } ] }
                """
            )
            #expect(result.errorCount == 0 && result.completedIterations == 10)
            let client = try #require(result.groups.first { !$0.isServerSide })
            #expect(client.outcomes["tls.group.\(group)"] == 2, "one handshake per client: \(client.outcomes)")
            #expect(client.outcomes["tls.version.1.3"] == 2)
            #expect(client.steps[.handshake]?.totalCount == 2)
        }
    }

    @Test("lab compare puts the two groups' handshakes side by side: one row per run, 30 samples each")
    func compareHandshakeCost() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lab-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for group in ["x25519", "x25519-mlkem768"] {
            let run = try await ChildProcess.run(
                LabProcess.executable,
                [
                    "run", "Scenarios/tls-handshake.json", "--set", "clients.count=30", "--set",
                    "clients.rampUp=\"300 ms\"",
                    "--set", "server.tls.groups=[\"\(group)\"]", "--out", folder.path + "/\(group)", "--quiet",
                ],
                in: RepositoryPaths.root
            )
            #expect(run.status == 0, "\(group): \(run.errors)")
        }
        let compare = try await ChildProcess.run(
            LabProcess.executable,
            ["compare", folder.path + "/x25519", folder.path + "/x25519-mlkem768", "--out", folder.path + "/compare"],
            in: RepositoryPaths.root
        )
        #expect(compare.status == 0, "\(compare.errors)")
        let csv = try String(contentsOf: folder.appendingPathComponent("compare/comparison.csv"), encoding: .utf8)
        let rows = csv.split(separator: "\n").map {
            $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        }
        let handshakes = rows.filter { $0.count > 7 && $0[4] == "handshake" }
        #expect(handshakes.count == 2, "a row per run: \(handshakes)")
        #expect(handshakes.allSatisfy { $0[7] == "30" }, "30 handshakes each: \(handshakes)")
        for (group, name) in [("x25519", "x25519"), ("x25519-mlkem768", "x25519-mlkem768")] {
            let result = try RunResult.read(from: folder.appendingPathComponent("\(group)/results.json"))
            #expect(result.groups.first?.outcomes["tls.group.\(name)"] == 30)
        }
    }
}
