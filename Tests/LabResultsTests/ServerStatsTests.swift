import Foundation
import Histogram
import LabCore
import LabResults
import LabTestSupport
import Testing

/// The server's totals, differenced: what a run gets from `serverStats` before and after.
@Suite(.tier(.unit)) struct ServerStatsTests {
    static func stats(_ groups: [ServerStats.Group]) -> ServerStats {
        ServerStats(
            provider: ProviderInfo(name: "openssl", version: "OpenSSL 3"),
            machine: MachineInfo(hostname: "a", cpu: "c", cores: 2, memoryBytes: 1, os: "o", kernel: "k"),
            transport: "tcp",
            startedAt: Date(timeIntervalSince1970: 1_700_000_000),
            groups: groups
        )
    }

    @Test("A later histogram minus an earlier one is exactly the samples added, far past the earlier range too")
    func histogramDifference() {
        var earlier = Histogram<UInt64>(numberOfSignificantValueDigits: .three)
        for value in [900, 1_000, 1_000, 1_500] as [UInt64] { earlier.record(value) }
        var later = earlier
        // Values past what the earlier, auto-sized histogram can index (it trapped here once).
        let added: [UInt64] = [1_000, 2_000_000, 75_000_000_000, 75_000_000_000]
        for value in added { later.record(value) }
        let difference = later.subtracting(earlier)
        var expected = Histogram<UInt64>(numberOfSignificantValueDigits: .three)
        for value in added { expected.record(value) }
        #expect(difference.totalCount == 4)
        for percentile in [0.0, 25, 50, 75, 100] {
            let (got, want) = (difference.valueAtPercentile(percentile), expected.valueAtPercentile(percentile))
            #expect(difference.valuesAreEquivalent(got, want), "p\(percentile): \(got) vs \(want)")
        }
        #expect(difference.maxRecorded == 75_000_000_000, "the maximum stays exact")
        #expect(later.subtracting(later).totalCount == 0)
    }

    @Test("Stats minus earlier stats: counts and histograms per group; groups with nothing new are dropped")
    func statsDifference() throws {
        func sparse(_ values: [UInt64]) -> SparseHistogram {
            var histogram = Histogram<UInt64>(numberOfSignificantValueDigits: .three)
            for value in values { histogram.record(value) }
            return SparseHistogram(histogram)
        }
        let before = Self.stats([
            ServerStats.Group(
                name: "x25519",
                answered: 2,
                errors: ["badPublicKey": 1],
                steps: [
                    ServerStats.StepHistogram(step: "sign", histogram: sparse([50_000, 51_000]))
                ]
            ),
            ServerStats.Group(
                name: "classic",
                answered: 1,
                errors: [:],
                steps: [
                    ServerStats.StepHistogram(step: "sign", histogram: sparse([900_000]))
                ]
            ),
        ])
        let after = Self.stats([
            ServerStats.Group(
                name: "x25519",
                answered: 5,
                errors: ["badPublicKey": 1, "serverError": 2],
                steps: [
                    ServerStats.StepHistogram(
                        step: "sign",
                        histogram: sparse([50_000, 51_000, 52_000, 60_000, 70_000])
                    )
                ]
            ),
            ServerStats.Group(
                name: "classic",
                answered: 1,
                errors: [:],
                steps: [
                    ServerStats.StepHistogram(step: "sign", histogram: sparse([900_000]))
                ]
            ),
            ServerStats.Group(name: "login", answered: 1, errors: [:], steps: []),
        ])
        // Through the wire form and back, as a client receives it.
        let decoded = try ServerStats.decode(try after.encoded())
        #expect(decoded == after)
        let difference = try decoded.subtracting(before)
        #expect(difference.groups.map(\.name) == ["login", "x25519"])
        let x25519 = try #require(difference.groups.last)
        #expect(x25519.answered == 3)
        #expect(x25519.errors == ["serverError": 2])
        let sign = try x25519.steps.first { $0.step == "sign" }?.histogram.histogram()
        #expect(sign?.totalCount == 3)
        #expect(sign.map { $0.valuesAreEquivalent($0.valueAtPercentile(0), 52_000) } == true)
        #expect(sign?.maxRecorded == 70_000)
        #expect(throws: LabError.self) { try ServerStats.decode(Array("{\"format\":\"other\"}".utf8)) }
        // A server that restarted in between: its totals began again, and do not subtract.
        var restarted = after
        restarted.startedAt = after.startedAt.addingTimeInterval(60)
        #expect(throws: LabError.self) { try restarted.subtracting(before) }
    }
}
