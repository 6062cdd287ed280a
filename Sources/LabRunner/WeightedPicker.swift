/// Picks the flow of each iteration in proportion to the flows' weights, from a seeded
/// generator: the same weights and seed give the same sequence, run after run. One flow is
/// always picked without drawing a number.
package struct WeightedPicker {
    package let weights: [Int]
    private let total: Int
    private var random: SplitMix64

    /// A picker over `weights` (each at least 1, as the validator requires) seeded with `seed`.
    package init(weights: [Int], seed: UInt64) {
        self.weights = weights
        self.total = weights.reduce(0, +)
        self.random = SplitMix64(seed: seed)
    }

    /// The picker of client `index` in a run seeded with `seed`: each client draws its own sequence.
    package init(weights: [Int], runSeed seed: UInt64, client index: Int) {
        self.init(weights: weights, seed: seed &+ UInt64(index) &* 0x2545_F491_4F6C_DD1D)
    }

    /// The index of the next flow.
    package mutating func next() -> Int {
        guard self.weights.count > 1 else { return 0 }
        var ticket = Int(self.random.next() % UInt64(self.total))
        for (index, weight) in self.weights.enumerated() {
            if ticket < weight { return index }
            ticket -= weight
        }
        return self.weights.count - 1
    }
}
