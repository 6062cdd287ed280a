import Foundation
import LabTestSupport
import Testing

/// `lab run --live`: the page a browser watches while the run runs, its event stream and its
/// metrics, and that the run ends on time whoever is watching.
@Suite(.tier(.browser)) struct LiveViewTests {
    /// Two groups at 20 exchanges a second each, 10 s measured: light enough not to disturb
    /// the integration pass's clocks.
    static let scenario = #"""
        {
          "name": "live-view",
          "description": "Ten seconds at 40 exchanges a second, watched live.",
          "server": { "transport": "in-process", "provider": "swift-crypto" },
          "clients": { "count": 2 },
          "load": { "model": "open", "rate": 40, "duration": "10 s", "warmup": "500 ms", "deadline": "1 min" },
          "flows": [
            { "flow": "cx", "suite": "x25519", "provider": "swift-crypto" },
            { "flow": "cx", "suite": "x25519", "provider": "openssl" }
          ],
          "report": { "formats": ["json"] }
        }
        """#

    @Test(
        "The live page in Chromium gains a point each second of a 10 s run, then says the run ended; the run does not wait for it"
    )
    func pointEachSecond() async throws {
        let folder = try CLITests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("live-view.json")
        try Self.scenario.write(to: file, atomically: true, encoding: .utf8)
        let lab = try ServerProcess(
            CLITests.lab,
            [
                "run", file.path, "--out", folder.appendingPathComponent("out").path, "--quiet", "--live",
                "--live-port", "0",
            ]
        )
        defer { lab.terminate() }
        let line = try await lab.errorLine(described: "the live view's address", timeout: .seconds(30)) {
            $0.hasPrefix("live view: http://127.0.0.1:")
        }
        let url = String(line.dropFirst("live view: ".count))

        // The metrics page answers while the run runs.
        let metrics = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            [
                "python3", "-c",
                "import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode())",
                url + "metrics",
            ]
        )
        #expect(
            metrics.status == 0 && metrics.output.contains("lab_run_iterations_completed_total"),
            "\(metrics.output)\(metrics.errors); the lab \(lab.hasExited ? "had ended" : "was still running")"
        )

        // The stream's end comes once the reports are written: results.json is there when it arrives.
        let out = folder.appendingPathComponent("out")
        async let ending = ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            [
                "python3", "-c",
                """
                import os, sys, urllib.request
                for line in urllib.request.urlopen(sys.argv[1], timeout=60):
                    if line.startswith(b"event: end"):
                        print("end", os.path.exists(sys.argv[2])); break
                """,
                url + "events", out.appendingPathComponent("results.json").path,
            ]
        )
        // Watched for 14 s: the run's 10 s measured and its warm-up, and after its end.
        let seen = try await HTMLReportTests.browser([
            "watch", url, "--seconds", "14", "--selector", "#latency svg g.second", "--selector", "#status.ended",
            "--texts", "#latency svg text.value", "--texts", "#rate svg text.value", "--texts", "#latency svg text.time",
            "--texts", "#status",
        ])
        let ended = try await ending
        #expect(ended.output.trimmingCharacters(in: .whitespacesAndNewlines) == "end True", "\(ended.output)\(ended.errors)")
        // The run ended on its own while the page still had its stream open.
        #expect(lab.hasExited, "the lab was still running when the browser left")
        #expect(try await lab.exitStatus(within: .seconds(10)) == 0, "\(lab.errors)")

        #expect((seen["exceptions"] as? [Any])?.isEmpty == true, "\(seen["exceptions"] ?? "")")
        let console = (seen["console"] as? [[String: Any]]) ?? []
        #expect(console.filter { ($0["type"] as? String) == "error" }.isEmpty, "\(console)")
        let counts = try #require(seen["counts"] as? [String: [Int]])
        let points = try #require(counts["#latency svg g.second"])
        let endedLooks = try #require(counts["#status.ended"])
        // From the first second shown to the last, a new one at (nearly) every look: a look
        // a second, and the page a second apart; at most one look in a row without one (the
        // look and the event crossing), never two.
        let last = try #require(points.last)
        #expect(last >= 9, "\(points)")
        let first = try #require(points.firstIndex { $0 > 0 })
        let growing = try #require(points.firstIndex(of: last))
        let window = Array(points[first...growing])
        for index in window.indices.dropFirst(2) {
            #expect(window[index] > window[index - 2], "no new point for two looks in a row: \(points)")
        }
        // At least five looks while it ran (Chromium's start, beside the other browser test's
        // quickstart, took up to 3 of the 10 s: a late page gets every second so far at once).
        #expect(window.count >= 5 && last - window[0] >= window.count - 2, "\(points)")
        let status = (seen["texts"] as? [String: [[String]]])?["#status"]?.last ?? []
        #expect(endedLooks.last == 1, "the page never said the run had ended: \(endedLooks), \(status)")
        #expect(endedLooks.firstIndex(of: 1).map { $0 >= growing } == true, "\(endedLooks) against \(points)")
        Self.expectRoundTicks(try #require(seen["texts"] as? [String: [[String]]]))
    }

    /// A tick's label (`500 µs`, `20/s`, `4 s`) as a number in its unit's base (ns, /s, s); nil otherwise.
    static func tickValue(_ label: String) -> Double? {
        let units: [Substring: Double] = ["ns": 1, "µs": 1e3, "ms": 1e6, "s": 1e9, "/s": 1]
        guard let match = label.firstMatch(of: /^([0-9.]+) ?(ns|µs|ms|s|\/s)$/), let number = Double(match.output.1),
            let unit = units[match.output.2]
        else { return nil }
        return number * unit
    }

    /// Whether `value` is 1, 2 or 5 × 10^k.
    static func round(_ value: Double) -> Bool {
        guard value > 0 else { return false }
        let mantissa = value / pow(10, floor(log10(value)))
        return [1, 2, 5, 10].contains { abs(mantissa - $0) < 1e-6 }
    }

    /// The charts' ticks at every look: values 1, 2 or 5 × 10^k, or steps of one; the value axes' tops
    /// never lower from one look to the next; the time axis marked along its span (3 marks or more).
    static func expectRoundTicks(_ texts: [String: [[String]]]) {
        for (selector, looks) in texts where selector.contains("svg") {
            var top = 0.0
            for labels in looks {
                let values = labels.compactMap(Self.tickValue)
                #expect(values.count == labels.count, "\(selector): \(labels)")
                // Round: each value (a log axis), or the one step between them (a linear axis).
                let steps = zip(values.dropFirst(), values).map { $0 - $1 }
                let linear = steps.first.map { step in Self.round(step) && steps.allSatisfy { abs($0 - step) < step * 1e-6 } }
                #expect(linear == true || values.allSatisfy { $0 == 0 || Self.round($0) }, "\(selector): \(labels)")
                if selector.hasSuffix(".value") {
                    #expect((values.max() ?? 0) >= top, "\(selector): the scale shrank to \(labels) from a top of \(top)")
                    top = max(top, values.max() ?? 0)
                }
            }
            if selector.hasSuffix(".time") {
                #expect((looks.last ?? []).count >= 3, "\(selector): the time axis is marked only at \(looks.last ?? [])")
            }
        }
    }

    @Test("--live is refused with --counted, and a port out of range, with exit 1")
    func refusals() async throws {
        let counted = try await CLITests.lab(["run", "Scenarios/quickstart.json", "--live", "--counted"])
        #expect(counted.status == 1 && counted.errors.contains("--live"), "\(counted.errors)")
        let port = try await CLITests.lab(["run", "Scenarios/quickstart.json", "--live", "--live-port", "70000"])
        #expect(port.status == 1 && port.errors.contains("--live-port takes 0 to 65535"), "\(port.errors)")
    }
}
