import Foundation
import Histogram
import LabAnalysis
import LabCore
import LabReport
import LabResults
import LabTestSupport
import Testing

/// `lab compare RUN#SELECTOR`: what a selector picks, how a bad one is refused, and how a
/// candidate's groups are matched across the field two selectors set differently.
@Suite(.tier(.unit)) struct GroupSelectionTests {
    @Test("A selector splits off after the last #, and parses a flow label, filters, or both")
    func parses() throws {
        let plain = try GroupSelection.split("Reports/a#b/results.json")
        #expect(plain.path == "Reports/a")
        #expect(plain.selection == GroupSelection(flow: "b/results.json", filters: [:]))
        #expect(try GroupSelection.split("Reports/run").selection == nil)
        let both = try GroupSelection(parsing: "cx{suite=x25519, provider=openssl}")
        #expect(both.flow == "cx" && both.filters == ["suite": "x25519", "provider": "openssl"])
        #expect(both.description == "#cx{suite=x25519,provider=openssl}")
        let filters = try GroupSelection(parsing: "{transport=tcp}")
        #expect(filters.flow == nil && filters.filters == ["transport": "tcp"])
    }

    @Test(
        "A bad selector is refused, naming what is wrong and what is expected",
        arguments: ["", "{}", "{suite}", "{colour=red}", "cx{suite=x25519"]
    )
    func refusesBadSelectors(_ selector: String) throws {
        let error = try #require(throws: LabError.self) { try GroupSelection(parsing: selector) }
        #expect(error.message.contains("'#\(selector)'"), "\(error.message)")
        #expect(error.message.contains("expected '#FLOW'"), "\(error.message)")
    }

    @Test("A selector that picks no group is refused, listing the run's groups")
    func picksNothing() throws {
        let selection = try GroupSelection(parsing: "{provider=botan}")
        let error = try #require(throws: LabError.self) { try selection.apply(to: Self.run(), label: "R") }
        #expect(error.message.contains("matches none of 'R''s groups"), "\(error.message)")
        #expect(error.message.contains("cx-x25519-openssl x25519 openssl in-process"), "\(error.message)")
    }

    @Test(
        "Across the field the selectors set differently, each candidate group stands for the baseline group alike in the rest"
    )
    func aligns() throws {
        let run = Self.run()
        let base = try GroupSelection(parsing: "{provider=swift-crypto}")
        let other = try GroupSelection(parsing: "{provider=openssl}")
        let baseline = try base.apply(to: run, label: "R")
        let candidate = try other.apply(to: run, label: "R")
        #expect(baseline.groups.count == 2 && candidate.groups.count == 2)
        let aligned = GroupSelection.align(candidate, other, to: baseline, base)
        // Renamed to the baseline's keys, labels included: x25519 on openssl stands for x25519 on swift-crypto.
        #expect(Set(aligned.groups.map(\.key)) == Set(baseline.groups.map(\.key)))
        let x25519 = try #require(aligned.groups.first { $0.key.suite == "x25519" })
        #expect(x25519.key.flow == "cx-x25519-swift-crypto")
        #expect(x25519.steps[.exchange]?.totalCount == 30, "openssl's samples, under swift-crypto's key")
        let comparison = Comparison(
            baseline: Comparison.Run(label: "a", result: baseline),
            candidates: [Comparison.Run(label: "b", result: aligned)]
        )
        #expect(!comparison.comparesNothing(candidate: 0))
    }

    /// x25519 and rsa-modern on two providers, labelled as the planner labels them.
    static func run() -> RunResult {
        func group(_ suite: String, _ provider: String, count: Int) -> GroupResult {
            var histogram = Histogram<UInt64>(
                highestTrackableValue: 60_000_000_000,
                numberOfSignificantValueDigits: .three
            )
            for index in 0..<count { histogram.record(UInt64(100_000 + index * 10)) }
            return GroupResult(
                key: GroupKey(
                    flow: "cx-\(suite)-\(provider)",
                    suite: suite,
                    provider: provider,
                    transport: "in-process"
                ),
                flowKind: "cx",
                insecure: false,
                steps: [.exchange: histogram]
            )
        }
        var result = Fixture.result()
        result.groups = [
            group("x25519", "swift-crypto", count: 20), group("x25519", "openssl", count: 30),
            group("rsa-modern", "swift-crypto", count: 20), group("rsa-modern", "openssl", count: 30),
        ]
        return result
    }
}
