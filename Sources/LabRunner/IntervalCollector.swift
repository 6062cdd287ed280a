import Foundation
import Histogram
import LabCore
import LabResults
import Synchronization

/// Which interval of the run an instant falls in: interval `i` spans `origin + i × width` to
/// the next, on the monotonic clock.
struct IntervalClock: Sendable {
    /// The start of interval 0: the start of the measured part of the run.
    let origin: UInt64
    /// Each interval's width, in nanoseconds (above zero).
    let width: UInt64

    /// The interval `instant` falls in (0 for instants before the origin).
    func index(of instant: UInt64) -> Int {
        instant > self.origin ? Int((instant - self.origin) / self.width) : 0
    }

    /// Where interval `index` starts.
    func start(of index: Int) -> UInt64 { self.origin &+ UInt64(index) &* self.width }
}

/// The run's intervals, taken out of the stripes as each one closes: once per interval a
/// ticker moves every finished interval's histograms out of `StepHistograms` (the samples
/// recorded since go on into fresh ones), adds them to the run's series in their sparse form
/// (an interval's histograms kept whole would grow by about 14 KiB per step per second), and
/// publishes the interval's exchange p50, p99 and failures for the progress line.
///
/// An iteration is recorded in the interval it started in when it ends, so an interval keeps
/// receiving samples after it closed (exchanges a stall held, in the extreme): those are
/// taken at the next tick and added to the interval's histograms, never lost or moved.
final class IntervalCollector: Sendable {
    let clock: IntervalClock
    private let histograms: StepHistograms
    private let keys: [GroupKey]
    private let progress: RunProgress
    private let origin: Date
    private let state = Mutex<State>(State())

    private struct State {
        var series: [Int: [Int: RunIntervals.Slice]] = [:]
        var failure: LabError? = nil
    }

    /// A collector of `histograms`' intervals for the groups `keys`, publishing to `progress`.
    init(clock: IntervalClock, histograms: StepHistograms, keys: [GroupKey], progress: RunProgress) {
        self.clock = clock
        self.histograms = histograms
        self.keys = keys
        self.progress = progress
        // The origin on the wall clock (it may be ahead: the clients' ramp-up).
        let ahead = Double(Int64(bitPattern: clock.origin &- Stopwatch.now())) / 1e9
        self.origin = Date().addingTimeInterval(ahead)
    }

    /// Takes each interval as it closes until cancelled.
    func tick() async {
        var next = self.clock.index(of: Stopwatch.now()) + 1
        self.histograms.makeInterval(next)
        while !Task.isCancelled {
            do { try await Runner.sleep(until: self.clock.start(of: next)) } catch { return }
            // After a late wake-up every interval that has closed since is taken at once.
            next = max(next, self.clock.index(of: Stopwatch.now()))
            self.take(before: next, publishing: next - 1)
            // The next interval's histograms, made here rather than by its first samples.
            self.histograms.makeInterval(next + 1)
            next += 1
        }
    }

    /// Takes every interval before `index`, and publishes interval `published`'s figures.
    private func take(before index: Int, publishing published: Int?) {
        let taken = self.histograms.takeIntervals(before: index)
        if let published { self.publish(published, from: taken) }
        self.state.withLock { state in
            for (key, slot) in taken {
                let slice = RunIntervals.Slice(
                    steps: slot.times.mapValues(SparseHistogram.init),
                    errors: slot.errors,
                    completed: slot.completed
                )
                if state.series[key.group]?[key.index] == nil {
                    state.series[key.group, default: [:]][key.index] = slice
                    continue
                }
                do {
                    try state.series[key.group]![key.index]!.add(slice)
                } catch {
                    state.failure = state.failure ?? (error as? LabError ?? LabError(.invalidScenario, "\(error)"))
                }
            }
        }
    }

    /// Publishes interval `index`'s exchanges, over every group and group by group, to the
    /// progress line and the live view. Once per interval, on the ticker's task: nothing in a
    /// timed step.
    private func publish(_ index: Int, from taken: [StepHistograms.IntervalKey: StepHistograms.IntervalSlot]) {
        var exchange: Histogram<UInt64>? = nil
        var errors: UInt64 = 0
        var perGroup: [Int: (histogram: Histogram<UInt64>?, errors: UInt64)] = [:]
        for (key, slot) in taken where key.index == index {
            errors += slot.errors
            perGroup[key.group, default: (nil, 0)].errors += slot.errors
            guard let histogram = slot.times[.exchange] else { continue }
            if exchange == nil { exchange = histogram } else { exchange!.addWidening(histogram) }
            if perGroup[key.group]?.histogram == nil {
                perGroup[key.group]?.histogram = histogram
            } else {
                perGroup[key.group]?.histogram?.addWidening(histogram)
            }
        }
        let groups = self.keys.indices.map { group -> RunProgress.IntervalFigures.Group in
            let histogram = perGroup[group]?.histogram
            let count = histogram?.totalCount ?? 0
            return RunProgress.IntervalFigures.Group(
                key: self.keys[group].description,
                exchanges: count,
                errors: perGroup[group]?.errors ?? 0,
                p50: count > 0 ? histogram?.valueAtPercentile(50) : nil,
                p99: count > 0 ? histogram?.valueAtPercentile(99) : nil
            )
        }
        let count = exchange?.totalCount ?? 0
        self.progress.publish(
            RunProgress.IntervalFigures(
                index: index,
                width: self.clock.width,
                exchanges: count,
                errors: errors,
                p50: count > 0 ? exchange!.valueAtPercentile(50) : nil,
                p99: count > 0 ? exchange!.valueAtPercentile(99) : nil,
                groups: groups
            )
        )
    }

    /// Takes what is left (every client has ended) and returns the run's intervals; throws
    /// if intervals' histograms did not add up (a layout mismatch: a bug, not a measurement).
    func finish() throws -> RunIntervals {
        self.take(before: .max, publishing: nil)
        return try self.state.withLock { state in
            if let failure = state.failure { throw failure }
            var groups: [GroupKey: [Int: RunIntervals.Slice]] = [:]
            for (group, slices) in state.series where group < self.keys.count { groups[self.keys[group]] = slices }
            return RunIntervals(width: self.clock.width, origin: self.origin, groups: groups)
        }
    }
}
