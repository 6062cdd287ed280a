import Histogram
public import LabCore

/// How close a run came to the physical limit its primitives set: the exchanges per second
/// the machine could do if it did nothing but the crypto primitives each exchange needs.
///
/// Each exchange spends `primitiveNanoseconds` in primitives (the mean time of every
/// per-exchange primitive step: keys, wrap and unwrap, encryption and decryption, signature
/// and verification); `lanes` exchanges run at once at most (the clients, or the cores if
/// fewer). The bound is `lanes` ÷ that time; `efficiency` is the run's exchanges per second
/// ÷ the bound, the share of the machine's time that went into primitives: what is left is
/// the lab's own overhead (codec, framing, transport, scheduling, recording).
public struct PrimitiveBound: Sendable, Equatable {
    /// The steps that are primitives.
    public static let steps: [Step] = [
        .keygenClient, .keygenServer, .keygenSession, .wrap, .unwrap, .encrypt, .decrypt, .sign, .verify,
    ]

    /// Mean primitive time per exchange, in nanoseconds, over the run's mix of groups.
    public var primitiveNanoseconds: Double
    /// Exchanges that can run at once: min(clients, cores).
    public var lanes: Int
    /// Exchanges per second at the bound.
    public var bound: Double
    /// Exchanges per second the run achieved (successful, over the measured window).
    public var achieved: Double

    /// Achieved ÷ bound.
    public var efficiency: Double { self.bound > 0 ? self.achieved / self.bound : 0 }

    /// The bound of `result`'s client groups that have primitive steps; nil without any,
    /// without a measured window, or when the server ran elsewhere (its primitives then
    /// spent another machine's time).
    public init?(_ result: RunResult) {
        guard result.metadata.transport.contains("server in this process") else { return nil }
        var exchanges = 0.0
        var primitive = 0.0
        for group in result.groups where !group.isServerSide {
            let count = Double(group.steps[.exchange]?.totalCount ?? 0)
            guard count > 0 else { continue }
            var inGroup = 0.0
            for step in Self.steps {
                // A step made once per client or per run (set-up, before the clock) is not
                // part of an exchange: only steps with a sample in most exchanges count.
                guard let histogram = group.steps[step], Double(histogram.totalCount) >= count / 2 else { continue }
                inGroup += histogram.specialisedMean * Double(histogram.totalCount)
            }
            guard inGroup > 0 else { continue }
            exchanges += count
            primitive += inGroup
        }
        guard exchanges > 0, result.measuredNanoseconds > 0 else { return nil }
        self.primitiveNanoseconds = primitive / exchanges
        self.lanes = max(1, min(result.metadata.clients, result.metadata.machine.cores))
        self.bound = Double(self.lanes) * 1e9 / self.primitiveNanoseconds
        self.achieved = exchanges / (Double(result.measuredNanoseconds) / 1e9)
    }
}
