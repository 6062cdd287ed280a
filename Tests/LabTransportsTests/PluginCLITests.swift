import Foundation
import LabTestSupport
import Testing

/// A transport, a suite and a flow defined in a test target (Tests/PluginLab), added through
/// the catalog, run under `lab run` and (the transport) `lab serve`: the executable is
/// `LabCLI.main` with those plugins, as a package outside the lab builds its own.
@Suite(.tier(.integration)) struct PluginCLITests {
    static let pluginLab = LabProcess.executable.deletingLastPathComponent().appendingPathComponent("PluginLab")

    static func scenario(server: String, iterations: Int = 20) -> String {
        """
        {
          "name": "test-plugins",
          "server": \(server),
          "clients": { "count": 2 },
          "load": { "iterations": \(iterations), "deadline": "60 s" },
          "flows": [
            { "flow": "cx", "suite": "x25519-cbc", "provider": "swift-crypto" },
            { "flow": "cx", "suite": "x25519-cbc", "provider": "openssl" },
            { "flow": "echo" }
          ],
          "thresholds": { "errors": "== 0" }
        }
        """
    }

    /// Runs `executable run` on `scenario` and returns results.json's groups.
    static func run(_ executable: URL, _ scenario: String) async throws -> (ChildProcess.Outcome, [[String: Any]]) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("plugin-lab-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("plugins.json")
        try Data(scenario.utf8).write(to: file)
        let out = folder.appendingPathComponent("report")
        let outcome = try await ChildProcess.run(executable, ["run", file.path, "--out", out.path, "--quiet"])
        let data = (try? Data(contentsOf: out.appendingPathComponent("results.json"))) ?? Data()
        let document = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        return (outcome, document?["groups"] as? [[String: Any]] ?? [])
    }

    /// The groups' flow plugin, suite and transport, as results.json names them.
    static func keys(_ groups: [[String: Any]]) -> Set<String> {
        Set(
            groups.map {
                let key = $0["key"] as? [String: Any] ?? [:]
                return "\($0["flowKind"] ?? "?") \(key["suite"] ?? "?") \(key["transport"] ?? "?")"
            }
        )
    }

    @Test("lab run: the test suite and flow over the test transport, in a server the lab starts")
    func runStartsTheServer() async throws {
        let (outcome, groups) = try await Self.run(
            Self.pluginLab,
            Self.scenario(server: #"{ "transport": "relay", "provider": "swift-crypto", "listen": "127.0.0.1:0" }"#)
        )
        #expect(outcome.status == 0, "\(outcome.output)\(outcome.errors)")
        let keys = Self.keys(groups)
        #expect(keys.contains("cx x25519-cbc relay"), "\(keys)")
        #expect(keys.contains("echo - relay"), "\(keys)")
    }

    @Test("lab serve --transport relay: the test transport serves others, and the test suite through it")
    func serveListensThroughThePlugin() async throws {
        let server = try ServerProcess(
            Self.pluginLab,
            [
                "serve", "--host", "127.0.0.1", "--port", "0", "--transport", "relay", "--no-messaging",
                "--suites", "x25519-cbc,x25519",
            ]
        )
        let address = try await ListeningAddress.of(server, timeout: .seconds(20))
        try await withCleanup({ _ = try? await server.stop(timeout: .seconds(10)) }) {
            // Printed by the plugin's own ListeningServer: lab serve listened through it.
            _ = try await server.line(startingWith: "relay: a test transport", timeout: .seconds(10))
            let scenario = Self.scenario(server: #"{ "transport": "relay", "address": "\#(address)" }"#)
                .replacingOccurrences(of: #"{ "flow": "echo" }"#, with: #"{ "flow": "cx", "suite": "x25519" }"#)
            let (outcome, groups) = try await Self.run(Self.pluginLab, scenario)
            #expect(outcome.status == 0, "\(outcome.output)\(outcome.errors)")
            #expect(Self.keys(groups).contains("cx x25519-cbc relay"), "\(Self.keys(groups))")
            // The server's own figures (by serverStats): it answered the test suite itself.
            #expect(Self.keys(groups).contains("server x25519-cbc relay"), "\(Self.keys(groups))")
        }
    }

    @Test("The built-in lab refuses the same scenario, naming each plugin it lacks at its path")
    func builtInLabRefusesThem() async throws {
        let (outcome, _) = try await Self.run(
            LabProcess.executable,
            Self.scenario(server: #"{ "transport": "relay", "provider": "swift-crypto", "listen": "127.0.0.1:0" }"#)
        )
        #expect(outcome.status == 1)
        for expected in ["$.server.transport", "'relay'", "$.flows[0].suite", "'x25519-cbc'", "$.flows[2].flow", "'echo'"] {
            #expect(outcome.errors.contains(expected), "\(expected) in: \(outcome.errors)")
        }
    }
}
