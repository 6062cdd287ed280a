/// The crypto providers a run may use, built once from a type list (the lab's own: `LabBuiltIns/BuiltInPlugins.swift`).
public struct ProviderRegistry: Sendable {
    /// The registered provider types, in the order given.
    public let types: [any CryptoProvider.Type]

    /// A registry of the given provider types; names must be distinct.
    public init(_ types: [any CryptoProvider.Type]) {
        PluginLookup.requireDistinct(types.map { $0.name }, kind: "provider")
        self.types = types
    }

    /// The registered names, in order.
    public var names: [String] { self.types.map { $0.name } }

    /// Loads the provider called `name`.
    public func make(_ name: String) throws -> any CryptoProvider {
        let type = try PluginLookup.find(
            name,
            in: self.types,
            names: self.names,
            kind: "crypto provider",
            plural: "providers"
        )
        return try type.init()
    }

    /// Loads every registered provider.
    public func makeAll() throws -> [any CryptoProvider] {
        try self.types.map { try $0.init() }
    }
}
