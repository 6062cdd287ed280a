import LabBuiltIns
import LabCX
public import LabCore
public import LabServer

/// A suite with its options, as test arguments name them: `classic@512`, `x25519`
/// (`lab serve --suites` parses the same).
public typealias SuiteCase = SuiteChoice

extension SuiteChoice {
    /// Every suite at its default size, plus the other classic sizes.
    public static let all: [SuiteChoice] = [
        SuiteChoice("classic", rsaBits: 512),
        SuiteChoice("classic", rsaBits: 1024),
        SuiteChoice("classic", rsaBits: 2048),
        SuiteChoice("rsa-modern", rsaBits: 2048),
        SuiteChoice("x25519"),
        SuiteChoice("pq"),
    ]

    /// The built-in suite this names.
    public func make() throws -> any Suite {
        try self.make(BuiltInPlugins.suites)
    }
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
