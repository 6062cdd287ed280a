import Foundation
import LabCore
import LabResults
import LabTesting
import Testing

/// `lab serve` as a service others operate: a report that survives SIGKILL
/// (`--report-interval`), and logs a collector reads (`--log-format json`).
@Suite(.tier(.integration)) struct ServeOperationsTests {
    static func temporaryFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lab-serve-ops-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// The `completedIterations` of the results.json at `file`, if it is there and whole.
    static func completedIterations(_ file: URL) -> Int? {
        guard let data = FileManager.default.contents(atPath: file.path),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return nil }
        return object["completedIterations"] as? Int
    }

    /// 2 clients × 5 x25519 exchanges against `address`.
    static func exchanges(against address: ListeningAddress) async throws -> RunResult {
        try await TestPlan.run(
            """
            {
              "name": "against-serve",
              "server": { "transport": "tcp", "address": "\(address)", "serverStats": false },
              "clients": { "count": 2 },
              "load": { "iterations": 5 },
              "flows": [ { "flow": "cx", "suite": "x25519" } ]
            }
            """
        )
    }

    @Test("--report-interval: the report holds the exchanges while serving, and after a SIGKILL")
    func reportSurvivesAKill() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let report = folder.appendingPathComponent("report")
        let (server, address) = try await LabProcess.serve([
            "--no-messaging", "--suites", "x25519", "--report", report.path, "--report-interval", "1s",
        ])
        defer { server.terminate() }
        let run = try await Self.exchanges(against: address)
        #expect(run.errorCount == 0 && run.completedIterations == 10)
        // The next periodic write after the run: results.json with the run's 10 exchanges.
        let file = report.appendingPathComponent("results.json")
        let answered = try await withDeadline(.seconds(10), "a periodic report with 10 exchanges") {
            while true {
                if let count = Self.completedIterations(file), count == 10 { return count }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        #expect(answered == 10)
        server.terminate()  // SIGKILL: no shutdown, no final report
        #expect(Self.completedIterations(file) == 10, "the last periodic report stays")
        #expect(FileManager.default.fileExists(atPath: report.appendingPathComponent("report.md").path))
    }

    @Test("--log-format json: every stderr line is one JSON object with time, level, label and message")
    func jsonLogs() async throws {
        let (server, _) = try await LabProcess.serve(["--no-messaging", "--log-format", "json"])
        defer { server.terminate() }
        let status = try await server.stop(signal: SIGTERM, timeout: .seconds(20))
        #expect(status == 0)
        let lines = server.errors.split(separator: "\n").map(String.init)
        #expect(lines.count >= 2, "the open-files line and the stop: \(lines)")
        var messages: [String] = []
        for line in lines {
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                "not a JSON object: \(line)"
            )
            for key in ["time", "level", "label", "message"] {
                #expect(object[key] is String, "\(key) in \(line)")
            }
            let time = object["time"] as? String ?? ""
            #expect((try? Date(time, strategy: .iso8601)) != nil, "an ISO 8601 time: \(time)")
            messages.append(object["message"] as? String ?? "")
        }
        #expect(messages.contains { $0.hasPrefix("open files: at most ") }, "\(messages)")
        #expect(messages.contains { $0.hasPrefix("stopping on ") }, "\(messages)")
    }

    @Test("--report-interval needs --report, and a second at least")
    func reportIntervalIsChecked() async throws {
        for (arguments, words) in [
            (["--report-interval", "5s"], "--report-interval writes the --report: give one"),
            (["--report", "/tmp/x", "--report-interval", "10 ms"], "--report-interval must be at least 1 s"),
        ] {
            let refused = try await ChildProcess.run(
                URL(fileURLWithPath: "/usr/bin/timeout"),
                ["20", LabProcess.executable.path, "serve"] + arguments
            )
            #expect(refused.status == 1 && refused.errors.contains(words), "\(arguments): \(refused.errors)")
        }
    }
}
