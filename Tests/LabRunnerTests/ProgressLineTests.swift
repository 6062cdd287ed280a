import LabCore
import LabRunner
import LabTestSupport
import Testing

/// The progress line: a rate over the last seconds, an ETA from it, the last interval's p50
/// and p99 in an 80-column terminal.
@Suite(.tier(.unit)) struct ProgressLineTests {
    static let second: UInt64 = 1_000_000_000

    static func figures(
        done: Int,
        planned: Int = 3_300,
        elapsed: Double,
        final: Bool = false,
        live: RunProgress.IntervalFigures? = Self.interval(exchanges: 1_090)
    ) -> ProgressLine.Figures {
        ProgressLine.Figures(
            name: "quickstart",
            done: done,
            planned: planned,
            errors: 0,
            elapsed: elapsed,
            live: live,
            final: final
        )
    }

    /// A closed second with `exchanges` done and `errors` failed.
    static func interval(exchanges: UInt64, errors: UInt64 = 0) -> RunProgress.IntervalFigures {
        RunProgress.IntervalFigures(
            index: 3,
            width: Self.second,
            exchanges: exchanges,
            errors: errors,
            p50: 812_000,
            p99: 3_400_000
        )
    }

    @Test("After 2 s of set-up, 1,090 iterations a second read 1090/s at once, and the ETA follows from it")
    func rateOverTheWindow() {
        var line = ProgressLine()
        // Set-up: nothing done for 2 s.
        for tenth in 0...20 { line.note(done: 0, at: UInt64(tenth) * Self.second / 10) }
        #expect(line.rate == nil)
        #expect(line.text(Self.figures(done: 0, elapsed: 2, live: nil), columns: nil).contains("–/s errors 0 ETA --"))
        // Then 109 per tenth of a second.
        var done = 0
        for tenth in 21...25 {
            done += 109
            line.note(done: done, at: UInt64(tenth) * Self.second / 10)
        }
        #expect(line.rate.map { abs($0 - 1_090) < 1 } == true, "\(String(describing: line.rate))")
        let text = line.text(Self.figures(done: done, elapsed: 2.5), columns: nil)
        // (3,300 − 545) ÷ 1,090 = 2.5 s.
        #expect(text.contains("545/3300 16% 1090/s errors 0 ETA 3s"), "\(text)")
        // The rate forgets what is older than its window: a slowdown shows within 2 s.
        for tenth in 26...50 {
            done += 50
            line.note(done: done, at: UInt64(tenth) * Self.second / 10)
        }
        #expect(line.rate.map { abs($0 - 500) < 1 } == true, "\(String(describing: line.rate))")
        // The final line gives the rate from the first iteration to the end.
        let final = line.text(Self.figures(done: done, elapsed: 5, final: true), columns: nil)
        #expect(final.contains("done in 5s"), "\(final)")
    }

    @Test("In 80 columns the line keeps the last second's p50 and p99, and never wraps")
    func fitsEightyColumns() {
        var line = ProgressLine()
        line.note(done: 100, at: Self.second)
        line.note(done: 1_190, at: 2 * Self.second)
        let text = line.text(Self.figures(done: 1_190, elapsed: 3), columns: 80)
        #expect(text.count <= 79, "\(text.count): \(text)")
        #expect(text.contains("p50 812 µs p99 3.4 ms"), "\(text)")
        #expect(text.contains("█") || text.contains("░"), "a bar, at 80 columns: \(text)")
        // Narrower, the bar goes before the figures do.
        let narrow = line.text(Self.figures(done: 1_190, elapsed: 3), columns: 72)
        #expect(narrow.count <= 71 && narrow.contains("p99 3.4 ms"), "\(narrow)")
        #expect(!narrow.contains("░"), "\(narrow)")
    }

    @Test("Once a second has closed, the rate and ETA are the ones its \"last 1 s\" gives, even from one note")
    func rateFromTheLastSecond() {
        // Off a terminal the display notes every 2 s: at 4 s iterations have run for about a
        // second, one mark, too few for the window's rate; the closed second says 832/s.
        var line = ProgressLine()
        line.note(done: 0, at: 2 * Self.second)
        line.note(done: 1_000, at: 4 * Self.second)
        #expect(line.rate == nil)
        let second = Self.interval(exchanges: 832)
        let plain = line.text(Self.figures(done: 1_000, elapsed: 4, live: second), columns: nil)
        // (3,300 − 1,000) ÷ 832 = 2.8 s.
        #expect(plain.contains("1000/3300 30% 832/s errors 0 ETA 3s"), "\(plain)")
        #expect(plain.contains("last 1 s: p50 812 µs  p99 3.4 ms  832/s  0 failed"), "\(plain)")
        // With failures the rate counts every iteration ended, done or failed (the ETA's count).
        let mixed = Self.interval(exchanges: 600, errors: 232)
        let failing = line.text(Self.figures(done: 1_000, elapsed: 4, live: mixed), columns: nil)
        #expect(failing.contains(" 832/s errors 0 ETA 3s"), "\(failing)")
        // On a terminal, where the window's rate exists, the closed second's rate still wins.
        line.note(done: 1_500, at: 4 * Self.second + Self.second / 2)
        #expect(line.rate.map { abs($0 - 1_000) < 1 } == true, "\(String(describing: line.rate))")
        let terminal = line.text(Self.figures(done: 1_500, elapsed: 4.5, live: second), columns: 120)
        #expect(terminal.contains(" 832/s ") && terminal.contains("ETA 2s"), "\(terminal)")
    }
}
