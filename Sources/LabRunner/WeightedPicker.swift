/// Picks the flow of each iteration in proportion to the flows' weights, from a seeded
/// generator: the same weights and seed give the same sequence, run after run. One flow is
/// always picked without drawing a number.
///
/// The picks are dealt from a deck that holds each flow `weight` times, shuffled with the
/// seeded generator and reshuffled once dealt: every `total weight` picks hold the weights'
/// proportions exactly, in a random order. A client of a matrix of 8 cells (weight 1 each)
/// runs every cell once in its first 8 iterations, where independent draws left a cell out
/// of a 10-iteration run. With a total weight over `deckLimit`, picks are independent draws.
package struct WeightedPicker {
    package let weights: [Int]
    private let total: Int
    private var random: SplitMix64
    /// Each flow's index `weight` times, in the current shuffle; empty past `deckLimit`.
    private var deck: [Int]
    /// The next card of `deck` to deal.
    private var position: Int

    /// The largest total weight dealt from a deck.
    package static let deckLimit = 10_000

    /// A picker over `weights` (each at least 1, as the validator requires) seeded with `seed`.
    package init(weights: [Int], seed: UInt64) {
        self.weights = weights
        self.total = weights.reduce(0, +)
        self.random = SplitMix64(seed: seed)
        self.deck =
            weights.count > 1 && self.total <= Self.deckLimit
            ? weights.enumerated().flatMap { Array(repeating: $0.offset, count: $0.element) } : []
        self.position = self.deck.count
    }

    /// The picker of client `index` in a run seeded with `seed`: each client draws its own sequence.
    package init(weights: [Int], runSeed seed: UInt64, client index: Int) {
        self.init(weights: weights, seed: seed &+ UInt64(index) &* 0x2545_F491_4F6C_DD1D)
    }

    /// The index of the next flow.
    package mutating func next() -> Int {
        guard self.weights.count > 1 else { return 0 }
        if !self.deck.isEmpty {
            if self.position == self.deck.count {
                self.deck.shuffle(using: &self.random)
                self.position = 0
            }
            defer { self.position += 1 }
            return self.deck[self.position]
        }
        var ticket = Int(self.random.next() % UInt64(self.total))
        for (index, weight) in self.weights.enumerated() {
            if ticket < weight { return index }
            ticket -= weight
        }
        return self.weights.count - 1
    }
}
