public import Foundation
import Synchronization

/// A long-running child process whose output lines a test can wait for (test support).
///
/// `ChildProcess.run` waits for the program to exit; this starts it and returns, collects the
/// lines of stdout and stderr as they arrive, and lets the test await a line.
public final class BackgroundProcess: Sendable {
    /// Why a wait failed: the process exited, the time ran out or the task was cancelled.
    public struct Failure: Error, CustomStringConvertible {
        /// What happened, with the output so far.
        public var description: String
    }

    private struct Waiter {
        var matches: @Sendable (String) -> Bool
        var continuation: CheckedContinuation<String, any Error>
    }

    private struct State {
        /// The complete lines of stdout and stderr, in arrival order.
        var lines: [String] = []
        /// What came after the last newline, per stream.
        var partial = ["", ""]
        var exitStatus: Int32?
        var waiters: [UUID: Waiter] = [:]
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
        let pipes = [Pipe(), Pipe()]
        process.standardOutput = pipes[0]
        process.standardError = pipes[1]
        process.standardInput = FileHandle.nullDevice
        self.process = Mutex(process)
        process.terminationHandler = { [weak self] process in
            self?.exited(process.terminationStatus)
        }
        try process.run()
        // A thread per pipe reads until end of file. Not `readabilityHandler`: on Linux,
        // FileHandle closes its descriptor while that dispatch source may still be registered,
        // which can crash libdispatch's event loop once the descriptor number is reused.
        for (stream, pipe) in pipes.enumerated() {
            let handle = pipe.fileHandleForReading
            Thread { [weak self] in
                while true {
                    let data = handle.availableData
                    self?.received(String(decoding: data, as: UTF8.self), on: stream, ended: data.isEmpty)
                    if data.isEmpty { return }
                }
            }.start()
        }
    }

    deinit {
        self.terminate()
    }

    /// Everything the process printed so far, one line per line.
    public var output: String {
        self.state.withLock { ($0.lines + $0.partial.filter { !$0.isEmpty }).joined(separator: "\n") }
    }

    /// Waits for the first line (printed before or after the call) that `matches`, and returns
    /// it; throws if the process exits first or after `timeout`.
    @discardableResult
    public func waitForLine(
        timeout: Duration,
        where matches: @escaping @Sendable (String) -> Bool
    ) async throws -> String {
        let id = UUID()
        let timer = Task {
            try await Task.sleep(for: timeout)
            self.fail(id, "printed no line that was awaited within \(timeout)")
        }
        defer { timer.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
                let found: Result<String, Failure>? = self.state.withLock { state in
                    if let line = state.lines.first(where: matches) { return .success(line) }
                    if let status = state.exitStatus {
                        return .failure(self.error("exited with status \(status) first", state: state))
                    }
                    state.waiters[id] = Waiter(matches: matches, continuation: continuation)
                    return nil
                }
                if let found { continuation.resume(with: found) }
            }
        } onCancel: {
            self.fail(id, "was cancelled while a line was awaited")
        }
    }

    /// Waits for a line containing `text`.
    public func waitForOutput(containing text: String, timeout: Duration) async throws {
        do {
            try await self.waitForLine(timeout: timeout) { $0.contains(text) }
        } catch let failure as Failure {
            throw Failure(description: "\(failure.description) (awaited: '\(text)')")
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

    private func received(_ text: String, on stream: Int, ended: Bool) {
        let ready = self.state.withLock { state -> [(CheckedContinuation<String, any Error>, String)] in
            var pieces = (state.partial[stream] + text).split(separator: "\n", omittingEmptySubsequences: false)
            state.partial[stream] = ended ? "" : String(pieces.removeLast())
            let lines = pieces.map(String.init).filter { !$0.isEmpty }
            state.lines += lines
            var ready: [(CheckedContinuation<String, any Error>, String)] = []
            for (id, waiter) in state.waiters {
                if let line = lines.first(where: waiter.matches) {
                    state.waiters[id] = nil
                    ready.append((waiter.continuation, line))
                }
            }
            return ready
        }
        for (continuation, line) in ready { continuation.resume(returning: line) }
    }

    private func exited(_ status: Int32) {
        let failed = self.state.withLock { state in
            state.exitStatus = status
            defer { state.waiters = [:] }
            let error = self.error("exited with status \(status) before printing an awaited line", state: state)
            return state.waiters.values.map { ($0.continuation, error) }
        }
        for (continuation, error) in failed { continuation.resume(throwing: error) }
    }

    private func fail(_ id: UUID, _ what: String) {
        let failed = self.state.withLock { state in
            state.waiters.removeValue(forKey: id).map { ($0.continuation, self.error(what, state: state)) }
        }
        if let (continuation, error) = failed { continuation.resume(throwing: error) }
    }

    private func error(_ what: String, state: borrowing State) -> Failure {
        let output = (state.lines + state.partial.filter { !$0.isEmpty }).joined(separator: "\n")
        return Failure(description: "\(self.executable) \(what); its output: \(output)")
    }
}
