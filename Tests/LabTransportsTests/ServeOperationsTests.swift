import Foundation
import LabCore
import LabResults
import LabTestSupport
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

    /// `url`'s body and HTTP status, fetched by Python's urllib (an HTTP client apart from the lab).
    static func fetch(_ url: String) async throws -> (status: Int, body: String) {
        let script = #"""
            import sys, urllib.request, urllib.error
            try:
                with urllib.request.urlopen(sys.argv[1], timeout=10) as answer:
                    body, status = answer.read().decode(), answer.status
            except urllib.error.HTTPError as error:
                body, status = error.read().decode(), error.code
            sys.stdout.write(f"{status}\n{body}")
            """#
        let outcome = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script, url])
        try #require(outcome.status == 0, "urllib: \(outcome.errors)")
        let status = Int(outcome.output.prefix { $0 != "\n" }) ?? -1
        return (status, String(outcome.output.drop { $0 != "\n" }.dropFirst()))
    }

    @Test("--metrics-port: promtool accepts the page under load, and its counters are the server's report's")
    func metricsPage() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let report = folder.appendingPathComponent("report")
        let (server, address) = try await LabProcess.serve([
            "--no-messaging", "--suites", "x25519", "--report", report.path, "--metrics-port", "0",
        ])
        defer { server.terminate() }
        let line = try await server.line(startingWith: "metrics on http://", timeout: .seconds(10))
        let url = String(line.dropFirst("metrics on ".count))
        let run = try await Self.exchanges(against: address)
        #expect(run.errorCount == 0 && run.completedIterations == 10)
        let (status, page) = try await Self.fetch(url)
        #expect(status == 200)
        let file = folder.appendingPathComponent("metrics.txt")
        try page.write(to: file, atomically: true, encoding: .utf8)
        let check = try await ChildProcess.run(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", "promtool check metrics < \"$1\"", "sh", file.path]
        )
        #expect(check.status == 0, "promtool: \(check.output)\(check.errors)\n\(page)")
        #expect(try await Self.fetch(url.replacingOccurrences(of: "/metrics", with: "/other")).status == 404)

        // The same figures as the server's own report, written when it stops.
        #expect(try await server.stop(signal: SIGTERM, timeout: .seconds(20)) == 0)
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: report.appendingPathComponent("results.json")))
                as? [String: Any]
        )
        let group = (document["groups"] as? [[String: Any]] ?? []).first {
            ($0["key"] as? [String: Any])?["suite"] as? String == "x25519"
        }
        let answered = group?["iterations"] as? Int
        #expect(answered == 10, "the report: \(String(describing: group))")
        func value(_ sample: String) -> Int? {
            page.split(separator: "\n").first { $0.hasPrefix(sample + " ") }.flatMap {
                Int($0.split(separator: " ").last!)
            }
        }
        #expect(value(#"lab_requests_total{group="x25519",outcome="ok"}"#) == answered)
        let signs = (group?["steps"] as? [[String: Any]] ?? []).first { $0["step"] as? String == "sign" }
        let signCount = (signs?["statistics"] as? [String: Any])?["count"] as? Int
        #expect(signCount == 10 && value(#"lab_step_seconds_count{group="x25519",step="sign"}"#) == signCount)
        #expect(value(#"lab_step_seconds_bucket{group="x25519",step="sign",le="+Inf"}"#) == signCount)
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
