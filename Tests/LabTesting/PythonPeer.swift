import Foundation
import LabCore

/// Drives `Tests/Interop/cx_peer.py`, an independent cx/1 implementation written from
/// PROTOCOL.md alone with Python's `cryptography` and `plistlib`.
public struct PythonPeer: Sendable {
    /// What one invocation printed and how it ended.
    public struct Result: Sendable {
        public var status: Int32
        public var output: String
        public var errors: String
        /// The JSON line printed on stdout, parsed.
        public var json: [String: String] {
            guard let line = self.output.split(separator: "\n").last,
                let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            else { return [:] }
            return object.mapValues { "\($0)" }
        }
    }

    /// A fresh folder for one test's files.
    public let folder: URL

    /// Makes the folder.
    public init() throws {
        self.folder = FileManager.default.temporaryDirectory.appendingPathComponent("cx-peer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: self.folder, withIntermediateDirectories: true)
    }

    /// A path inside the folder.
    public func path(_ name: String) -> String { self.folder.appendingPathComponent(name).path }

    /// Writes bytes to a file in the folder.
    public func write(_ name: String, _ bytes: [UInt8]) throws {
        try Data(bytes).write(to: self.folder.appendingPathComponent(name))
    }

    /// Reads a file of the folder.
    public func read(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: self.folder.appendingPathComponent(name)))
    }

    /// Runs `python3 cx_peer.py <arguments>`; a missing interpreter or library is an error, not a skip.
    public func run(_ arguments: [String]) throws -> Result {
        let outcome = try ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["python3", RepositoryPaths.interop.appendingPathComponent("cx_peer.py").path] + arguments
        )
        let result = Result(status: outcome.status, output: outcome.output, errors: outcome.errors)
        if result.errors.contains("ModuleNotFoundError") || result.errors.contains("No such file") {
            throw LabError(
                .unsupported,
                "The Python peer cannot run (run scripts/setup.sh to install python3 and cryptography): \(result.errors)"
            )
        }
        return result
    }

    /// Removes the folder.
    public func cleanUp() {
        try? FileManager.default.removeItem(at: self.folder)
    }
}
