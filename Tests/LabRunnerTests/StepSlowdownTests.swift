import LabCore
import LabTestSupport
import Testing

import LabRunner

/// How `--test-slowdown` sizes its added work in a timed run, on made-up timings: the step
/// and the added rounds are told to the slowdown as `measure` would tell them, so what is
/// checked is the arithmetic, not this machine's clock.
@Suite(.tier(.unit)) struct StepSlowdownTests {
    /// Drives `samples` measurements of `sign` whose own work takes `own` nanoseconds and
    /// whose added rounds take `roundCost` nanoseconds each; returns the rounds fixed for
    /// the measurements after.
    func fixedRounds(fraction: Double, own: UInt64, roundCost: Double) throws -> Int {
        let slowdown = try #require(StepSlowdown([.sign: fraction], groups: 1))
        for _ in 0..<StepSlowdown.calibrationSamples {
            let rounds = slowdown.rounds(group: 0, .sign, part: 0)
            let added = UInt64((Double(rounds) * roundCost).rounded())
            if rounds > 0 { slowdown.added(group: 0, .sign, part: 0, took: added) }
            slowdown.observe(group: 0, .sign, part: 0, StepSample(nanoseconds: own + added))
        }
        #expect(slowdown.unslowed.isEmpty)
        return slowdown.rounds(group: 0, .sign, part: 0)
    }

    /// Within 0.01% or one round (the added time is told in whole nanoseconds, the work in
    /// whole rounds).
    static func close(_ rounds: Int, _ expected: Double) -> Bool {
        abs(Double(rounds) - expected) <= max(1, expected / 10_000)
    }

    // A round that costs far more than the timing at start said (37 ns against about 1):
    // sized by that timing, the step's own time would be overestimated by the added work's
    // excess, and the amount fed back grows without bound.
    @Test("the added work is the fraction of the step's own time, at what a round took inside the step", arguments: [0.25, 3, 19])
    func sizedByTimedRounds(fraction: Double) throws {
        let rounds = try self.fixedRounds(fraction: fraction, own: 100_000, roundCost: 37)
        #expect(Self.close(rounds, 100_000 * fraction / 37), "fraction \(fraction): \(rounds)")
    }

    @Test("a round cheaper than timed at start does not shrink the added work")
    func cheapRounds() throws {
        let rounds = try self.fixedRounds(fraction: 3, own: 1_000_000, roundCost: 0.05)
        #expect(Self.close(rounds, 60_000_000), "\(rounds)")
    }

    // An iteration records the client's and the server's `decode` under one step; each part
    // is slowed by the fraction of its own time, so the summed step is too, whatever the
    // parts' sizes.
    @Test("each part of a step in an iteration gets its own amount of added work")
    func partsSizedApart() throws {
        let slowdown = try #require(StepSlowdown([.decode: 1], groups: 1))
        let own: [UInt64] = [400_000, 10_000]
        let roundCost = 2.0
        for _ in 0..<StepSlowdown.calibrationSamples {
            var steps = IterationSteps(slowdown: slowdown)
            steps.record(.encode, nanoseconds: 5_000)
            for part in own {
                let rounds = steps.workToAdd(to: .decode)
                let added = UInt64((Double(rounds) * roundCost).rounded())
                if rounds > 0 { steps.addedWork(to: .decode, took: added) }
                steps.record(.decode, sample: StepSample(nanoseconds: part + added))
            }
        }
        #expect(slowdown.unslowed.isEmpty)
        let first = slowdown.rounds(group: 0, .decode, part: 0)
        let second = slowdown.rounds(group: 0, .decode, part: 1)
        #expect(Self.close(first, 200_000) && Self.close(second, 5_000), "\(first), \(second)")
    }

    @Test("--test-slowdown-provider: only the groups it names get added work; the others run as they are")
    func onlyTheNamedGroups() throws {
        let slowdown = try #require(StepSlowdown([.sign: 0.5], groups: 2, slowed: [false, true]))
        for _ in 0..<(StepSlowdown.calibrationSamples + 2) {
            for group in 0..<2 {
                let rounds = slowdown.rounds(group: group, .sign, part: 0)
                if group == 0 { #expect(rounds == 0, "an unslowed group got \(rounds) rounds") }
                if rounds > 0 { slowdown.added(group: group, .sign, part: 0, took: UInt64(rounds)) }
                slowdown.observe(group: group, .sign, part: 0, StepSample(nanoseconds: 100_000 + UInt64(rounds)))
            }
        }
        #expect(slowdown.rounds(group: 1, .sign, part: 0) > 0, "the named group is slowed")
        #expect(slowdown.unslowed.isEmpty)
    }
}
