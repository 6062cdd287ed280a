public import LabCore
public import LabCrypto
import LabPlugins

/// A suite with its options, as test arguments name them: `classic@512`, `x25519`.
public struct SuiteCase: Sendable, CustomStringConvertible, Hashable {
    /// The suite id.
    public var id: String
    /// RSA size, for RSA suites.
    public var rsaBits: Int?

    /// A case.
    public init(_ id: String, rsaBits: Int? = nil) {
        self.id = id
        self.rsaBits = rsaBits
    }

    /// The suite, made through the registry.
    public func make() throws -> any Suite {
        try BuiltInPlugins.suites.make(self.id, options: SuiteOptions(rsaBits: self.rsaBits))
    }

    /// `classic@512`.
    public var description: String { self.rsaBits.map { "\(self.id)@\($0)" } ?? self.id }

    /// Every suite at its default size, plus the other classic sizes.
    public static let all: [SuiteCase] = [
        SuiteCase("classic", rsaBits: 512),
        SuiteCase("classic", rsaBits: 1024),
        SuiteCase("classic", rsaBits: 2048),
        SuiteCase("rsa-modern", rsaBits: 2048),
        SuiteCase("x25519"),
        SuiteCase("pq"),
    ]
}

/// Shared, loaded-once providers.
public enum Providers {
    /// Every built-in provider.
    public static let all: [any CryptoProvider] = {
        do {
            return try BuiltInPlugins.providers.makeAll()
        } catch {
            fatalError("the built-in providers must load: \(error)")
        }
    }()

    /// The provider called `name`.
    public static func named(_ name: String) -> any CryptoProvider {
        guard let provider = all.first(where: { $0.name == name }) else { fatalError("no provider \(name)") }
        return provider
    }

    /// The registered names.
    public static var names: [String] { BuiltInPlugins.providers.names }
}
