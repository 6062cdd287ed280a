import Foundation
import LabCore
import LabReport
import LabTestSupport
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
        let rogue = try await RogueServer.start()
        defer { rogue.terminate() }
        let (run, out) = try await rogue.run(in: folder)
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

        // The attacker's listener, after a fetch of our own that it answers in turn.
        let fetched = try await rogue.fetched()
        #expect(fetched.isEmpty, "the page fetched from the attacker: \(fetched)")
    }
}
