import Foundation
import LabCore
import LabTesting
import Testing

/// What `measure` records beside the time.
@Suite(.tier(.unit)) struct StepSampleTests {
    @Test("measure marks a step that spent its time off the CPU as preempted, with its CPU time")
    func offCPUIsPreempted() throws {
        var timings = StepTimings()
        _ = timings.measure(.sign) { usleep(3_000) }
        let sample = try #require(timings.samples.first?.sample)
        // 3 ms asleep: wall time ≥ 3 ms, CPU time far less, so the step was not running.
        #expect(sample.nanoseconds >= 3_000_000)
        let cpu = try #require(sample.cpuNanoseconds)
        #expect(cpu < 1_000_000 && sample.preempted, "cpu \(cpu) ns, wall \(sample.nanoseconds) ns")
        #expect(sample.instructions == nil, "not a counted run")
    }

    @Test("Both sides' parts of one step add up; either part preempted makes the sum preempted")
    func partsAdd() {
        var sum = StepSample(nanoseconds: 10, cpuNanoseconds: 9, instructions: 100, allocations: 2)
        sum.add(StepSample(nanoseconds: 5, cpuNanoseconds: 4, preempted: true, instructions: 50, allocations: 1))
        #expect(sum == StepSample(nanoseconds: 15, cpuNanoseconds: 13, preempted: true, instructions: 150, allocations: 3))
        sum.add(StepSample(nanoseconds: 1))
        #expect(sum.cpuNanoseconds == nil && sum.instructions == nil && sum.nanoseconds == 16)
    }
}
