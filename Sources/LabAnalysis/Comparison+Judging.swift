import Foundation
import Histogram
import LabCharts
import LabCore
import LabResults

/// The verdicts: a candidate's common factor, each cell's moves, and ops/s over intervals.
extension Comparison {
    /// Why candidate `index`'s ops/s is not judged, or nil when it is: it needs the time
    /// basis, the same CPU to spare, and `rateIntervals` whole intervals in each run.
    func rateNote(candidate index: Int) -> String? {
        guard self.judgesThroughput else {
            return "ops/s not judged: a group's ops/s in a run is its share of the run's rate, which follows the flows' weights"
        }
        if let changed = self.machineChanged[index] {
            return "ops/s not judged: \(changed)"
        }
        if self.conditions.exchangeUnjudged { return "ops/s not judged: the queue set it" }
        let runs = [self.baseline.result, self.candidates[index].result]
        guard runs.allSatisfy({ ($0.intervals.map { Self.wholeIntervals($0).count } ?? 0) >= Self.rateIntervals }) else {
            return "ops/s not judged: a run's rate is one figure, not a sample; it needs \(Self.rateIntervals) or more whole intervals in each run (`report.interval`, a longer run)"
        }
        return nil
    }

    /// The interval indices that lie wholly inside the measured window: all but the first and last.
    static func wholeIntervals(_ intervals: RunIntervals) -> [Int] {
        guard let indices = intervals.indices, indices.count > 2 else { return [] }
        return Array((indices.lowerBound + 1)..<indices.upperBound)
    }

    /// Per interval, exchanges/s of `key` in the baseline and in candidate `index`: the
    /// samples the ops/s verdict tests.
    func rateSamples(_ key: GroupKey, candidate index: Int) -> ([Double], [Double])? {
        func rates(_ result: RunResult, _ key: GroupKey) -> [Double]? {
            guard let intervals = result.intervals, let slices = intervals.groups[key] else { return nil }
            let seconds = Double(intervals.width) / 1e9
            return Self.wholeIntervals(intervals).map { Double(slices[$0]?.iterations ?? 0) / seconds }
        }
        let otherKey = self.crossTransport[index][key] ?? key
        guard let first = rates(self.baseline.result, key), let second = rates(self.candidates[index].result, otherKey),
            first.count >= Self.rateIntervals, second.count >= Self.rateIntervals
        else { return nil }
        return (first, second)
    }

    /// Whether `ratio` lies beyond `floor`, which is symmetric on a log scale: ×1.1 slower and
    /// ×1/1.1 faster are alike.
    static func beyond(_ ratio: Double, _ floor: Double) -> Bool {
        ratio > 0 && abs(log(ratio)) > log1p(floor)
    }

    /// The median p50 ratio of candidate `index` and whether its steps moved together.
    func commonMove(candidate index: Int) -> Common {
        // With three groups or more that have their work (`Step.work`): the groups, each as
        // one figure. A slower provider moves its groups' work and leaves the others', so
        // steps each within a wide floor of a median between the two would read as moving
        // together (the quickstart with openssl 15% slower: a factor ×1.06 that left the
        // slowed x25519 work ×1.12 against it, 2026-11-28).
        let works = self.rows.filter { $0.step == .work }.compactMap { row -> Double? in
            let cell = row.cells[index]
            guard cell.verdict == .noChange, let ratio = cell.p50Ratio, ratio > 0 else { return nil }
            return ratio
        }
        if works.count >= 3 {
            let median = Statistics.median(works) ?? 1
            let together = works.filter { !Self.beyond($0 / median, self.threshold / 2) }.count
            let applies = Double(together) >= self.commonShare * Double(works.count)
            var verdict = Verdict.noChange
            if applies, Self.beyond(median, self.threshold) { verdict = median > 1 ? .slower : .faster }
            return Common(
                median: median,
                together: together,
                steps: works.count,
                applies: applies,
                verdict: verdict,
                unit: "groups' work"
            )
        }
        let judged = self.rows.compactMap { row -> (ratio: Double, floor: Double)? in
            let cell = row.cells[index]
            guard cell.verdict == .noChange, let ratio = cell.p50Ratio, ratio > 0 else { return nil }
            return (ratio, cell.floor)
        }
        guard !judged.isEmpty else {
            return Common(median: 1, together: 0, steps: 0, applies: false, verdict: .noChange)
        }
        let median = Statistics.median(judged.map(\.ratio)) ?? 1
        let together = judged.filter { !Self.beyond($0.ratio / median, $0.floor) }.count
        // Two steps that agree are no evidence about the run as a whole.
        let applies = judged.count >= 3 && Double(together) >= self.commonShare * Double(judged.count)
        var verdict = Verdict.noChange
        if applies, Self.beyond(median, self.threshold) { verdict = median > 1 ? .slower : .faster }
        return Common(median: median, together: together, steps: judged.count, applies: applies, verdict: verdict)
    }

    /// The verdict on one step, against the candidate's common factor. A row compared on CPU
    /// time is judged on its p50 alone: the tail of a thread's CPU time holds what the
    /// machine did to it (caches refilled after a switch), not only the code.
    func judge(
        _ cell: inout Cell,
        _ row: Row,
        _ base: Histogram<UInt64>,
        _ other: Histogram<UInt64>,
        factor: Double,
        rates: ([Double], [Double])?
    ) {
        guard let ratio = cell.p50Ratio else { return }
        cell.relativeRatio = ratio / factor
        guard cell.verdict != .tooFewSamples else { return }
        let test = RankSumTest(base, other, scale: 1 / factor)
        cell.pValue = test.twoSidedPValue
        cell.superiority = test.superiority
        if test.twoSidedPValue < self.alpha, Self.beyond(ratio / factor, cell.floor) {
            // The shift of the whole distribution (Hodges–Lehmann) must be beyond the floor
            // too, the same way: the p50 of a step of several modes (ML-DSA signing's
            // rejection loop) jumps between them: pq's work p50 ×1.107 between two interleaved
            // sides of one build whose shift as a whole stayed inside the floor (2026-11-28).
            let shift = (RatioEstimate.of(base, other)?.ratio ?? ratio) / factor
            cell.shiftRatio = shift
            if Self.beyond(shift, cell.floor), (shift > 1) == (ratio / factor > 1) {
                cell.moves.append(Move(figure: .p50, ratio: ratio / factor, slower: ratio / factor > 1))
            }
        }
        if row.measure == .time, let p99 = cell.p99Ratio, min(base.totalCount, other.totalCount) >= self.tailSamples {
            let tail = test.tailPValue()
            // The tail test and the ratio must agree on the direction.
            if tail.pValue < self.alpha, tail.secondHasMore == (p99 / factor > 1),
                Self.beyond(p99 / factor, 2 * cell.floor)
            {
                cell.moves.append(Move(figure: .p99, ratio: p99 / factor, slower: p99 / factor > 1))
            }
        }
        if row.step == .exchange, let (first, second) = rates, let ops = cell.opsRatio {
            // Per-interval rates, tested as samples: a run's one rate is not.
            let test = RankSumTest(first, second)
            if test.twoSidedPValue < self.alpha, Self.beyond(ops, self.threshold) {
                cell.moves.append(Move(figure: .ops, ratio: ops, slower: ops < 1))
            }
        }
        if cell.moves.contains(where: \.slower) {
            cell.verdict = .slower
        } else if !cell.moves.isEmpty {
            cell.verdict = .faster
        }
    }
}
