public import LabCore

/// A suite's options, from a scenario or the CLI.
public struct SuiteOptions: Sendable, Hashable, Codable {
    /// The RSA modulus size, for RSA suites; nil for the suite's default.
    public var rsaBits: Int?

    /// Options; all default.
    public init(rsaBits: Int? = nil) {
        self.rsaBits = rsaBits
    }
}

/// The suites the lab knows, by id, built once from a type list.
public struct SuiteRegistry: Sendable {
    /// The built-in suites: `classic`, `rsa-modern`, `x25519`, `pq`.
    public static let builtIn = SuiteRegistry([ClassicSuite.self, RSAModernSuite.self, X25519Suite.self, PQSuite.self])

    /// The registered suite types, in order.
    public let types: [any Suite.Type]

    /// A registry of the given suites; ids must be distinct.
    public init(_ types: [any Suite.Type]) {
        precondition(Set(types.map { $0.id }).count == types.count, "suite ids must be distinct")
        self.types = types
    }

    /// The registered ids, in order.
    public var ids: [String] { self.types.map { $0.id } }

    /// Makes the suite `id` with `options`.
    public func make(_ id: String, options: SuiteOptions = SuiteOptions()) throws -> any Suite {
        guard let type = self.types.first(where: { $0.id == id }) else {
            throw LabError(.unknownSuite, "No suite named '\(id)'; known suites: \(self.ids.joined(separator: ", "))")
        }
        return try type.init(options: options)
    }

    /// Throws `.unsupported` unless `provider` can do `suite`, naming which of `others` can.
    public static func requireSupport(
        _ suite: any Suite,
        by provider: any CryptoProvider,
        others: [any CryptoProvider] = []
    ) throws {
        guard let reason = suite.unsupportedReason(on: provider) else { return }
        let able = others.filter { $0.name != provider.name && suite.unsupportedReason(on: $0) == nil }.map(\.name)
        let alternatives =
            able.isEmpty
            ? "No registered provider can."
            : "Provider\(able.count == 1 ? "" : "s") that can: \(able.joined(separator: ", "))."
        throw LabError(
            .unsupported,
            "The \(provider.name) provider cannot do suite '\(suite.id)'\(suite.optionText): \(reason). \(alternatives)"
        )
    }
}

extension Suite {
    var optionText: String {
        if let bits = self.rsaBits { return " with \(bits)-bit RSA" }
        return ""
    }
}

enum SuiteCatalog {
    static func checkRSABits(_ bits: Int, allowed: [Int], suite: String) throws {
        guard allowed.contains(bits) else {
            let list = allowed.map(String.init).joined(separator: ", ")
            throw LabError(.invalidScenario, "Suite '\(suite)' allows rsaBits \(list); got \(bits)")
        }
    }

    static func requireNoRSA(_ options: SuiteOptions, suite: String) throws {
        if let bits = options.rsaBits {
            throw LabError(.invalidScenario, "Suite '\(suite)' uses no RSA; remove rsaBits (\(bits))")
        }
    }
}
