import Foundation
import LabCore
import LabReport
import LabRunner
import Synchronization

#if canImport(Glibc)
import Glibc
import LabScenario
#endif

/// Shows a run's progress on stderr (`ProgressLine`): a bar with rate, ETA, errors and the
/// last second's exchange p50 and p99 on a terminal, a plain line every few seconds otherwise.
final class ProgressDisplay: Sendable {
    let progress: RunProgress
    let scenario: Scenario
    let isTerminal = isatty(STDERR_FILENO) == 1
    private let line = Mutex(ProgressLine())

    init(progress: RunProgress, scenario: Scenario) {
        self.progress = progress
        self.scenario = scenario
    }

    /// Notes the count and redraws until cancelled: every tenth of a second on a terminal,
    /// every 2 s otherwise (no wake-ups in between: a run's CPU time is the clients' own).
    func watch() async {
        let interval: UInt64 = self.isTerminal ? 100_000_000 : 2_000_000_000
        while !Task.isCancelled {
            do { try await Task.sleep(nanoseconds: interval) } catch { return }
            self.note()
            self.draw(final: false)
        }
    }

    /// Draws the final state and ends the line.
    func finish() {
        if self.isTerminal {
            self.note()
            self.draw(final: true)
            FileHandleOutput.standardError("\n")
        }
    }

    private func note() {
        let done = self.progress.completed
        let now = Stopwatch.now()
        self.line.withLock { $0.note(done: done, at: now) }
    }

    private func draw(final: Bool) {
        let figures = ProgressLine.Figures(
            name: self.scenario.name,
            done: self.progress.completed,
            planned: self.progress.planned,
            errors: self.progress.errors,
            elapsed: Double(Stopwatch.now() &- self.progress.startedAt) / 1e9,
            live: self.progress.lastInterval,
            final: final
        )
        let text = MarkdownReporter.printable(
            self.line.withLock { $0.text(figures, columns: self.isTerminal ? Self.terminalColumns() : nil) }
        )
        if self.isTerminal {
            // A line longer than the terminal wraps, and the next redraw (back to the start of
            // the line) then leaves the wrapped part behind: the text is fitted to the width.
            FileHandleOutput.standardError("\r\u{1B}[K" + text)
        } else {
            FileHandleOutput.standardError(text + "\n")
        }
    }

    /// The terminal's width in columns (80 if it does not say).
    static func terminalColumns() -> Int {
        var size = winsize()
        guard ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }
}
