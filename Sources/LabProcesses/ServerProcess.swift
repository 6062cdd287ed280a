public import Foundation
import Synchronization

/// A server (or any long-running program) run as a child process: waits for whole lines on
/// its stdout, stops it with a signal it can handle, and keeps everything it printed. The
/// tests and the two-host tool (`Sources/TwoHost`) start their processes with it.
///
/// Unlike the tests' `BackgroundProcess` (which kills with SIGKILL), `stop()` sends SIGTERM and waits
/// for the process to exit *and* for its stdout to reach end of file, so a line printed on
/// the way out (`lab serve`'s `stopped: …`) is never lost to a race with the exit.
public final class ServerProcess: Sendable {
    /// Why a wait failed: the process exited, the time ran out or the task was cancelled.
    public struct Failure: Error, CustomStringConvertible {
        /// What happened, with everything the process printed.
        public var description: String
    }

    private enum Outcome: Sendable {
        case ready(String)
        case waiting
        case failed(String)
    }

    private struct Waiter {
        var check: @Sendable (State) -> Outcome
        var continuation: CheckedContinuation<String, any Error>
    }

    private struct State: Sendable {
        var output = Data()
        var errors = Data()
        var outputClosed = false
        var errorsClosed = false
        var exitStatus: Int32?
        var waiters: [UUID: Waiter] = [:]
        /// Waits that timed out or were cancelled before they were registered.
        var expired: [UUID: String] = [:]

        var lines: [String] {
            String(decoding: self.output, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
                .dropLast().map(String.init)
        }
        var ended: Bool { self.outputClosed && self.errorsClosed && self.exitStatus != nil }
    }

    /// The program's path, for messages.
    public let executable: String
    /// The child's process id.
    public let pid: Int32
    private let state = Mutex(State())
    private let process: Mutex<Process>

    /// Starts `executable` with `arguments`; stdin is /dev/null.
    public init(_ executable: URL, _ arguments: [String]) throws {
        self.executable = ([executable.lastPathComponent] + arguments).joined(separator: " ")
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        // Set before run(), so that an exit can never go unnoticed; it reaches `self` once set up.
        let exits = Mutex<(@Sendable (Int32) -> Void)?>(nil)
        process.terminationHandler = { process in
            let status = process.terminationStatus
            exits.withLock { $0 }?(status)
        }
        try Self.startWithSignalsUnblocked(process)
        self.pid = process.processIdentifier
        self.process = Mutex(process)
        exits.withLock { handler in
            handler = { [weak self] status in self?.update { $0.exitStatus = status } }
        }
        if !process.isRunning { self.update { $0.exitStatus = process.terminationStatus } }
        // One thread per pipe reads until end of file: a blocking read is what detects EOF
        // reliably, and these threads are not the concurrency pool's.
        for (pipe, isOutput) in [(output, true), (errors, false)] {
            let handle = pipe.fileHandleForReading
            Thread { [weak self] in
                while true {
                    let data = handle.availableData
                    if data.isEmpty { break }
                    self?.update { state in
                        if isOutput { state.output.append(data) } else { state.errors.append(data) }
                    }
                }
                self?.update { state in
                    if isOutput { state.outputClosed = true } else { state.errorsClosed = true }
                }
            }.start()
        }
    }

    deinit {
        self.terminate()
    }

    /// Everything printed on stdout so far.
    public var output: String { self.state.withLock { String(decoding: $0.output, as: UTF8.self) } }
    /// Everything printed on stderr so far.
    public var errors: String { self.state.withLock { String(decoding: $0.errors, as: UTF8.self) } }
    /// The complete lines printed on stdout so far.
    public var lines: [String] { self.state.withLock { $0.lines } }

    /// Waits for a complete stdout line that starts with `prefix` and returns it; throws if
    /// stdout closes first or after `timeout`.
    public func line(startingWith prefix: String, timeout: Duration) async throws -> String {
        try await self.line(described: "a line starting with '\(prefix)'", timeout: timeout) { $0.hasPrefix(prefix) }
    }

    /// Waits for a complete stdout line for which `matches` holds and returns it; throws if
    /// stdout closes first or after `timeout`.
    public func line(
        described description: String,
        timeout: Duration,
        where matches: @escaping @Sendable (String) -> Bool
    ) async throws -> String {
        try await self.wait(for: description, timeout: timeout) { state in
            if let line = state.lines.first(where: matches) { return .ready(line) }
            return state.outputClosed ? .failed("closed stdout before printing it") : .waiting
        }
    }

    /// Waits until stdout holds at least `count` complete lines and returns the first
    /// `count`; throws if stdout closes first or after `timeout`.
    public func lines(count: Int, timeout: Duration) async throws -> [String] {
        let joined = try await self.wait(for: "\(count) lines on stdout", timeout: timeout) { state in
            if state.lines.count >= count { return .ready(state.lines.prefix(count).joined(separator: "\n")) }
            return state.outputClosed ? .failed("closed stdout after \(state.lines.count) lines") : .waiting
        }
        return joined.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// Waits until stderr (the server's log) contains `text`; throws if stderr closes first or
    /// after `timeout`.
    public func errors(containing text: String, timeout: Duration) async throws {
        _ = try await self.wait(for: "'\(text)' on stderr", timeout: timeout) { state in
            if String(decoding: state.errors, as: UTF8.self).contains(text) { return .ready(text) }
            return state.errorsClosed ? .failed("closed stderr before printing it") : .waiting
        }
    }

    /// Waits until stderr as a whole satisfies `holds` (e.g. holds N lines of some kind);
    /// throws if stderr closes first or after `timeout`.
    public func errors(
        described description: String,
        timeout: Duration,
        where holds: @escaping @Sendable (String) -> Bool
    ) async throws {
        _ = try await self.wait(for: description + " on stderr", timeout: timeout) { state in
            if holds(String(decoding: state.errors, as: UTF8.self)) { return .ready("") }
            return state.errorsClosed ? .failed("closed stderr first") : .waiting
        }
    }

    /// Waits for a complete stderr line for which `matches` holds (e.g. a progress line) and
    /// returns it; throws if stderr closes first or after `timeout`.
    public func errorLine(
        described description: String,
        timeout: Duration,
        where matches: @escaping @Sendable (String) -> Bool
    ) async throws -> String {
        try await self.wait(for: description + " on stderr", timeout: timeout) { state in
            // Complete lines only: the piece after the last newline is still being written.
            let lines = String(decoding: state.errors, as: UTF8.self)
                .split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            if let line = lines.first(where: { matches(String($0)) }) { return .ready(String(line)) }
            return state.errorsClosed ? .failed("closed stderr before printing it") : .waiting
        }
    }

    /// Sends `signal` (SIGTERM by default), waits until the process has exited and closed its
    /// output, and returns its exit status. Throws after `timeout` (and then kills the process).
    @discardableResult
    public func stop(signal: Int32 = SIGTERM, timeout: Duration) async throws -> Int32 {
        _ = kill(self.pid, signal)
        return try await self.exitStatus(within: timeout, awaiting: "exit after signal \(signal)")
    }

    /// Waits until the process has exited on its own and closed its output, and returns its
    /// exit status. Throws after `timeout`, or when the waiting task is cancelled (and then
    /// kills the process).
    public func exitStatus(within timeout: Duration, awaiting what: String = "its exit") async throws -> Int32 {
        do {
            let status = try await self.wait(for: what, timeout: timeout) { state in
                state.ended ? .ready("\(state.exitStatus!)") : .waiting
            }
            return Int32(status)!
        } catch {
            self.terminate()
            throw error
        }
    }

    /// Whether the process has exited.
    public var hasExited: Bool { self.state.withLock { $0.exitStatus != nil } }

    /// Starts `process` from a thread of its own whose SIGHUP, SIGINT and SIGTERM are
    /// unblocked. A child inherits the signal mask of the thread that starts it, and
    /// libdispatch's worker threads, where async code runs, block those three: a shell script
    /// started from one would never run its `trap` for them. Started this way, the child gets
    /// them as it would from a shell.
    static func startWithSignalsUnblocked(_ process: Process) throws {
        let outcome = Mutex<Result<Void, any Error>?>(nil)
        let started = DispatchSemaphore(value: 0)
        Thread {
            var signals = sigset_t()
            sigemptyset(&signals)
            for signal in [SIGHUP, SIGINT, SIGTERM] { sigaddset(&signals, signal) }
            pthread_sigmask(SIG_UNBLOCK, &signals, nil)
            let result = Result { try process.run() }
            outcome.withLock { $0 = result }
            started.signal()
        }.start()
        started.wait()
        try outcome.withLock { $0! }.get()
    }

    /// Kills the process with SIGKILL (if it still runs) and waits for it to exit.
    public func terminate() {
        self.process.withLock { process in
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
    }

    // MARK: - Waiting

    private func update(_ change: (inout State) -> Void) {
        let resumes = self.state.withLock { state -> [(CheckedContinuation<String, any Error>, Outcome)] in
            change(&state)
            var resumes: [(CheckedContinuation<String, any Error>, Outcome)] = []
            for (id, waiter) in state.waiters {
                let outcome = waiter.check(state)
                if case .waiting = outcome { continue }
                state.waiters[id] = nil
                resumes.append((waiter.continuation, outcome))
            }
            return resumes
        }
        for (continuation, outcome) in resumes { self.resume(continuation, outcome, what: "") }
    }

    private func wait(
        for what: String,
        timeout: Duration,
        _ check: @escaping @Sendable (State) -> Outcome
    ) async throws -> String {
        let id = UUID()
        let timer = Task { [weak self] in
            try await Task.sleep(for: timeout)
            self?.expire(id, "did not show \(what) within \(timeout)")
        }
        defer { timer.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
                let outcome = self.state.withLock { state -> Outcome in
                    if let reason = state.expired.removeValue(forKey: id) { return .failed(reason) }
                    let outcome = check(state)
                    if case .waiting = outcome { state.waiters[id] = Waiter(check: check, continuation: continuation) }
                    return outcome
                }
                if case .waiting = outcome { return }
                self.resume(continuation, outcome, what: what)
            }
        } onCancel: {
            self.expire(id, "was cancelled while waiting for \(what)")
        }
    }

    private func expire(_ id: UUID, _ reason: String) {
        let waiter = self.state.withLock { state -> Waiter? in
            guard let waiter = state.waiters.removeValue(forKey: id) else {
                state.expired[id] = reason
                return nil
            }
            return waiter
        }
        if let waiter { self.resume(waiter.continuation, .failed(reason), what: "") }
    }

    private func resume(_ continuation: CheckedContinuation<String, any Error>, _ outcome: Outcome, what: String) {
        switch outcome {
        case .ready(let value): continuation.resume(returning: value)
        case .failed(let reason):
            continuation.resume(throwing: self.failure(reason + (what.isEmpty ? "" : " (\(what))")))
        case .waiting: break
        }
    }

    private func failure(_ what: String) -> Failure {
        let (output, errors) = self.state.withLock {
            (String(decoding: $0.output, as: UTF8.self), String(decoding: $0.errors, as: UTF8.self))
        }
        return Failure(description: "`\(self.executable)` \(what); stdout: \(output) stderr: \(errors)")
    }
}

/// A server's `listening on HOST:PORT` line, parsed.
public struct ListeningAddress: Sendable, CustomStringConvertible {
    /// The host.
    public var host: String
    /// The port.
    public var port: Int

    /// Parses `listening on HOST:PORT` (the first line of `lab serve` and `cx_peer.py serve`).
    public init?(line: String) {
        guard line.hasPrefix("listening on "),
            let colon = line.lastIndex(of: ":"),
            let port = Int(line[line.index(after: colon)...].prefix { $0.isNumber }), port > 0
        else { return nil }
        self.host = String(line[line.index(line.startIndex, offsetBy: "listening on ".count)..<colon])
        self.port = port
    }

    /// `HOST:PORT`.
    public var description: String { "\(self.host):\(self.port)" }

    /// Waits for `server`'s `listening on` line.
    public static func of(_ server: ServerProcess, timeout: Duration) async throws -> ListeningAddress {
        let line = try await server.line(startingWith: "listening on ", timeout: timeout)
        guard let address = ListeningAddress(line: line) else {
            throw ServerProcess.Failure(
                description: "`\(server.executable)` printed '\(line)', not `listening on HOST:PORT`"
            )
        }
        return address
    }
}

/// Runs blocking work (waiting for a child process) on its own thread, not on the
/// concurrency pool, which has as few threads as the machine has cores.
public func runBlocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
