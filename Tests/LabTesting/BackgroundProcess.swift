import Foundation
import Synchronization

/// A long-running child process whose output a test can wait for (test support).
///
/// `ChildProcess.run` waits for the program to exit; this starts it and returns, collects
/// stdout and stderr as they arrive, and lets the test await a piece of text.
public final class BackgroundProcess: Sendable {
    private struct Waiter {
        var text: String
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        /// Stdout and stderr together, in arrival order.
        var output = ""
        var exitStatus: Int32?
        var waiters: [UUID: Waiter] = [:]
    }

    /// Why a wait failed: the process exited, the time ran out or the task was cancelled.
    public struct Failure: Error, CustomStringConvertible {
        /// What happened, with the output so far.
        public var description: String
    }

    /// The program's path, for messages.
    public let executable: String
    private let state = Mutex(State())
    private let process: Mutex<Process>

    /// Starts `executable` with `arguments`.
    public init(_ executable: URL, _ arguments: [String]) throws {
        self.executable = executable.path
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        self.process = Mutex(process)
        for pipe in [output, errors] {
            pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
                let data = handle.availableData
                if data.isEmpty {
                    handle.readabilityHandler = nil
                } else {
                    self?.received(String(decoding: data, as: UTF8.self))
                }
            }
        }
        process.terminationHandler = { [weak self] process in
            self?.exited(process.terminationStatus)
        }
        try process.run()
    }

    deinit {
        self.terminate()
    }

    /// Everything the process printed so far (stdout and stderr).
    public var output: String {
        self.state.withLock { $0.output }
    }

    /// Waits until the output contains `text`; throws if the process exits first or after `timeout`.
    public func waitForOutput(containing text: String, timeout: Duration) async throws {
        let id = UUID()
        let timer = Task {
            try await Task.sleep(for: timeout)
            self.fail(id, "did not print '\(text)' within \(timeout)")
        }
        defer { timer.cancel() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let ready: Bool? = self.state.withLock { state in
                    if state.output.contains(text) { return true }
                    if state.exitStatus != nil { return false }
                    state.waiters[id] = Waiter(text: text, continuation: continuation)
                    return nil
                }
                switch ready {
                case true?: continuation.resume()
                case false?: continuation.resume(throwing: self.error("exited before printing '\(text)'"))
                case nil: break
                }
            }
        } onCancel: {
            self.fail(id, "was cancelled while waiting for '\(text)'")
        }
    }

    /// Kills the process (if it still runs) and waits for it to exit.
    ///
    /// SIGKILL, because a child inherits the signal mask of the thread that spawned it and
    /// dispatch's worker threads (where tests run) block SIGTERM and SIGINT.
    public func terminate() {
        self.process.withLock { process in
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
    }

    private func received(_ text: String) {
        let ready = self.state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.output += text
            let ready = state.waiters.filter { state.output.contains($0.value.text) }
            for id in ready.keys { state.waiters[id] = nil }
            return ready.values.map(\.continuation)
        }
        for continuation in ready { continuation.resume() }
    }

    private func exited(_ status: Int32) {
        let waiters = self.state.withLock { state in
            state.exitStatus = status
            defer { state.waiters = [:] }
            return state.waiters.values.map(\.continuation)
        }
        for continuation in waiters {
            continuation.resume(throwing: self.error("exited with status \(status) before printing what was awaited"))
        }
    }

    private func fail(_ id: UUID, _ what: String) {
        let waiter = self.state.withLock { state in state.waiters.removeValue(forKey: id) }
        waiter?.continuation.resume(throwing: self.error(what))
    }

    private func error(_ what: String) -> Failure {
        Failure(description: "\(self.executable) \(what); its output: \(self.output)")
    }
}
