import Foundation
import LabCore
import LabScenario
import LabTestSupport
import Testing

/// `"rate": "P% of capacity"`: what parses, what is refused, and that a shard or a counted run,
/// which cannot probe for the whole, refuses it before any work.
@Suite(.tier(.unit)) struct CapacityShareTests {
    @Test(
        "A share of capacity parses from above 0% to 100%, words apart by spaces",
        arguments: [
            ("70% of capacity", 0.7), ("100% of capacity", 1.0), ("0.5% of capacity", 0.005),
            (" 25%  of  capacity ", 0.25),
        ]
    )
    func parses(_ text: String, _ share: Double) {
        #expect(LoadRate(parsing: text) == .shareOfCapacity(share))
    }

    @Test(
        "Anything else is refused",
        arguments: ["70%", "0% of capacity", "101% of capacity", "70 % of capacity", "70% capacity", "-5% of capacity",
            "70% of the capacity", "nan% of capacity", "70"]
    )
    func refuses(_ text: String) {
        #expect(LoadRate(parsing: text) == nil)
    }

    @Test("An open load decodes a share: capacityShare set, no probe yet; a number stays a rate")
    func decodes() throws {
        let share = try JSONDecoder().decode(
            LoadSpec.self,
            from: Data(#"{ "model": "open", "rate": "40% of capacity", "duration": "2 s" }"#.utf8)
        )
        #expect(share.capacityShare == 0.4 && share.probed == nil)
        let fixed = try JSONDecoder().decode(
            LoadSpec.self,
            from: Data(#"{ "model": "open", "rate": 300, "duration": "2 s" }"#.utf8)
        )
        #expect(fixed.capacityShare == nil && fixed.rate == 300)
    }
}
