import Histogram
import LabCore
import LabResults
import LabTestSupport
import Testing

/// `report.stepUsage`: each step's CPU time and preemption, read only when a run asks for
/// them (docs/reports.md, "Beside the time"), since the reads are system calls inside the
/// exchange's time.
@Suite(.tier(.unit)) struct StepUsageTests {
    static func scenario(stepUsage: Bool?) -> String {
        let report = stepUsage.map { #", "report": { "stepUsage": \#($0) }"# } ?? ""
        return #"""
            { "name": "usage", "clients": { "count": 2 }, "load": { "iterations": 20 },
              "flows": [ { "flow": "cx", "suite": "x25519" } ]\#(report) }
            """#
    }

    /// Samples whose preemption is known, and samples with a CPU time, over every step of the run.
    static func watched(_ result: RunResult) -> (known: UInt64, cpu: UInt64, steps: Int) {
        let details = result.groups.flatMap { $0.details.values }
        let known = details.reduce(0) { $0 + $1.preempted + $1.unpreempted.totalCount }
        let cpu = details.reduce(0) { $0 + ($1.cpu?.totalCount ?? 0) }
        return (known, cpu, details.count)
    }

    @Test("By default a run reads no step's usage: no preempted shares, no CPU times")
    func offByDefault() async throws {
        for setting in [nil, false] {
            let result = try await TestPlan.run(Self.scenario(stepUsage: setting))
            #expect(result.completedIterations == 40)
            let seen = Self.watched(result)
            #expect(seen.known == 0 && seen.cpu == 0, "stepUsage \(String(describing: setting)): \(seen)")
        }
    }

    @Test("With report.stepUsage every step's samples say whether they were preempted, and the timed ones their CPU time")
    func onRequest() async throws {
        let result = try await TestPlan.run(Self.scenario(stepUsage: true))
        let group = try #require(result.groups.first)
        // Each step of each of the 40 exchanges: preempted or among the unpreempted.
        for step in [Step.sign, .verify, .encode, .decode, .exchange] {
            let detail = try #require(group.details[step], "\(step)")
            #expect(detail.preempted + detail.unpreempted.totalCount == 40, "\(step)")
        }
        #expect(group.details[.sign]?.cpu?.totalCount == 40)
        #expect(group.details[.exchange]?.cpu == nil, "the exchange awaits across threads: no CPU time")
    }
}

/// `exchange.work` and `exchange.waiting` (`Step.work`, `Step.waiting`): each exchange's
/// steps' CPU time, and the rest of its time, with `report.stepUsage`.
struct ExchangeWorkChecks {
    /// Each exchange's work is the CPU time of its steps: the means add up exactly (each
    /// sample of `work` is the sum of that exchange's steps' CPU times), and work and waiting
    /// add up to the exchange.
    static func check(_ result: RunResult, exchanges: UInt64) throws {
        let group = try #require(result.groups.first)
        let work = try #require(group.steps[.work], "no exchange.work")
        let waiting = try #require(group.steps[.waiting], "no exchange.waiting")
        let exchange = try #require(group.steps[.exchange])
        #expect(work.totalCount == exchanges && waiting.totalCount == exchanges)
        let steps = group.details.compactMap { step, detail -> Double? in
            guard let cpu = detail.cpu, cpu.totalCount > 0, step != .work else { return nil }
            return cpu.specialisedMean * Double(cpu.totalCount) / Double(exchanges)
        }.reduce(0, +)
        let mean = work.specialisedMean
        #expect(abs(mean - steps) / mean < 0.01, "work \(mean) ns against its steps' CPU \(steps) ns")
        let whole = exchange.specialisedMean
        #expect(abs(mean + waiting.specialisedMean - whole) / whole < 0.01, "work + waiting against \(whole) ns")
        #expect(mean < whole)
    }
}

extension StepUsageTests {
    @Test("With report.stepUsage each exchange's work is its steps' CPU time, and work and waiting make the exchange")
    func exchangeWorkInProcess() async throws {
        let result = try await TestPlan.run(Self.scenario(stepUsage: true))
        try ExchangeWorkChecks.check(result, exchanges: 40)
        let off = try await TestPlan.run(Self.scenario(stepUsage: false))
        #expect(off.groups.first?.steps[.work] == nil && off.groups.first?.steps[.waiting] == nil)
    }
}

/// Over TCP the server runs its steps on its own event loop: a server the lab starts reads
/// their usage too, so that the work holds both sides'.
@Suite(.tier(.integration)) struct ServerStepUsageTests {
    @Test("Over tcp with report.stepUsage the server's steps carry their CPU time, and the work holds them")
    func serverStepsHaveCPU() async throws {
        let result = try await TestPlan.run(
            #"""
            { "name": "usage-tcp", "server": { "transport": "tcp", "listen": "127.0.0.1:0" },
              "clients": { "count": 2 }, "load": { "iterations": 20 },
              "flows": [ { "flow": "cx", "suite": "x25519" } ], "report": { "stepUsage": true } }
            """#
        )
        let group = try #require(result.groups.first)
        // cx/1's server signs, wraps and encrypts; the client verifies.
        for step in [Step.sign, .wrap, .encrypt, .verify] {
            #expect(group.details[step]?.cpu?.totalCount == 40, "\(step): \(String(describing: group.details[step]?.cpu?.totalCount))")
        }
        try ExchangeWorkChecks.check(result, exchanges: 40)
    }
}

/// The step and interval histograms are made before the clock starts (`StepHistograms`), for
/// every step a group records in a measured iteration; what no sample reached is not part of
/// the run.
@Suite(.tier(.unit)) struct HistogramsMadeAheadTests {
    @Test("Made ahead, left out unless used: no step, CPU time or interval without a sample in the results")
    func nothingEmptyInTheResults() async throws {
        // Open model (an exchange.service step), step usage (CPU-time histograms), 200 ms
        // intervals: the interval after the last sample is made and never reached.
        let result = try await TestPlan.run(
            #"""
            { "name": "ahead", "clients": { "count": 2 },
              "load": { "model": "open", "rate": 200, "duration": "1 s" },
              "flows": [ { "flow": "cx", "suite": "x25519" }, { "flow": "cx", "suite": "pq" } ],
              "report": { "stepUsage": true, "interval": "200 ms" } }
            """#
        )
        #expect(result.completedIterations > 0)
        for group in result.groups where group.key.flow != "server" {
            for (step, histogram) in group.steps {
                #expect(histogram.totalCount > 0, "\(group.key) \(step): an empty histogram")
                #expect(group.details[step]?.cpu.map { $0.totalCount > 0 } ?? true, "\(group.key) \(step): an empty CPU time")
            }
            // Made ahead for the measured iterations, recorded only while setting up: a
            // client's key, once per client.
            #expect(group.steps[Step("keygen.client")]?.totalCount ?? 2 == 2, "\(group.key)")
            #expect(group.steps[Step("exchange.service")] != nil && group.details[.exchange]?.cpu == nil)
        }
        let intervals = try #require(result.intervals)
        var slices = 0
        for (key, series) in intervals.groups {
            for (index, slice) in series {
                slices += 1
                #expect(slice.errors > 0 || slice.completed > 0 || !slice.steps.isEmpty, "\(key) interval \(index) is empty")
                for (step, sparse) in slice.steps {
                    #expect(!sparse.counts.isEmpty, "\(key) interval \(index) \(step): an empty histogram")
                }
            }
        }
        #expect(slices >= 2 * 5, "two groups, five 200 ms intervals or more: \(slices)")
    }
}
