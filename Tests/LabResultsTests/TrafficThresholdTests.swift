import Foundation
import LabCore
import LabResults
import LabScenario
import LabTestSupport
import Testing

/// Bytes on the wire as results keep them: the per-iteration log, groups that merge, and the
/// thresholds that test them.
@Suite(.tier(.unit)) struct TrafficThresholdTests {
    static let key = GroupKey(flow: "cx", suite: "pq", provider: "swift-crypto", transport: "tls")

    /// A group of 4 iterations, each an exchange of 1,264 B sent and 7,009 B received and two
    /// `poll`s of 10 B and 20 B; and 2 handshakes in set-up.
    static func group() -> GroupResult {
        var group = GroupResult(key: Self.key, flowKind: "cx", insecure: false, iterations: 4)
        group.traffic[.exchange] = StepTraffic(roundTrips: 4, sent: 4 * 1_264, received: 4 * 7_009)
        group.traffic[Step("poll")] = StepTraffic(roundTrips: 8, sent: 8 * 10, received: 8 * 20)
        group.setupTraffic[.handshake] = StepTraffic(roundTrips: 2, sent: 2 * 1_472, received: 2 * 1_725)
        return group
    }

    static func parse(_ metric: String, _ condition: String) -> Result<Threshold, ThresholdProblem> {
        Threshold.parse(
            metric: metric,
            condition: condition,
            flows: ["cx": [.exchange, .handshake, .keygenClient, Step("poll")]]
        )
    }

    static func evaluate(_ metric: String, _ condition: String, _ groups: [GroupResult]) throws -> ThresholdOutcome {
        try Self.parse(metric, condition).get().evaluate(OutcomeTests.result(groups))
    }

    @Test("An iteration's log adds up each step's round trips, past its inline slots too")
    func logAddsUp() {
        var log = TrafficLog()
        #expect(log.isEmpty)
        for index in 0..<10 { log.add(Step("op-\(index)"), sent: index, received: 2 * index) }
        log.add(Step("op-1"), sent: 5, received: 7)
        log.add(Step("op-9"), sent: 1, received: 1)
        var totals: [Step: StepTraffic] = [:]
        log.add(into: &totals)
        log.add(into: &totals)
        #expect(totals.count == 10)
        #expect(totals[Step("op-1")] == StepTraffic(roundTrips: 4, sent: 12, received: 18))
        #expect(totals[Step("op-9")] == StepTraffic(roundTrips: 4, sent: 20, received: 38))
        #expect(totals[Step("op-0")] == StepTraffic(roundTrips: 2, sent: 0, received: 0))
    }

    @Test("Merged groups add their bytes; per iteration is the measured bytes over the iterations")
    func mergeAndPerIteration() throws {
        var group = Self.group()
        group.merge(Self.group())
        #expect(group.traffic[.exchange] == StepTraffic(roundTrips: 8, sent: 8 * 1_264, received: 8 * 7_009))
        #expect(group.setupTraffic[.handshake] == StepTraffic(roundTrips: 4, sent: 4 * 1_472, received: 4 * 1_725))
        let per = try #require(group.bytesPerIteration)
        // Set-up's handshakes are not an iteration's.
        #expect(per.sent == 1_284 && per.received == 7_049)
        #expect(GroupResult(key: Self.key, flowKind: "cx", insecure: false, iterations: 3).bytesPerIteration == nil)
    }

    @Test("Bytes thresholds: per iteration, per round trip of a step (set-up's included), with units")
    func thresholds() throws {
        let groups = [Self.group()]
        // An iteration: the exchange and two polls.
        let sent = try Self.evaluate("cx.bytes.sent", "== 1284", groups)
        #expect(sent.passed && sent.value == 1_284 && sent.unit == "bytes" && sent.observed == "1,284 B", "\(sent)")
        #expect(try Self.evaluate("cx.bytes.received", "< 7 KiB", groups).passed == true)
        #expect(try Self.evaluate("cx.bytes.received", "< 7 kB", groups).passed == false)
        #expect(try Self.evaluate("cx.bytes.total", "== 8333 B", groups).passed == true)
        // A step: per round trip.
        #expect(try Self.evaluate("cx.poll.bytes.received", "== 20", groups).passed == true)
        #expect(try Self.evaluate("cx.exchange.bytes.sent", "== 1264", groups).passed == true)
        let handshake = try Self.evaluate("cx.handshake.bytes.sent", "<= 1472", groups)
        #expect(handshake.passed && handshake.value == 1_472, "\(handshake)")
        #expect(try Self.evaluate("cx{suite=pq}.exchange.bytes.received", "> 0.006 MiB", groups).passed == true)
        #expect(
            try Self.evaluate("cx{suite=x25519}.bytes.sent", "< 1 MiB", groups).passed == false,
            "no such group: no data"
        )
        // A step that sent nothing has no data, and misses.
        let none = try Self.evaluate("cx.keygen.client.bytes.sent", "< 1", groups)
        #expect(!none.passed && none.value == nil && none.observed == "no data")
    }

    @Test("Bytes metrics that do not parse say what was expected")
    func problems() {
        func problem(_ metric: String, _ condition: String) -> ThresholdProblem? {
            if case .failure(let problem) = Self.parse(metric, condition) { return problem }
            return nil
        }
        let direction = problem("cx.bytes.out", "< 1")
        #expect(
            direction?.inMetric == true && direction?.message.contains("sent, received, total") == true,
            "\(String(describing: direction))"
        )
        #expect(problem("cx.bytes", "< 1")?.inMetric == true)
        let step = problem("cx.exchang.bytes.sent", "< 1")
        #expect(step?.message.contains("no step 'exchang'") == true, "\(String(describing: step))")
        let unit = problem("cx.bytes.sent", "< 4 ms")
        #expect(unit?.inMetric == false && unit?.message.contains("KiB") == true, "\(String(describing: unit))")
    }
}
