import Foundation
import LabCore
import LabReport
import LabTesting
import Testing

/// A `lab run` against a rogue cx/1 server (Tests/Interop/rogue_server.py) whose error codes
/// and messages and serverStats strings are markup that runs or fetches in a browser and
/// controls that act on a terminal: report.html, opened in headless Chromium, runs none of it
/// and fetches nothing, and the run's terminal output carries no control (issue 51, item 2;
/// docs/hardening.md, "Text from a peer"). In the browser tier, with the other Chromium tests.
@Suite(.tier(.browser)) struct HostileServerTests {
    /// The scalars that act on a terminal: ESC, BEL, the C1 CSI and OSC, a bidi override.
    static let controls: Set<UInt32> = [0x1B, 0x07, 0x9B, 0x9D, 0x202E, 0x2066]

    @Test(
        "A rogue server's error and serverStats strings: no script runs and nothing is fetched in report.html, no control reaches the terminal",
        .timeLimit(.minutes(3))
    )
    func rogueServerIsText() async throws {
        let folder = try CLITests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let script = RepositoryPaths.root.appendingPathComponent("Tests/Interop/rogue_server.py")
        let rogue = try BackgroundProcess(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script.path])
        defer { rogue.terminate() }
        let cx = try await rogue.waitForLine(timeout: .seconds(30)) { $0.hasPrefix("cx on ") }.dropFirst("cx on ".count)
        let http = try await rogue.waitForLine(timeout: .seconds(30)) { $0.hasPrefix("http on ") }
            .dropFirst("http on ".count)

        let scenario = folder.appendingPathComponent("hostile-server.json")
        try Data(
            """
            {
              "name": "hostile-server",
              "server": { "transport": "tcp", "address": "\(cx)" },
              "clients": { "count": 1 },
              "load": { "model": "closed", "iterations": 4, "warmupIterations": 0 },
              "flows": [ { "flow": "cx", "suite": "x25519" } ]
            }
            """.utf8
        ).write(to: scenario)
        let out = folder.appendingPathComponent("out")
        let run = try await CLITests.lab(["run", scenario.path, "--out", out.path])
        let terminal = run.output + run.errors
        // The server's text reached the run (else nothing below is tested) ...
        #expect(terminal.contains("pwned-title"), "\(terminal)")
        // ... and its controls are shown, not obeyed.
        let seen = terminal.unicodeScalars.filter { Self.controls.contains($0.value) }.map {
            String($0.value, radix: 16)
        }
        #expect(seen.isEmpty, "controls on the terminal: \(seen)")
        #expect(terminal.contains("\\u{001B}]0;pwned-title\\u{0007}"), "\(terminal)")

        let page = out.appendingPathComponent("report.html")
        let html = try String(contentsOf: page, encoding: .utf8)
        // The server's error message and its serverStats strings are on the page, as text.
        let details = try #require(html.range(of: "<section id=\"details\""), "\(html.prefix(400))").upperBound
        #expect(html[details...].contains("&lt;img src=x onerror="), "the error message in the Details section")
        #expect(html[details...].contains("&lt;svg onload="), "the server's host in the Details section")
        #expect(html.contains("document.title='pwned'"), "the provider's version is in the page")
        for markdown in ["report.md"] {
            let text = try String(contentsOf: out.appendingPathComponent(markdown), encoding: .utf8)
            #expect(!text.contains("<img") && !text.contains("<script") && !text.contains("<svg"), "\(markdown)")
            let left = text.unicodeScalars.filter { Self.controls.contains($0.value) }.count
            #expect(left == 0, "\(markdown): \(left) controls")
        }

        let shown = try await HTMLReportTests.browser([
            "report", page.absoluteString, "--screenshots", folder.appendingPathComponent("shots").path,
            "--widths", "1280",
        ])
        #expect((shown["requests"] as? [Any])?.isEmpty == true, "requests: \(shown["requests"] ?? "")")
        #expect((shown["exceptions"] as? [Any])?.isEmpty == true, "\(shown["exceptions"] ?? "")")
        let title = (shown["page"] as? [String: Any])?["title"] as? String
        #expect(title == "hostile-server — crypto-lab", "a script set the title: \(title ?? "none")")

        // The attacker's listener: fetch /canary and await its line; it answers one request at
        // a time, so any fetch the page made was printed before it.
        let canary = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["python3", "-c", "import urllib.request; urllib.request.urlopen('http://\(http)/canary').read()"],
            in: RepositoryPaths.root
        )
        try #require(canary.status == 0, "\(canary.errors)")
        try await rogue.waitForOutput(containing: "fetched /canary", timeout: .seconds(30))
        let fetched = rogue.output.split(separator: "\n").filter { $0.hasPrefix("fetched ") && $0 != "fetched /canary" }
        #expect(fetched.isEmpty, "the page fetched from the attacker: \(fetched)")
    }
}
