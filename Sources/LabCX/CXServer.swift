public import LabCore
import LabWire
import Synchronization

/// How a `CXServer` is set up.
public struct CXServerOptions: Sendable {
    /// The suites offered; a request for another is answered `unsupported` (or `unknownSuite`).
    public var suites: [any Suite]
    /// When the server makes its signing keys.
    public var keyLifetime: KeyLifetime
    /// The message every exchange carries.
    public var payload: [UInt8]

    /// Options; by default every key lives for the run and the payload is the 2009 text.
    public init(suites: [any Suite], keyLifetime: KeyLifetime = .perRun, payload: [UInt8] = Payload.standard) {
        self.suites = suites
        self.keyLifetime = keyLifetime
        self.payload = payload
    }
}

/// What the server sends back for one request, and whether it then closes the connection.
public struct CXServerAnswer: Sendable {
    /// The response (or error) frame body.
    public var body: [UInt8]
    /// The error answered, if any: the connection closes after it and the reason is logged.
    public var error: CXErrorReply?
    /// The suite the request asked for, once it could be read, if the lab knows its name.
    public var suite: String? = nil
}

/// The server side of cx/1 over one provider: answers request bodies with response bodies.
///
/// Transport-free and `Sendable`: one server value serves every connection; each call
/// records its steps into the caller's recorder. The only state connections share is the
/// per-run signing keys (`ServerKeys`, behind locks).
///
/// An RSA suite's server key has the client key's size (docs/protocol.md §2.4): with per-run
/// keys, the size the suite was made with is made at start and any other size the suite
/// allows on first use, then kept for the run; with per-exchange keys, every exchange makes
/// one of the client's size.
public struct CXServer<P: CryptoProvider>: Sendable {
    /// The provider doing the crypto.
    public let provider: P
    /// How the server was set up.
    public let options: CXServerOptions
    private let suites: [String: any Suite]
    private let keys: ServerKeys
    /// The per-run keys made at start, read without a lock: every exchange of a configured
    /// size finds its key here; only other sizes go to `keys`.
    private let madeKeys: [ServerKeys.ID: ServerKey]
    private let knownSuites: Set<String>

    struct ServerKey: Sendable {
        let privateKey: P.PrivateKey
        let encodedPublicKey: [UInt8]
    }

    /// The per-run signing keys, one per suite and key spec (for an RSA suite, one per size).
    ///
    /// Each key has a slot with its own lock, held while the key is made: concurrent first
    /// requests for one size make it once (the others wait for it), and requests for keys
    /// already made, or for other sizes, never wait for a key generation.
    final class ServerKeys: Sendable {
        struct ID: Hashable, Sendable {
            let suite: String
            let spec: KeySpec
        }

        final class Slot: Sendable {
            let key = Mutex<ServerKey?>(nil)
        }

        private let slots = Mutex<[ID: Slot]>([:])

        /// The key for `id`, made by `make` if it has not been yet (a failed `make` leaves it unmade).
        func key(_ id: ID, orMake make: () throws -> ServerKey) throws -> ServerKey {
            let slot = self.slots.withLock { slots in
                if let slot = slots[id] { return slot }
                let slot = Slot()
                slots[id] = slot
                return slot
            }
            return try slot.key.withLock { key in
                if let key { return key }
                let made = try make()
                key = made
                return made
            }
        }
    }

    /// Checks every suite against the provider and makes the per-run signing keys of the
    /// configured sizes (`keygen.server`). `knownSuites`: every suite id the catalog knows, so
    /// that a request for one not offered is answered as such (nil: the offered ones).
    public init(
        provider: P,
        options: CXServerOptions,
        others: [any CryptoProvider] = [],
        knownSuites: [String]? = nil,
        recorder: inout some StepRecorder
    ) throws {
        var suites: [String: any Suite] = [:]
        let keys = ServerKeys()
        var madeKeys: [ServerKeys.ID: ServerKey] = [:]
        for suite in options.suites {
            try SuiteRegistry.requireSupport(suite, by: provider, others: others)
            suites[suite.id] = suite
            if options.keyLifetime.isKeptForRun {
                let id = ServerKeys.ID(suite: suite.id, spec: suite.serverKey)
                madeKeys[id] = try keys.key(id) {
                    try Self.makeKey(suite.serverKey, lifetime: options.keyLifetime, provider: provider, recorder: &recorder)
                }
            }
        }
        self.provider = provider
        self.options = options
        self.suites = suites
        self.keys = keys
        self.madeKeys = madeKeys
        self.knownSuites = Set(knownSuites ?? options.suites.map(\.id))
    }

    /// Answers one request body. Never throws: every failure becomes an error answer.
    public func respond(to body: [UInt8], recorder: inout some StepRecorder) -> CXServerAnswer {
        var suite: String? = nil
        do {
            return CXServerAnswer(
                body: try self.answer(body, recorder: &recorder, suite: &suite),
                error: nil,
                suite: suite
            )
        } catch let reply as CXErrorReply {
            return CXServerAnswer(body: (try? reply.encoded()) ?? [], error: reply, suite: suite)
        } catch {
            // Only the message goes on the wire; the cause (backend error text) stays in the server's log.
            let reply = CXErrorReply(code: .badRequest, message: Self.text(error))
            return CXServerAnswer(body: (try? reply.encoded()) ?? [], error: reply, suite: suite)
        }
    }

    private func answer(
        _ body: [UInt8],
        recorder: inout some StepRecorder,
        suite requested: inout String?
    ) throws
        -> [UInt8]
    {
        let request: CXRequest
        do {
            request = try recorder.measure(.decode) { try CXRequest(decoding: body) }
        } catch {
            throw CXErrorReply(code: .badRequest, message: Self.text(error))
        }
        // Only a name the lab knows becomes the answer's suite (a group in the server's
        // recording, kept for the server's life): a peer's made-up names would grow it forever.
        if self.knownSuites.contains(request.suite) { requested = request.suite }
        guard let suite = self.suites[request.suite] else {
            if self.knownSuites.contains(request.suite) {
                let offered = self.suites.keys.sorted().joined(separator: ", ")
                throw CXErrorReply(code: .unsupported, message: "This server offers \(offered), not '\(request.suite)'")
            }
            throw CXErrorReply(code: .unknownSuite, message: "No suite named '\(request.suite.prefix(64))'")
        }
        let sessionKey = try recorder.measure(.keygenSession) {
            try self.provider.randomBytes(count: suite.sessionKeyBytes)
        }
        let wrapped: [UInt8]
        do {
            wrapped = try recorder.measure(.wrap) {
                try suite.wrap(sessionKey, forClientKey: request.clientKey, provider: self.provider)
            }
        } catch let error as LabError where error.code == .badPublicKey || error.code == .cryptoFailure {
            // The client's key is wrap's only untrusted input: a key that parses but cannot
            // be used (an even RSA modulus, say) is as bad as one that does not parse.
            throw CXErrorReply(code: .badPublicKey, message: error.message)
        } catch let error as LabError where error.code == .unsupported {
            // A good key of a size this provider cannot use (swift-crypto and RSA-512).
            throw CXErrorReply(code: .unsupported, message: error.message)
        }
        // After wrap, so that a client key the server refuses never costs a key generation.
        let serverKey = try self.serverKey(suite, forClientKey: request.clientKey, recorder: &recorder)
        let payload = self.options.payload
        let sealed = try recorder.measure(.encrypt) {
            try suite.seal(payload, key: sessionKey, provider: self.provider)
        }
        let signature = try recorder.measure(.sign) {
            try self.provider.sign(payload, with: serverKey.privateKey, scheme: suite.signature)
        }
        let response = CXResponse(
            suite: request.isLegacy ? nil : suite.id,
            serverKey: serverKey.encodedPublicKey,
            message: sealed.ciphertext,
            padded: sealed.padded,
            signature: signature,
            wrappedKey: wrapped,
            nonce: sealed.nonce
        )
        return try recorder.measure(.encode) { try response.encoded() }
    }

    /// The signing key answering `clientKey`: kept for the run, made on first use, or fresh.
    private func serverKey(
        _ suite: any Suite,
        forClientKey clientKey: [UInt8],
        recorder: inout some StepRecorder
    ) throws -> ServerKey {
        let spec: KeySpec
        do {
            spec = try suite.serverKey(forClientKey: clientKey)
        } catch let error as LabError where error.code == .badPublicKey {
            throw CXErrorReply(code: .badPublicKey, message: error.message)
        }
        do {
            let lifetime = self.options.keyLifetime
            guard lifetime.isKeptForRun else {
                return try Self.makeKey(spec, lifetime: lifetime, provider: self.provider, recorder: &recorder)
            }
            let id = ServerKeys.ID(suite: suite.id, spec: spec)
            if let key = self.madeKeys[id] { return key }
            return try self.keys.key(id) {
                try Self.makeKey(spec, lifetime: lifetime, provider: self.provider, recorder: &recorder)
            }
        } catch let error as LabError where error.code == .unsupported {
            throw CXErrorReply(code: .unsupported, message: error.message)
        }
    }

    private static func makeKey(
        _ spec: KeySpec,
        lifetime: KeyLifetime,
        provider: P,
        recorder: inout some StepRecorder
    ) throws -> ServerKey {
        // A fixed key is decoded, not made, but timed under the same step: it is set-up either way.
        try recorder.measure(.keygenServer) {
            let key = try FixedKeys.key(spec, fixed: lifetime == .fixed, provider: provider)
            return ServerKey(privateKey: key, encodedPublicKey: try provider.encode(try provider.publicKey(for: key)))
        }
    }

    private static func text(_ error: any Error) -> String {
        (error as? LabError)?.message ?? "\(error)"
    }
}
