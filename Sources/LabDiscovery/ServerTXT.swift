/// The TXT records of a lab server (docs/protocol.md §3): `proto=cx/1,msg/1`,
/// `suites=<comma list>` and `tls=0|1`.
public struct ServerTXT: Sendable, Hashable {
    /// The key of the protocol list.
    public static let protocolsKey = "proto"
    /// The key of the suite list.
    public static let suitesKey = "suites"
    /// The key of the TLS flag.
    public static let tlsKey = "tls"

    /// The protocols the server speaks, e.g. `["cx/1", "msg/1"]`.
    public var protocols: [String]
    /// The suites it offers, e.g. `["x25519", "p256"]`.
    public var suites: [String]
    /// Whether it speaks TLS.
    public var tls: Bool

    /// Makes the records of a server.
    public init(protocols: [String] = ["cx/1", "msg/1"], suites: [String], tls: Bool) {
        self.protocols = protocols
        self.suites = suites
        self.tls = tls
    }

    /// Reads decoded TXT records; `nil` without a non-empty `proto` or with a `tls` other than
    /// `0` or `1`. A missing `suites` is an empty list and a missing `tls` is `0`.
    public init?(records: [String: String]) {
        guard let protocols = records[Self.protocolsKey].map(Self.list), !protocols.isEmpty else { return nil }
        switch records[Self.tlsKey] {
        case nil, "0": self.tls = false
        case "1": self.tls = true
        default: return nil
        }
        self.protocols = protocols
        self.suites = records[Self.suitesKey].map(Self.list) ?? []
    }

    /// The records to advertise, for ``TXTRecord/encode(_:)`` or ``DNSSD/advertise(name:type:port:txt:timeout:)``.
    public var records: [String: String] {
        [
            Self.protocolsKey: self.protocols.joined(separator: ","),
            Self.suitesKey: self.suites.joined(separator: ","),
            Self.tlsKey: self.tls ? "1" : "0",
        ]
    }

    private static func list(_ text: String) -> [String] {
        text.split(separator: ",").map { String($0) }
    }
}
