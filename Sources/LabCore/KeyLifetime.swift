/// When a side makes its long-lived key pair (docs/protocol.md §2.6).
public enum KeyLifetime: String, Sendable, Codable, CaseIterable {
    /// Once, at start, reused for every exchange (the 2009 sample's behaviour; the default).
    case perRun = "per-run"
    /// A fresh key pair for every exchange.
    case perExchange = "per-exchange"
    /// Once, at start, and the same in every run: the lab's published test key for the key
    /// type (`FixedKeys`), so that counted runs do the same work. Never for anything secret.
    case fixed

    /// The values, as a scenario's error message lists them.
    public static let expectation = "\"per-run\", \"per-exchange\" or \"fixed\""

    /// Whether the key pair is made once and kept for the run (per-run and fixed keys).
    public var isKeptForRun: Bool { self != .perExchange }
}
