import Foundation
import LabProcesses
import LabTestKit

/// Headless Chromium, driven by `Tests/Interop/browser.py`: what a page did when a person
/// opened it (its requests, exceptions, console, title), as the script's JSON.
public enum Browser {
    /// Runs the script with `arguments` (e.g. `report <file URL> --screenshots <dir>`) and
    /// returns its JSON object; throws when it fails or prints something else.
    public static func run(_ arguments: [String]) async throws -> [String: Any] {
        let script = RepositoryPaths.root.appendingPathComponent("Tests/Interop/browser.py")
        let outcome = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["python3", script.path] + arguments,
            in: RepositoryPaths.root
        )
        guard outcome.status == 0 else {
            throw BrowserFailure(description: "browser.py failed (exit \(outcome.status)): \(outcome.errors)")
        }
        guard let object = try JSONSerialization.jsonObject(with: Data(outcome.output.utf8)) as? [String: Any] else {
            throw BrowserFailure(description: "browser.py printed no JSON object: \(outcome.output)")
        }
        return object
    }

    /// Why the browser gave no answer.
    public struct BrowserFailure: Error, CustomStringConvertible {
        public let description: String
    }
}
