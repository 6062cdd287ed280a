/// A DNS-SD service instance as browsing reports it.
public struct ServiceInstance: Sendable, Hashable {
    /// The instance name, unescaped, e.g. `lab one`.
    public var name: String
    /// The service type as the daemon reports it, e.g. `_crypttest._tcp.`.
    public var type: String
    /// The domain, e.g. `local.`.
    public var domain: String
    /// The index of the network interface it was seen on (`if_nametoindex`).
    public var interfaceIndex: UInt32

    /// Makes an instance.
    public init(name: String, type: String, domain: String, interfaceIndex: UInt32) {
        self.name = name
        self.type = type
        self.domain = domain
        self.interfaceIndex = interfaceIndex
    }
}
