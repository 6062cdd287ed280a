public import Foundation
public import LabProcesses
import LabTestKit

/// `Tests/Interop/rogue_server.py`: a cx/1 server whose error codes and messages and
/// serverStats strings are markup that runs or fetches in a browser and controls that act on
/// a terminal, beside an HTTP listener that prints each path it is fetched (the attacker's).
/// Issue 51, break 2.
public final class RogueServer: Sendable {
    /// The script's process.
    public let process: BackgroundProcess
    /// The cx/1 server's `host:port`, and the attacker's listener's.
    public let cx: String
    public let http: String

    private init(process: BackgroundProcess, cx: String, http: String) {
        self.process = process
        self.cx = cx
        self.http = http
    }

    /// Starts the script and waits for both of its addresses.
    public static func start() async throws -> RogueServer {
        let script = RepositoryPaths.root.appendingPathComponent("Tests/Interop/rogue_server.py")
        let process = try BackgroundProcess(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script.path])
        do {
            let cx = try await process.waitForLine(timeout: .seconds(30)) { $0.hasPrefix("cx on ") }.dropFirst(6)
            let http = try await process.waitForLine(timeout: .seconds(30)) { $0.hasPrefix("http on ") }.dropFirst(8)
            return RogueServer(process: process, cx: String(cx), http: String(http))
        } catch {
            process.terminate()
            throw error
        }
    }

    /// `lab run` of 4 cx exchanges against it, writing every report into `folder`/out: the
    /// run's outcome and that folder.
    public func run(in folder: URL) async throws -> (outcome: ChildProcess.Outcome, out: URL) {
        let scenario = folder.appendingPathComponent("hostile-server.json")
        try Data(
            """
            {
              "name": "hostile-server",
              "server": { "transport": "tcp", "address": "\(self.cx)" },
              "clients": { "count": 1 },
              "load": { "model": "closed", "iterations": 4, "warmupIterations": 0 },
              "flows": [ { "flow": "cx", "suite": "x25519" } ]
            }
            """.utf8
        ).write(to: scenario)
        let out = folder.appendingPathComponent("out")
        let outcome = try await ChildProcess.run(
            LabProcess.executable,
            ["run", scenario.path, "--out", out.path],
            in: RepositoryPaths.root
        )
        return (outcome, out)
    }

    /// What the attacker's listener was fetched so far, but for a `/canary` this fetches and
    /// awaits first: the listener answers one request at a time, so any fetch a page made
    /// before was printed before it.
    public func fetched() async throws -> [String] {
        let canary = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["python3", "-c", "import urllib.request; urllib.request.urlopen('http://\(self.http)/canary').read()"],
            in: RepositoryPaths.root
        )
        guard canary.status == 0 else { throw RogueServerFailure(description: "the canary fetch failed: \(canary.errors)") }
        try await self.process.waitForOutput(containing: "fetched /canary", timeout: .seconds(30))
        return self.process.output.split(separator: "\n")
            .filter { $0.hasPrefix("fetched ") && $0 != "fetched /canary" }
            .map(String.init)
    }

    /// Stops the script.
    public func terminate() {
        self.process.terminate()
    }

    /// Why the rogue server could not say what it was fetched.
    public struct RogueServerFailure: Error, CustomStringConvertible {
        public let description: String
    }
}
