import LabCore

/// The text of a run's progress line: iterations done, the rate over the last second, the
/// ETA from that rate, errors, and the last interval's exchange p50 and p99, fitted to a
/// terminal's width.
///
/// Once an interval has closed, the rate is the one its "last 1 s" figures give (its
/// exchanges, done and failed, over its width), so the line never shows two rates or none
/// beside one. Before that it is taken over a sliding `window` (2 s), from the first
/// completed iteration on: an average since the start would count set-up (keys,
/// connections) as time without iterations, read a fraction of the real rate for most of
/// a short run, and make the first ETAs minutes long for a run of seconds.
public struct ProgressLine: Sendable {
    /// How far back the rate looks, in nanoseconds.
    public var window: UInt64
    /// Recent moments and the iterations done by each, oldest first, all with iterations done.
    private var marks: [(at: UInt64, done: Int)] = []
    /// The first moment seen with iterations done: the final rate counts from it.
    private var first: (at: UInt64, done: Int)?
    /// The last moment seen.
    private var last: (at: UInt64, done: Int)?

    /// A line whose rate looks back `window` nanoseconds.
    public init(window: UInt64 = 2_000_000_000) {
        self.window = window
    }

    /// Notes that `done` iterations had completed at `now` (monotonic nanoseconds).
    public mutating func note(done: Int, at now: UInt64) {
        self.last = (now, done)
        guard done > 0 else { return }
        if self.first == nil { self.first = (now, done) }
        self.marks.append((now, done))
        while self.marks.count > 2, now &- self.marks[1].at >= self.window { self.marks.removeFirst() }
    }

    /// Iterations per second over the window; nil until iterations have been completing for
    /// a tenth of the window.
    public var rate: Double? {
        guard let oldest = self.marks.first, let newest = self.marks.last, newest.at > oldest.at,
            newest.at - oldest.at >= self.window / 10
        else { return nil }
        return Double(newest.done - oldest.done) / (Double(newest.at - oldest.at) / 1e9)
    }

    /// Iterations per second from the first completed iteration to the last moment noted:
    /// the run's rate, for the final line.
    public var overallRate: Double? {
        guard let first = self.first, let last = self.last, last.at > first.at else { return nil }
        return Double(last.done - first.done) / (Double(last.at - first.at) / 1e9)
    }

    /// What the line shows beside the rate.
    public struct Figures: Sendable {
        /// The scenario's name.
        public var name: String
        /// Iterations done and planned (0: a run by time, with no share and no ETA).
        public var done: Int
        public var planned: Int
        /// Iterations failed.
        public var errors: Int
        /// Seconds since the run started.
        public var elapsed: Double
        /// The last closed interval's exchanges, if any.
        public var live: RunProgress.IntervalFigures?
        /// Whether the run is over.
        public var final: Bool

        /// Figures.
        public init(
            name: String,
            done: Int,
            planned: Int,
            errors: Int,
            elapsed: Double,
            live: RunProgress.IntervalFigures?,
            final: Bool
        ) {
            self.name = name
            self.done = done
            self.planned = planned
            self.errors = errors
            self.elapsed = elapsed
            self.live = live
            self.final = final
        }
    }

    /// The line for a terminal `columns` wide (at most `columns` − 1 characters), or, with
    /// `columns` nil, the plain line written when stderr is not a terminal. On a terminal
    /// the bar shrinks first, then goes, then the interval's figures go: the p50 and p99 stay
    /// in 80 columns.
    public func text(_ figures: Figures, columns: Int?) -> String {
        let rate = figures.final ? self.overallRate : (figures.live.flatMap(Self.rate) ?? self.rate)
        let rateText = rate.map { "\(Int($0.rounded()))/s" } ?? "–/s"
        var counts =
            figures.planned > 0
            ? "\(figures.done)/\(figures.planned) \(Int(min(1, Double(figures.done) / Double(figures.planned)) * 100))%"
            : "\(figures.done)"
        counts += " \(rateText) errors \(figures.errors) "
        if figures.final {
            counts += "done in \(Self.clock(figures.elapsed))"
        } else if figures.planned > 0 {
            counts += rate.map { $0 > 0 ? "ETA \(Self.clock(Double(max(figures.planned - figures.done, 0)) / $0))" : "ETA --" }
                ?? "ETA --"
        } else {
            counts += Self.clock(figures.elapsed)
        }
        guard let columns else {
            return "progress: \(figures.name) \(counts)" + (figures.live.map { "  " + Self.describe($0) } ?? "")
        }
        let live = figures.live.flatMap(Self.percentiles).map { "  " + $0 } ?? ""
        let room = columns - 1 - figures.name.count - 1
        let fraction = figures.planned > 0 ? min(1, Double(figures.done) / Double(figures.planned)) : 0
        func bar(_ width: Int) -> String {
            let filled = Int(fraction * Double(width))
            return String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled) + " "
        }
        let line: String
        if room - counts.count - live.count >= 9 {
            line = bar(min(30, room - counts.count - live.count - 1)) + counts + live
        } else if room >= counts.count + live.count {
            line = counts + live
        } else {
            line = room - counts.count >= 9 ? bar(min(30, room - counts.count - 1)) + counts : counts
        }
        return String("\(figures.name) \(line)".prefix(max(columns - 1, 20)))
    }

    /// The iterations per second an interval's figures give: its exchanges, done and failed,
    /// over its width; nil for an interval without width.
    static func rate(_ interval: RunProgress.IntervalFigures) -> Double? {
        guard interval.width > 0 else { return nil }
        return Double(interval.exchanges + interval.errors) / (Double(interval.width) / 1e9)
    }

    /// `p50 1.21 ms p99 3.40 ms`: the last interval's exchange percentiles, nil without exchanges.
    static func percentiles(_ interval: RunProgress.IntervalFigures) -> String? {
        guard let p50 = interval.p50, let p99 = interval.p99 else { return nil }
        return "p50 \(TimeSpan.format(nanoseconds: Double(p50))) p99 \(TimeSpan.format(nanoseconds: Double(p99)))"
    }

    /// The last closed interval's exchanges: `last 1 s: p50 1.21 ms  p99 3.40 ms  812/s  0 failed`.
    public static func describe(_ interval: RunProgress.IntervalFigures) -> String {
        let width = TimeSpan(nanoseconds: interval.width)
        guard let p50 = interval.p50, let p99 = interval.p99 else {
            return "last \(width): no exchange done, \(interval.errors) failed"
        }
        let rate = Double(interval.exchanges) / width.seconds
        return "last \(width): p50 \(TimeSpan.format(nanoseconds: Double(p50)))  "
            + "p99 \(TimeSpan.format(nanoseconds: Double(p99)))  \(Int(rate.rounded()))/s  \(interval.errors) failed"
    }

    /// `4s`, `2m03s`.
    public static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        return whole >= 60 ? "\(whole / 60)m\(whole % 60 < 10 ? "0" : "")\(whole % 60)s" : "\(whole)s"
    }
}
