import LabRunner
import LabTesting
import Testing

/// `WeightedPicker`, alone: how a client chooses the flow of each exchange.
@Suite(.tier(.unit)) struct WeightedPickerTests {
    @Test("Flows are picked in proportion to their weights, over 20,000 picks")
    func proportions() {
        var picker = WeightedPicker(weights: [1, 3, 6], seed: 42)
        var counts = [0, 0, 0]
        for _ in 0..<20_000 { counts[picker.next()] += 1 }
        for (index, share) in [0.1, 0.3, 0.6].enumerated() {
            let observed = Double(counts[index]) / 20_000
            #expect(abs(observed - share) < 0.015, "flow \(index): \(observed), weight share \(share)")
        }
    }

    @Test("The same seed repeats the sequence; another client's seed does not")
    func seeds() {
        func sequence(_ picker: WeightedPicker) -> [Int] {
            var picker = picker
            return (0..<64).map { _ in picker.next() }
        }
        let first = sequence(WeightedPicker(weights: [1, 1], runSeed: 7, client: 0))
        #expect(first == sequence(WeightedPicker(weights: [1, 1], runSeed: 7, client: 0)))
        #expect(first != sequence(WeightedPicker(weights: [1, 1], runSeed: 7, client: 1)))
        #expect(Set(first) == [0, 1])
    }

    @Test("One flow is always picked")
    func oneFlow() {
        var picker = WeightedPicker(weights: [5], seed: 1)
        #expect((0..<100).allSatisfy { _ in picker.next() == 0 })
    }
}
