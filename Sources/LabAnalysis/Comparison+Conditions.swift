import Foundation
import Histogram
import LabCharts
import LabCore
import LabResults

/// What the runs' conditions let a comparison judge: the basis of its verdicts, and whether the machine changed between runs.
extension Comparison {
    /// What the runs' conditions let the verdicts compare (`Conditions`).
    static func conditions(of runs: [Run], oneRun: Bool = false) -> Conditions {
        // Groups of one run share its CPU block: one run to speak of.
        let runs = oneRun ? Array(runs.prefix(1)) : runs
        func subject(_ run: Run) -> String { oneRun ? "the run" : "'\(run.sentenceName)'" }
        var reasons: [String] = []
        for run in runs {
            if let cpu = run.result.cpu, cpu.saturated {
                let share = cpu.demand.map { " (its process wanted \(Self.percent($0)) of \(cpu.cores ?? 0) cores)" } ?? ""
                reasons.append("\(subject(run)) was saturated\(share): its exchanges waited in the machine's queue")
            }
        }
        for run in runs {
            guard let (share, group) = Self.waitingShare(run.result), share > Self.mostlyWaiting else { continue }
            if reasons.contains(where: { $0.hasPrefix(subject(run)) }) { continue }
            reasons.append(
                "\(subject(run))'s exchanges were \(Self.percent(share)) waiting (`\(group)`): their time is the queue's and the network's more than the code's"
            )
        }
        let hasWork = runs.allSatisfy { $0.result.hasWork }
        guard !reasons.isEmpty else { return Conditions(basis: .time, reasons: [], exchangeUnjudged: false, remedy: nil) }
        let queued = runs.contains { $0.result.cpu?.saturated == true }
        guard queued else {
            // Waiting that is not a queue (the network, the peer): the exchange's time is still
            // what a client waits, and judged; its work is judged beside it.
            return Conditions(
                basis: hasWork ? .work : .time,
                reasons: reasons,
                exchangeUnjudged: false,
                remedy: hasWork ? nil : "read the steps' CPU time (`\"report\": { \"stepUsage\": true }`) to judge the work apart from the waiting"
            )
        }
        let carried = runs.compactMap { run -> Double? in
            guard run.result.measuredNanoseconds > 0 else { return nil }
            return Double(run.result.completedIterations) / (Double(run.result.measuredNanoseconds) / 1e9)
        }.min()
        var remedy =
            "for the exchange's own time, run an open model (`\"load\": { \"model\": \"open\" }`)"
            + (carried.map { " at about \(Numbers.fixed(0.7 * $0, 0, grouped: true))/s (70% of the \(Numbers.fixed($0, 0, grouped: true))/s carried)" } ?? "")
            + ", or fewer clients, or shards (`lab run --shard K/N`)"
        if !hasWork {
            remedy = "read the steps' CPU time (`\"report\": { \"stepUsage\": true }`) to judge the work; " + remedy
        }
        return Conditions(basis: hasWork ? .work : .time, reasons: reasons, exchangeUnjudged: true, remedy: remedy)
    }

    /// The largest share of an exchange's mean time a client group of `result` spent waiting,
    /// and that group: 1 − work ÷ exchange where the run read its steps' usage, else
    /// 1 − (its timed steps' mean times per exchange) ÷ exchange, an upper bound on the work.
    static func waitingShare(_ result: RunResult) -> (Double, GroupKey)? {
        var largest: (Double, GroupKey)? = nil
        for group in result.groups where !group.isServerSide {
            guard let exchange = group.steps[.exchange], exchange.totalCount > 0 else { continue }
            let mean = exchange.specialisedMean
            guard mean > 0 else { continue }
            var work = 0.0
            if let measured = group.steps[.work], measured.totalCount > 0 {
                work = measured.specialisedMean
            } else {
                for (step, histogram) in group.steps where !Self.outsideWork(step) {
                    work += histogram.specialisedMean * Double(histogram.totalCount) / Double(exchange.totalCount)
                }
            }
            let share = max(0, 1 - work / mean)
            if share > (largest?.0 ?? -1) { largest = (share, group.key) }
        }
        return largest
    }

    /// Steps that are not a part of an exchange's work: the exchange and what is made of
    /// it, and steps with no thread of their own.
    static func outsideWork(_ step: Step) -> Bool {
        step == .exchange || step.name.hasPrefix(Step.exchange.name + ".") || step == .connect
            || step == .handshake || step == .discover
    }

    /// The sentence that says `candidate` ran with other CPU to spare than `baseline`, with
    /// the figures; nil when alike. Other cores, another machine, or their threads' wait for
    /// a core (`ProcessCPU.waitingNanoseconds`) `waitingChange` apart.
    static func machineChange(_ baseline: Run, _ candidate: Run) -> String? {
        let one = baseline.result.metadata.machine
        let other = candidate.result.metadata.machine
        if one.cores != other.cores || one.cpu != other.cpu {
            return "the machine changed: '\(baseline.sentenceName)' ran on \(one.cores) cores of \(one.cpu), "
                + "'\(candidate.sentenceName)' on \(other.cores) of \(other.cpu)"
        }
        if let speed = Self.calibrationChange(baseline, candidate) { return speed }
        guard let first = Self.waitingFraction(baseline.result), let second = Self.waitingFraction(candidate.result),
            abs(first - second) > Self.waitingChange
        else { return nil }
        return "the machine changed: the threads of '\(baseline.sentenceName)' waited for a core \(Self.percent(first)) "
            + "of the cores' time, those of '\(candidate.sentenceName)' \(Self.percent(second)) (something else ran "
            + "beside one of them), so their times and rates differ by what the machine had to spare"
    }

    /// The sentence that says the machine ran at another speed, by the runs' reference
    /// operations (the calibration unit: RSA-2048 sign × AES-128-CBC 16 KiB, geometric
    /// mean); nil when it did not, or a run has none.
    ///
    /// One sample is a moment of the host, not its speed over a run: within one run the two
    /// samples moved by up to 9%, and between runs 10 s apart the first samples by ×0.89
    /// while every group's work over the runs held within 1% (2026-11-28). So two runs of
    /// one or two samples changed speed when their first samples and their last samples were
    /// each more than `calibrationChange` apart, the same way (not the first against the last
    /// of one run: after a second of both cores busy this host runs the same operations up to
    /// 18% slower than before, in every run alike). Runs merged from parts (four samples or
    /// more each, spread over all the time they ran) changed speed when their medians are
    /// more than `calibrationChange` apart and the rank-sum test tells the samples apart
    /// (one-sided p < `calibrationSignificance`).
    static func calibrationChange(_ baseline: Run, _ candidate: Run) -> String? {
        func units(_ run: Run) -> [Double]? {
            let units = run.result.calibration?.samples.map(\.unit).filter { $0 > 0 } ?? []
            return units.isEmpty ? nil : units
        }
        guard let one = units(baseline), let other = units(candidate) else { return nil }
        func microseconds(_ value: Double) -> String { Numbers.fixed(value / 1_000, 1) + " µs" }
        let limit = log1p(Self.calibrationChange)
        let (a, b) = (baseline.sentenceName, candidate.sentenceName)
        if one.count >= 4, other.count >= 4 {
            let (first, second) = (Statistics.median(one)!, Statistics.median(other)!)
            let ratio = second / first
            guard abs(log(ratio)) > limit,
                RankSumTest(one, other).oneSidedPValue(greater: ratio > 1) < Self.calibrationSignificance
            else { return nil }
            return "the machine ran at another speed: its reference operations (the calibration unit) took"
                + " \(microseconds(first)) in '\(a)' and \(microseconds(second)) in '\(b)' (medians of"
                + " \(one.count) and \(other.count) samples), ×\(Numbers.fixed(ratio, 2))"
        }
        let first = other.first! / one.first!
        let last = other.last! / one.last!
        guard abs(log(first)) > limit, abs(log(last)) > limit, (first > 1) == (last > 1) else { return nil }
        return "the machine ran at another speed: its reference operations (the calibration unit) took"
            + " \(microseconds(one.first!)) in '\(a)' and \(microseconds(other.first!)) in '\(b)' at their start"
            + " (×\(Numbers.fixed(first, 2))), \(microseconds(one.last!)) and \(microseconds(other.last!)) at their"
            + " end (×\(Numbers.fixed(last, 2)))"
    }

    /// The share of its cores' time a run's threads spent waiting for one; nil if unknown.
    static func waitingFraction(_ result: RunResult) -> Double? {
        guard let cpu = result.cpu, let cores = cpu.cores, cores > 0, cpu.wallNanoseconds > 0,
            let waiting = cpu.process.waitingNanoseconds
        else { return nil }
        return Double(waiting) / (Double(cpu.wallNanoseconds) * Double(cores))
    }

    static func percent(_ fraction: Double) -> String {
        let value = fraction * 100
        return (value < 10 ? Numbers.fixed(value, 1) : Numbers.fixed(value, 0)) + "%"
    }
}
