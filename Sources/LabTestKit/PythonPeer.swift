public import Foundation
import LabCore
public import LabProcesses

/// Drives `Tests/Interop/cx_peer.py`, an independent cx/1 implementation written from
/// docs/protocol.md alone with Python's `cryptography` and `plistlib`.
public struct PythonPeer: Sendable {
    /// What one invocation printed and how it ended.
    public struct Result: Sendable {
        public var status: Int32
        public var output: String
        public var errors: String
        /// The JSON line printed on stdout, parsed.
        public var json: [String: String] {
            self.object.mapValues { "\($0)" }
        }

        /// The JSON line printed on stdout, parsed, with its values' types.
        public var object: [String: Any] {
            guard let line = self.output.split(separator: "\n").last,
                let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            else { return [:] }
            return object
        }

        /// A boolean of the JSON line (`"ok"`, `"closed"`), nil if absent or not a boolean.
        public func bool(_ key: String) -> Bool? { self.object[key] as? Bool }

        /// An integer of the JSON line (`"exchanges"`), nil if absent or not an integer.
        public func int(_ key: String) -> Int? { self.object[key] as? Int }

        /// A string of the JSON line (`"stage"`, `"code"`), nil if absent or not a string.
        public func string(_ key: String) -> String? { self.object[key] as? String }
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
    public func run(_ arguments: [String]) async throws -> Result {
        try await Self.run(arguments)
    }

    /// Runs `python3 cx_peer.py <arguments>` (no folder needed); a missing interpreter or
    /// library is an error, not a skip.
    public static func run(_ arguments: [String]) async throws -> Result {
        let outcome = try await ChildProcess.run(Self.interpreter, Self.script + arguments)
        let result = Result(status: outcome.status, output: outcome.output, errors: outcome.errors)
        try Self.checkRunnable(result.errors)
        return result
    }

    /// `/usr/bin/env`, which finds `python3`.
    static let interpreter = URL(fileURLWithPath: "/usr/bin/env")
    /// `python3 …/cx_peer.py`.
    static let script = ["python3", RepositoryPaths.interop.appendingPathComponent("cx_peer.py").path]

    static func checkRunnable(_ errors: String) throws {
        if errors.contains("ModuleNotFoundError") || errors.contains("No such file") {
            throw LabError(
                .unsupported,
                "The Python peer cannot run (run scripts/setup.sh to install python3 and cryptography): \(errors)"
            )
        }
    }

    // MARK: - Over sockets

    /// `cx_peer.py exchange --connect ADDRESS <arguments>`: one connection, `--count`
    /// verified exchanges; waits on its own thread, off the concurrency pool.
    public static func exchange(with address: ListeningAddress, _ arguments: [String]) async throws -> Result {
        try await Self.run(["exchange", "--connect", "\(address)", "--timeout", "15"] + arguments)
    }

    /// Starts `cx_peer.py serve <arguments>` on a free loopback port and waits for its
    /// `listening on` line. Stop it with `stop(timeout:)`; it then prints
    /// `stopped: C connections, E exchanges, K error answers`.
    public static func serve(
        _ arguments: [String],
        timeout: Duration = .seconds(20)
    ) async throws -> (server: ServerProcess, address: ListeningAddress) {
        let server = try ServerProcess(
            Self.interpreter,
            Self.script + ["serve", "--host", "127.0.0.1", "--port", "0"] + arguments
        )
        do {
            return (server, try await ListeningAddress.of(server, timeout: timeout))
        } catch {
            try Self.checkRunnable(server.errors)
            throw error
        }
    }

    /// Removes the folder.
    public func cleanUp() {
        try? FileManager.default.removeItem(at: self.folder)
    }
}
