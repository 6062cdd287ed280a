public import LabCore

/// The `dnssd` discovery plugin: browses through avahi's `dns_sd` API (`DNSSD.discover`).
public struct DNSSDDiscovery: Discovery {
    /// `dnssd`.
    public static let name = "dnssd"

    /// The plugin.
    public init() {}

    /// Finds `service`'s instance `instance` (or the first), resolved to an IPv4 address.
    public func find(service: String, instance: String?, timeout: TimeSpan) async throws -> DiscoveredServer {
        let found = try await DNSSD.discover(
            type: service,
            name: instance,
            timeout: .nanoseconds(Int64(clamping: timeout.nanoseconds))
        )
        guard let address = found.addresses.first else {
            throw LabError(
                .discoveryTimeout,
                "DNS-SD found '\(found.instance.name)' on \(found.host) but no IPv4 address for it within \(timeout)"
            )
        }
        return DiscoveredServer(instance: found.instance.name, host: address, port: found.port, txt: found.txt)
    }
}
