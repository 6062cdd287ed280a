import Foundation
import Synchronization

/// The tool's lines: `two-host: …` on stdout, warnings and errors on stderr.
///
/// A write that fails because the reader went away (`two-host | head`, a test runner that
/// crashed) ends the run as SIGPIPE would, but with the teardown: the tool ignores SIGPIPE
/// (`TwoHost.main`), so the failed write is seen here instead of killing the process before
/// it removes its namespaces.
final class Output: Sendable {
    private let readerGone: @Sendable () -> Void

    /// Output that calls `readerGone` when a write finds no reader.
    init(readerGone: @escaping @Sendable () -> Void) {
        self.readerGone = readerGone
    }

    /// A line of progress.
    func say(_ text: String) {
        self.write("two-host: \(text)\n", to: STDOUT_FILENO)
    }

    /// A line of progress for stderr: where the logs are, an interruption.
    func note(_ text: String) {
        self.write("two-host: \(text)\n", to: STDERR_FILENO)
    }

    /// A warning: the run goes on.
    func warn(_ text: String) {
        self.write("two-host: warning: \(text)\n", to: STDERR_FILENO)
    }

    /// Why the run failed.
    func error(_ text: String) {
        self.write("two-host: error: \(text)\n", to: STDERR_FILENO)
    }

    /// Another program's output, each line indented by four spaces.
    func indented(_ text: String) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let body = lines.last == "" ? lines.dropLast() : lines[...]
        guard !body.isEmpty else { return }
        self.write(body.map { "    " + $0 }.joined(separator: "\n") + "\n", to: STDOUT_FILENO)
    }

    private func write(_ text: String, to descriptor: Int32) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                if errno == EPIPE { self.readerGone() }
                return
            }
            bytes = bytes.dropFirst(written)
        }
    }
}

/// Why the run failed, in a sentence for the user (the last lines of a log may follow).
struct Failure: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = description
    }

    /// A failure of `what`, with the last 30 lines of each non-empty log.
    init(_ what: String, logs: [(name: String, text: String)]) {
        var text = what
        for (name, log) in logs where !log.isEmpty {
            let lines = log.split(separator: "\n", omittingEmptySubsequences: false)
            text += "\n---- \(name) (last 30 lines) ----\n" + lines.suffix(30).joined(separator: "\n")
        }
        self.description = text
    }
}

/// Seconds since `start`, with one decimal, as the tool's lines show durations.
func seconds(since start: ContinuousClock.Instant) -> String {
    let elapsed = ContinuousClock.now - start
    let value = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    return String(format: "%.1f", value)
}
