import LabBuiltIns
public import LabCore
public import LabTestKit

extension TransportConformance {
    /// The lab's own transports, each of which must conform.
    public static let transports = BuiltInPlugins.transports.names

    /// Makes the built-in transport `name` with `options`.
    public static func make(_ name: String, options: TransportOptions = TransportOptions()) throws -> any Transport {
        try BuiltInPlugins.transports.make(name, options: options)
    }
}
