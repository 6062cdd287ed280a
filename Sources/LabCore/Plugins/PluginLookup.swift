/// What every plugin registry does with its type list: insist on distinct names, find by name.
public enum PluginLookup {
    /// Traps unless `names` are distinct: a registry is built once, from code.
    public static func requireDistinct(_ names: [String], kind: String) {
        precondition(Set(names).count == names.count, "\(kind) names must be distinct")
    }

    /// The type whose name is `name`, or an `.unknownPlugin` error listing the known ones.
    ///
    /// `kind` and `plural` word the message: "No transport named 'x'; known transports: …".
    public static func find<T>(_ name: String, in types: [T], names: [String], kind: String, plural: String) throws -> T
    {
        guard let index = names.firstIndex(of: name) else {
            throw LabError(
                .unknownPlugin,
                "No \(kind) named '\(name)'; known \(plural): \(names.joined(separator: ", "))"
            )
        }
        return types[index]
    }
}
