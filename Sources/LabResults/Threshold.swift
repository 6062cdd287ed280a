import Histogram
import LabCore
public import LabScenario

extension Threshold {
    /// Whether `group` is one this threshold looks at.
    public func matches(_ group: GroupResult) -> Bool {
        if let flow = self.flow, group.key.flow != flow, group.flowKind != flow { return false }
        for (key, value) in self.filters {
            let actual: String
            switch key {
            case "suite": actual = group.key.suite
            case "provider": actual = group.key.provider
            default: actual = group.key.transport
            }
            if actual != value { return false }
        }
        return true
    }

    /// Tests the threshold against a run.
    public func evaluate(_ result: RunResult) -> ThresholdOutcome {
        let groups = result.groups.filter { !$0.isServerSide && self.matches($0) }
        switch self.measure {
        case .errors(let percent):
            let errors = Double(groups.reduce(0) { $0 + $1.errorCount })
            if percent {
                let iterations = Double(groups.reduce(0) { $0 + $1.iterations })
                guard iterations > 0 else { return self.outcome("no data", nil, "fraction") }
                let share = errors / iterations
                return self.outcome("\(TimeSpan.trimmed(share * 100))%", share, "fraction")
            }
            return self.outcome("\(Int(errors))", errors, "count")
        case .step(let step, let stat):
            return self.stepOutcome(step, stat, groups, window: result.measuredNanoseconds)
        case .outcome(let name):
            // Flows count an outcome only when it happens: a matching group without it counted 0.
            guard !groups.isEmpty else { return self.outcome("no data", nil, "count") }
            let count = groups.reduce(UInt64(0)) { $0 &+ ($1.outcomes[name] ?? 0) }
            return self.outcome("\(count)", Double(count), "count")
        case .bytes(let step, let direction):
            return self.bytesOutcome(step, direction, groups)
        case .efficiency:
            guard let bound = PrimitiveBound(result) else { return self.outcome("no data", nil, "fraction") }
            return self.outcome(
                "\(TimeSpan.trimmed((bound.efficiency * 1000).rounded() / 10))%",
                bound.efficiency,
                "fraction"
            )
        }
    }

    /// A step threshold's outcome: `stat` of `step` over `groups`' merged histograms.
    private func stepOutcome(_ step: Step, _ stat: Stat, _ groups: [GroupResult], window: UInt64) -> ThresholdOutcome {
        var merged: Histogram<UInt64>? = nil
        for group in groups {
            guard let histogram = group.steps[step] else { continue }
            if merged == nil { merged = histogram } else { merged!.add(histogram) }
        }
        let unit = stat.isTime ? "ns" : stat == .ops ? "1/s" : "count"
        guard let histogram = merged, histogram.totalCount > 0 else { return self.outcome("no data", nil, unit) }
        let statistics = StepStatistics(histogram, window: window)
        let value: Double
        switch stat {
        case .count: value = Double(statistics.count)
        case .min: value = statistics.min
        case .p50: value = statistics.p50
        case .p90: value = statistics.p90
        case .p95: value = statistics.p95 ?? 0
        case .p99: value = statistics.p99
        case .p999: value = statistics.p999
        case .max: value = statistics.max
        case .mean: value = statistics.mean
        case .stddev: value = statistics.stddev
        case .ops: value = statistics.opsPerSecond
        }
        let observed =
            stat.isTime
            ? TimeSpan.format(nanoseconds: value) : stat == .ops ? "\(TimeSpan.trimmed(value))/s" : "\(Int(value))"
        return self.outcome(observed, value, unit)
    }

    /// A bytes threshold's outcome: `direction`'s bytes per measured iteration, or per round
    /// trip of `step` (set-up's included), over `groups`.
    private func bytesOutcome(_ step: Step?, _ direction: Direction, _ groups: [GroupResult]) -> ThresholdOutcome {
        var traffic = StepTraffic()
        var per: UInt64 = 0
        for group in groups {
            if let step {
                for source in [group.traffic, group.setupTraffic] {
                    if let counted = source[step] { traffic.add(counted) }
                }
            } else {
                for counted in group.traffic.values { traffic.add(counted) }
                per &+= group.iterations
            }
        }
        if step != nil { per = traffic.roundTrips }
        guard per > 0, traffic.total > 0 else { return self.outcome("no data", nil, "bytes") }
        let value = Double(direction.bytes(traffic)) / Double(per)
        return self.outcome(ByteSize.format(value), value, "bytes")
    }

    /// The outcome of a measured `value` (nil: nothing was measured, which fails), in `unit`.
    private func outcome(_ observed: String, _ value: Double?, _ unit: String) -> ThresholdOutcome {
        ThresholdOutcome(
            metric: self.metric,
            condition: self.condition,
            observed: observed,
            passed: value.map { self.comparison.holds($0, self.bound) } ?? false,
            value: value,
            bound: self.bound,
            unit: unit
        )
    }
}
