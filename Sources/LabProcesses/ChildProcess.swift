public import Foundation
import Synchronization

/// Runs a program to completion and collects its exit status and output.
public enum ChildProcess {
    /// What a finished process left behind.
    public struct Outcome: Sendable {
        /// The exit status.
        public var status: Int32
        /// Standard output.
        public var output: String
        /// Standard error.
        public var errors: String
    }

    /// Runs `executable` with `arguments` in `directory` and waits for it on a thread of its
    /// own: the concurrency pool has only as many threads as cores, and a caller blocking one
    /// of them stalls every other task's sockets and timeouts. `environment` is added to
    /// this process's.
    public static func run(
        _ executable: URL,
        _ arguments: [String],
        in directory: URL? = nil,
        environment: [String: String] = [:]
    ) async throws -> Outcome {
        try await runBlocking { try Self.runWaiting(executable, arguments, in: directory, environment: environment) }
    }

    /// Runs `executable` and blocks the calling thread until it ends (for synchronous callers).
    public static func runWaiting(
        _ executable: URL,
        _ arguments: [String],
        in directory: URL? = nil,
        environment: [String: String] = [:]
    ) throws -> Outcome {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, given in given }
        }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // Read stderr on another thread so that neither pipe can fill up and stall the child.
        let errorData = Mutex<Data>(Data())
        let errorsRead = DispatchSemaphore(value: 0)
        Thread {
            errorData.withLock { $0 = errors.fileHandleForReading.readDataToEndOfFile() }
            errorsRead.signal()
        }.start()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        errorsRead.wait()
        return Outcome(
            status: process.terminationStatus,
            output: String(decoding: outputData, as: UTF8.self),
            errors: String(decoding: errorData.withLock { $0 }, as: UTF8.self)
        )
    }
}
