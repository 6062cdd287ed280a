/// A key of `PluginExtensions`: one value a catalog carries for plugins that have plugin
/// kinds of their own, e.g. msg/1's KDFs, lockout policies, captchas and clocks
/// (`MessagingKinds`). Like SwiftUI's environment keys: the key's type is the key, and a
/// catalog that never set it reads `defaultValue`.
public protocol PluginExtensionKey: Sendable {
    /// The value's type.
    associatedtype Value: Sendable
    /// What a catalog that never set the key holds: the lab's own choices.
    static var defaultValue: Value { get }
}

/// The values a catalog carries for plugins with kinds of their own, handed to every flow
/// in its `FlowSetup` and to option decoding (`ScenarioObject.extensions`), so that a flow's
/// options are read against the kinds the catalog registered, not a hard-wired list.
public struct PluginExtensions: Sendable {
    private var values: [ObjectIdentifier: any Sendable] = [:]

    /// No values: every key reads its default.
    public init() {}

    /// The value of `key`, or its default.
    public subscript<Key: PluginExtensionKey>(_ key: Key.Type) -> Key.Value {
        get { self.values[ObjectIdentifier(key)] as? Key.Value ?? Key.defaultValue }
        set { self.values[ObjectIdentifier(key)] = newValue }
    }

    /// The `userInfo` key under which option decoders carry them.
    public static let userInfoKey = CodingUserInfoKey(rawValue: "lab.pluginExtensions")!
}
