/// A service instance resolved to a host, a port, its TXT records and an IPv4 address.
public struct ResolvedService: Sendable, Hashable {
    /// The instance that was resolved.
    public var instance: ServiceInstance
    /// The target host, e.g. `vm.local.`.
    public var host: String
    /// The service's port.
    public var port: Int
    /// The TXT records; a key without `=` has the empty value.
    public var txt: [String: String]
    /// The host's IPv4 addresses as dotted quads, e.g. `127.0.0.1` (never empty).
    public var addresses: [String]

    /// Makes a resolved service.
    public init(instance: ServiceInstance, host: String, port: Int, txt: [String: String], addresses: [String]) {
        self.instance = instance
        self.host = host
        self.port = port
        self.txt = txt
        self.addresses = addresses
    }

    /// The lab's TXT records (docs/protocol.md §3), or `nil` if they are missing or malformed.
    public var server: ServerTXT? {
        ServerTXT(records: self.txt)
    }
}
