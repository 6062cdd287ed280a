/// How a client finds a server it was not given an address for: `dnssd` (DNS-SD through
/// avahi), as the 2009 sample found its server by Bonjour.
public protocol Discovery: Sendable {
    /// The name `lab list` shows, e.g. `dnssd`.
    static var name: String { get }
    /// Finds a server offering `service` (e.g. `_crypttest._tcp`): the instance called
    /// `instance`, or the first one found. Throws `discoveryTimeout` after `timeout`.
    func find(service: String, instance: String?, timeout: TimeSpan) async throws -> DiscoveredServer
}

/// A server found by discovery.
public struct DiscoveredServer: Sendable, Hashable {
    /// The instance name, e.g. `lab on vm`.
    public var instance: String
    /// An address to connect to.
    public var host: String
    /// The port.
    public var port: Int
    /// The TXT record's keys and values (docs/protocol.md §3: `proto`, `suites`, `tls`).
    public var txt: [String: String]

    /// A found server.
    public init(instance: String, host: String, port: Int, txt: [String: String]) {
        self.instance = instance
        self.host = host
        self.port = port
        self.txt = txt
    }
}
