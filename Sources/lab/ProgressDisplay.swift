import Foundation
import LabCore
import LabRunner

#if canImport(Glibc)
import Glibc
import LabScenario
#endif

/// Shows a run's progress on stderr: a bar with rate and ETA on a terminal, a plain line
/// every few seconds otherwise.
struct ProgressDisplay: Sendable {
    let progress: RunProgress
    let scenario: Scenario
    let isTerminal = isatty(STDERR_FILENO) == 1

    /// Redraws until cancelled.
    func watch() async {
        let interval: UInt64 = self.isTerminal ? 100_000_000 : 2_000_000_000
        while !Task.isCancelled {
            do { try await Task.sleep(nanoseconds: interval) } catch { return }
            self.draw(final: false)
        }
    }

    /// Draws the final state and ends the line.
    func finish() {
        if self.isTerminal {
            self.draw(final: true)
            FileHandleOutput.standardError("\n")
        }
    }

    private func draw(final: Bool) {
        let done = self.progress.completed
        let planned = max(self.progress.planned, 1)
        let elapsed = Double(Stopwatch.now() &- self.progress.startedAt) / 1e9
        let rate = elapsed > 0 ? Double(done) / elapsed : 0
        let fraction = min(1, Double(done) / Double(planned))
        let remaining = rate > 0 ? Double(planned - min(done, planned)) / rate : 0
        // A run by time (a closed load in stages) plans no iterations: no share and no ETA.
        let counts =
            self.progress.planned == 0
            ? "\(done)  \(Int(rate))/s  errors \(self.progress.errors)  "
                + (final ? "done in \(Self.clock(elapsed))" : Self.clock(elapsed))
            : "\(done)/\(planned) \(Int(fraction * 100))%  \(Int(rate))/s  errors \(self.progress.errors)  "
                + (final ? "done in \(Self.clock(elapsed))" : rate > 0 ? "ETA \(Self.clock(remaining))" : "ETA --")
        let live = self.progress.lastInterval.map { "  " + Self.describe($0) } ?? ""
        if self.isTerminal {
            // A line longer than the terminal wraps, and the next redraw (back to the start of
            // the line) then leaves the wrapped part behind: the bar shrinks to make room, then
            // the last interval's figures go, and what still does not fit is cut.
            let columns = Self.terminalColumns()
            let fixed = columns - 1 - self.scenario.name.count - 2
            let stats = fixed - counts.count - live.count >= 8 ? counts + live : counts
            let width = min(30, max(fixed - stats.count, 8))
            let filled = Int(fraction * Double(width))
            let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
            let line = "\(self.scenario.name) \(bar) \(stats)"
            FileHandleOutput.standardError("\r\u{1B}[K" + String(line.prefix(max(columns - 1, 20))))
        } else {
            FileHandleOutput.standardError("progress: \(self.scenario.name) \(counts)\(live)\n")
        }
    }

    /// The last closed interval's exchanges: `last 1 s: p50 1.21 ms  p99 3.40 ms  812/s  0 failed`.
    static func describe(_ interval: RunProgress.IntervalFigures) -> String {
        let width = TimeSpan(nanoseconds: interval.width)
        guard let p50 = interval.p50, let p99 = interval.p99 else {
            return "last \(width): no exchange done, \(interval.errors) failed"
        }
        let rate = Double(interval.exchanges) / width.seconds
        return "last \(width): p50 \(TimeSpan.format(nanoseconds: Double(p50)))  "
            + "p99 \(TimeSpan.format(nanoseconds: Double(p99)))  \(Int(rate.rounded()))/s  \(interval.errors) failed"
    }

    /// The terminal's width in columns (80 if it does not say).
    static func terminalColumns() -> Int {
        var size = winsize()
        guard ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }

    static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        return whole >= 60 ? "\(whole / 60)m\(String(format: "%02d", whole % 60))s" : "\(whole)s"
    }
}
