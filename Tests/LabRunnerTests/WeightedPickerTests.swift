import LabRunner
import LabTestSupport
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

    @Test("Every total weight of picks holds the weights exactly, in an order that differs from deck to deck")
    func decks() {
        var picker = WeightedPicker(weights: [1, 3, 6], seed: 9)
        var orders: Set<[Int]> = []
        for _ in 0..<20 {
            let deck = (0..<10).map { _ in picker.next() }
            #expect(deck.sorted() == [0, 1, 1, 1, 2, 2, 2, 2, 2, 2], "\(deck)")
            orders.insert(deck)
        }
        #expect(orders.count > 10, "shuffled: \(orders.count) distinct orders of 20")
        // Eight cells of a matrix, one each: eight picks run every one.
        var cells = WeightedPicker(weights: Array(repeating: 1, count: 8), runSeed: 3, client: 1)
        #expect(Set((0..<8).map { _ in cells.next() }) == Set(0..<8))
        // Past the deck's limit, independent draws: proportions over many picks only.
        var large = WeightedPicker(weights: [WeightedPicker.deckLimit, WeightedPicker.deckLimit], seed: 5)
        let first = (0..<20).map { _ in large.next() }
        #expect(Set(first) == [0, 1])
    }

    @Test("One flow is always picked")
    func oneFlow() {
        var picker = WeightedPicker(weights: [5], seed: 1)
        #expect((0..<100).allSatisfy { _ in picker.next() == 0 })
    }
}
