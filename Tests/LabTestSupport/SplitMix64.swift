/// A seeded generator (SplitMix64), so a randomised test can be replayed from its seed.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    /// The generator's state.
    public var state: UInt64

    /// A generator seeded with `state`.
    public init(state: UInt64) {
        self.state = state
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = self.state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}
