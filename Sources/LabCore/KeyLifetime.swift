/// When a side makes its long-lived key pair (PROTOCOL.md §2.6).
public enum KeyLifetime: String, Sendable, Codable, CaseIterable {
    /// Once, at start, reused for every exchange (the 2009 sample's behaviour; the default).
    case perRun = "per-run"
    /// A fresh key pair for every exchange.
    case perExchange = "per-exchange"
}
