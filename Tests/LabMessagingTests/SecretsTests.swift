import Foundation
import LabCX
import LabCore
import LabMessaging
import LabTestSupport
import Testing

/// Issue 8's secrets: nothing the lab prints, logs or reports holds a password, a key or a
/// plaintext, even at trace level; the files it writes that do hold secrets are its owner's
/// alone; a TLS key file others can read is reported, not used silently.
@Suite(.tier(.load), .serialized) struct SecretsTests {
    @Test("no password, chat key or plaintext in lab serve's and lab run's output, logs and reports")
    func noSecretInLogsOrReports() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("secrets-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("m.sqlite")
        let secretLog = folder.appendingPathComponent("secrets.txt")
        let serverReport = folder.appendingPathComponent("server-report")
        let runReport = folder.appendingPathComponent("run")

        let (server, address) = try await LabProcess.serve([
            "--db", database.path, "--kdf", "pbkdf2-sha256", "--pbkdf2-iterations", "1000", "--log-level", "trace",
            "--report", serverReport.path,
        ])
        defer { server.terminate() }
        let scenario = folder.appendingPathComponent("scenario.json")
        try """
        {
          "name": "secrets",
          "server": { "transport": "tcp", "address": "\(address)" },
          "clients": { "count": 3 },
          "load": { "iterations": 4 },
          "flows": [
            { "flow": "cx", "suite": "x25519" },
            { "flow": "chat", "options": { "secretLog": "\(secretLog.path)", "messageBytes": 48 } }
          ],
          "report": { "formats": ["csv", "markdown", "json"] }
        }
        """.write(to: scenario, atomically: true, encoding: .utf8)
        let run = try await ChildProcess.run(LabProcess.executable, ["run", scenario.path, "--out", runReport.path])
        #expect(run.status == 0, "\(run.errors)")
        // The files that hold secrets are the owner's alone: checked while the server runs,
        // since SQLite removes its -wal and -shm files when it closes cleanly.
        for file in [secretLog.path, database.path, database.path + "-wal", database.path + "-shm"] {
            let mode = try #require(
                FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? NSNumber,
                "\(file) exists"
            )
            #expect(mode.intValue & 0o077 == 0, "\(file) has mode \(String(mode.intValue, radix: 8))")
        }
        _ = try await server.stop(signal: SIGINT, timeout: .seconds(20))

        // Everything a person or a log collector would see.
        var seen: [(String, [UInt8])] = [
            ("lab run's output", Array(run.output.utf8)), ("lab run's errors", Array(run.errors.utf8)),
            ("lab serve's output", Array(server.output.utf8)), ("lab serve's log", Array(server.errors.utf8)),
        ]
        for directory in [serverReport, runReport] {
            let files =
                FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)?
                .compactMap { $0 as? URL } ?? []
            for file in files where (try? file.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
                seen.append((file.path, try [UInt8](Data(contentsOf: file))))
            }
        }
        // The controls: trace logging was on, and both reports were written.
        #expect(server.errors.split(separator: "\n").count > 10, "lab serve logged at trace level")
        #expect(
            seen.contains { $0.0.hasPrefix(runReport.path) && $0.0.hasSuffix("/report.md") },
            "lab run wrote its report"
        )
        #expect(seen.filter { $0.0.hasPrefix(serverReport.path) }.count >= 3, "lab serve wrote its report")

        let logged = try String(contentsOf: secretLog, encoding: .utf8).split(separator: "\n").map { line in
            let parts = line.split(separator: " ")
            return (kind: String(parts[0]), bytes: [UInt8](hex: parts[1]) ?? [])
        }
        #expect(logged.filter { $0.kind == "password" }.count == 6)
        #expect(logged.filter { $0.kind == "message" }.count >= 1, "the chat flow sent messages")
        let secrets = logged + [(kind: "cx/1 plaintext", bytes: Array(Payload.standard.prefix(32)))]
        for (kind, bytes) in secrets {
            #expect(bytes.count >= 16, "\(kind) too short to search for")
            let needles = [
                bytes, Array(bytes.prefix(12)), Array(bytes.map { String(format: "%02x", $0) }.joined().utf8),
                Array(bytes.map { String(format: "%02X", $0) }.joined().utf8),
                Array(Data(bytes).base64EncodedString().utf8),
            ]
            for (place, haystack) in seen {
                #expect(
                    !needles.contains { WireTapTests.contains(haystack, $0) },
                    "a \(kind) (or its hex or base64) is in \(place)"
                )
            }
        }

    }

    @Test("a TLS private key others can read is reported by lab serve; one of the owner's alone is not")
    func exposedTLSKeyIsReported() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tls-key-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = folder.appendingPathComponent("server.key")
        let certificate = folder.appendingPathComponent("server.pem")
        let made = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/openssl"),
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
                "-subj", "/CN=localhost", "-keyout", key.path, "-out", certificate.path,
            ]
        )
        try #require(made.status == 0, "\(made.errors)")
        for mode in [0o644, 0o600] {
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: key.path)
            let (server, _) = try await LabProcess.serve([
                "--no-messaging", "--suites", "x25519", "--tls", "--tls-certificate", certificate.path, "--tls-key",
                key.path,
            ])
            _ = try await server.stop(signal: SIGINT, timeout: .seconds(20))
            let warned = server.errors.contains("can be read by group or others")
            #expect(warned == (mode == 0o644), "mode \(String(mode, radix: 8)): \(server.errors)")
        }
    }
}
