/// An algorithm set for cx/1 (docs/protocol.md §2.4), written once over `CryptoProvider`.
///
/// A suite says which keys the two sides make and how the session key is wrapped and the
/// message sealed; `CXServer` and `CXClient` drive the exchange around it.
public protocol Suite: Sendable {
    /// The id on the wire and in scenarios, e.g. `"x25519"`.
    static var id: String { get }
    /// Makes the suite from its scenario options; throws `.invalidScenario` for bad ones.
    init(options: SuiteOptions) throws
    /// Whether reports must mark this suite insecure (it is kept for fidelity only).
    var isInsecure: Bool { get }
    /// The key each client makes; its public half is the request's `cryptoP`.
    var clientKey: KeySpec { get }
    /// The server's signing key; its public half is the response's `cryptoP`.
    var serverKey: KeySpec { get }
    /// The length of the fresh per-exchange session key.
    var sessionKeyBytes: Int { get }
    /// How the server signs the plaintext.
    var signature: SignatureScheme { get }
    /// The primitives a provider needs for this suite.
    var primitives: Set<Primitive> { get }

    /// Server: checks the client's encoded public key and wraps `sessionKey` for it (`cryptoK`).
    func wrap<P: CryptoProvider>(_ sessionKey: [UInt8], forClientKey clientKey: [UInt8], provider: P) throws -> [UInt8]
    /// Server: the signing key to answer the client key `clientKey` (which `wrap` accepted) with.
    ///
    /// `serverKey` by default; an RSA suite answers with a key of the client key's size
    /// (docs/protocol.md §2.4, "RSA, same encoding and size"). Throws `.badPublicKey` for a key
    /// the suite does not allow.
    func serverKey(forClientKey clientKey: [UInt8]) throws -> KeySpec
    /// Client: recovers the session key from `cryptoK` with its own key pair.
    func unwrap<P: CryptoProvider>(
        _ wrapped: [UInt8],
        privateKey: P.PrivateKey,
        publicKey: [UInt8],
        provider: P
    ) throws -> [UInt8]
    /// Server: encrypts the message under the session key.
    func seal<P: CryptoProvider>(_ message: [UInt8], key: [UInt8], provider: P) throws -> SealedMessage
    /// Client: decrypts `sealed` under the session key.
    func open<P: CryptoProvider>(_ sealed: SealedMessage, key: [UInt8], provider: P) throws -> [UInt8]
}

extension Suite {
    /// The suite's id, from an instance.
    public var id: String { Self.id }

    /// The RSA modulus size this suite asks of a provider, if it uses RSA.
    public var rsaBits: Int? {
        if case .rsa(let bits, _) = self.serverKey { return bits }
        if case .rsa(let bits, _) = self.clientKey { return bits }
        return nil
    }

    /// The suite's own `serverKey`, whatever the client's key.
    public func serverKey(forClientKey clientKey: [UInt8]) throws -> KeySpec { self.serverKey }

    /// Nil if `provider` can do this suite, else why not, in a phrase.
    public func unsupportedReason(on provider: some CryptoProvider) -> String? {
        provider.capabilities.missing(self.primitives.sorted { $0.rawValue < $1.rawValue }, rsaBits: self.rsaBits)
    }
}

/// `cryptoM` with what travels beside it.
public struct SealedMessage: Sendable, Equatable {
    /// The ciphertext (with the AEAD tag appended, for AEAD suites).
    public var ciphertext: [UInt8]
    /// Whether PKCS#7 padding was applied (`crypto7`).
    public var padded: Bool
    /// The AEAD nonce (`cryptoN`), nil for `classic`.
    public var nonce: [UInt8]?

    /// A sealed message.
    public init(ciphertext: [UInt8], padded: Bool, nonce: [UInt8]?) {
        self.ciphertext = ciphertext
        self.padded = padded
        self.nonce = nonce
    }
}

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
    /// " with N-bit RSA" for an RSA suite, else nothing.
    public var optionText: String {
        if let bits = self.rsaBits { return " with \(bits)-bit RSA" }
        return ""
    }
}

/// Checks a suite's `init(options:)` makes; for suites inside and outside the lab.
public enum SuiteCatalog {
    /// Throws `.invalidScenario` unless `bits` is one of `allowed`.
    public static func checkRSABits(_ bits: Int, allowed: [Int], suite: String) throws {
        guard allowed.contains(bits) else {
            let list = allowed.map(String.init).joined(separator: ", ")
            throw LabError(.invalidScenario, "Suite '\(suite)' allows rsaBits \(list); got \(bits)")
        }
    }

    /// Throws `.invalidScenario` when `options` sets `rsaBits` for a suite without RSA.
    public static func requireNoRSA(_ options: SuiteOptions, suite: String) throws {
        if let bits = options.rsaBits {
            throw LabError(.invalidScenario, "Suite '\(suite)' uses no RSA; remove rsaBits (\(bits))")
        }
    }
}
