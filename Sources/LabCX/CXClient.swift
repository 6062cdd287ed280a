public import LabCore
import LabWire

/// How a `CXClient` is set up.
public struct CXClientOptions: Sendable {
    /// The suite asked for.
    public var suite: any Suite
    /// Send the bare PKCS#1 key, as the 2009 client did (`classic` only).
    public var legacy: Bool
    /// When the client makes its key pair.
    public var keyLifetime: KeyLifetime
    /// The plaintext the exchange must deliver.
    public var expectedPayload: [UInt8]

    /// Options; by default the key lives for the run and the payload is the 2009 text.
    public init(
        suite: any Suite,
        legacy: Bool = false,
        keyLifetime: KeyLifetime = .perRun,
        expectedPayload: [UInt8] = Payload.standard
    ) {
        self.suite = suite
        self.legacy = legacy
        self.keyLifetime = keyLifetime
        self.expectedPayload = expectedPayload
    }
}

/// The client side of cx/1 over one provider: makes request bodies, opens response bodies.
public struct CXClient<P: CryptoProvider>: Sendable {
    /// The provider doing the crypto.
    public let provider: P
    /// How the client was set up.
    public let options: CXClientOptions
    /// The client's current private key (a lab may look inside its own exchange).
    public private(set) var privateKey: P.PrivateKey
    private var publicKey: [UInt8]
    /// The modulus size of the client's key, for RSA suites: the server's key must match it.
    private var rsaBits: Int?
    private var usedKey = false

    /// Checks the suite against the provider and makes the client's key pair (`keygen.client`).
    public init(
        provider: P,
        options: CXClientOptions,
        others: [any CryptoProvider] = [],
        recorder: inout some StepRecorder
    ) throws {
        if options.legacy, options.suite.id != ClassicSuite.id {
            throw LabError(
                .invalidScenario,
                "A legacy request selects 'classic'; suite '\(options.suite.id)' cannot be sent that way"
            )
        }
        try SuiteRegistry.requireSupport(options.suite, by: provider, others: others)
        self.provider = provider
        self.options = options
        (self.privateKey, self.publicKey, self.rsaBits) = try Self.makeKey(
            options.suite,
            lifetime: options.keyLifetime,
            provider: provider,
            recorder: &recorder
        )
    }

    /// The client's encoded public key (`cryptoP`).
    public var encodedPublicKey: [UInt8] { self.publicKey }

    /// The next request body; with a per-exchange key lifetime, makes a fresh key first.
    public mutating func makeRequest(recorder: inout some StepRecorder) throws -> [UInt8] {
        if self.options.keyLifetime == .perExchange, self.usedKey {
            (self.privateKey, self.publicKey, self.rsaBits) = try Self.makeKey(
                self.options.suite,
                lifetime: .perExchange,
                provider: self.provider,
                recorder: &recorder
            )
        }
        self.usedKey = true
        let request = CXRequest(suite: self.options.suite.id, clientKey: self.publicKey, isLegacy: self.options.legacy)
        return try recorder.measure(.encode) { try request.encoded() }
    }

    /// Opens a reply body: unwraps, decrypts, verifies and checks the payload; returns the plaintext.
    public func open(_ body: [UInt8], recorder: inout some StepRecorder) throws -> [UInt8] {
        let suite = self.options.suite
        let reply = try recorder.measure(.decode) { try CXReply(decoding: body) }
        let response: CXResponse
        switch reply {
        case .error(let error):
            throw LabError(.serverError, "The server answered \(error.code.rawValue): \(error.message)")
        case .response(let answer):
            response = answer
        }
        let expectedEcho: String? = self.options.legacy ? nil : suite.id
        if response.suite != expectedEcho {
            throw LabError(
                .malformedMessage,
                "The response's suite is \(response.suite.map { "'\($0)'" } ?? "absent"); expected \(expectedEcho.map { "'\($0)'" } ?? "none")"
            )
        }
        // Checked before any RSA operation; verify checks again with the provider's parse.
        try self.checkServerKeySize(RSAKeys.modulusBits(response.serverKey))
        let sessionKey = try Self.step(.unwrap, failure: .unwrapFailed, recorder: &recorder) {
            try suite.unwrap(
                response.wrappedKey,
                privateKey: self.privateKey,
                publicKey: self.publicKey,
                provider: self.provider
            )
        }
        guard sessionKey.count == suite.sessionKeyBytes else {
            throw CXVerdict(
                .unwrapFailed,
                "The unwrapped session key has \(sessionKey.count) bytes; \(suite.id) uses \(suite.sessionKeyBytes)"
            )
        }
        let sealed = SealedMessage(ciphertext: response.message, padded: response.padded, nonce: response.nonce)
        let plaintext = try Self.step(.decrypt, failure: .decryptFailed, recorder: &recorder) {
            try suite.open(sealed, key: sessionKey, provider: self.provider)
        }
        let valid = try Self.step(.verify, failure: .signatureInvalid, recorder: &recorder) {
            let serverKey = try self.provider.decodePublicKey(response.serverKey, type: suite.serverKey.type)
            try self.checkServerKeySize(self.provider.rsaBits(of: serverKey))
            return try self.provider.isValidSignature(
                response.signature,
                for: plaintext,
                publicKey: serverKey,
                scheme: suite.signature
            )
        }
        guard valid else {
            throw CXVerdict(
                .signatureInvalid,
                "The server's \(suite.signature) signature does not verify over the decrypted message"
            )
        }
        guard plaintext == self.options.expectedPayload else {
            throw CXVerdict(
                .payloadMismatch,
                "The decrypted message (\(plaintext.count) bytes) is not the expected payload (\(self.options.expectedPayload.count) bytes)"
            )
        }
        return plaintext
    }

    /// Refuses a server RSA key whose size is not this client's (docs/protocol.md §2.4: "RSA, same
    /// encoding and size"); nil (not RSA, or not parsed) passes, for the provider to judge.
    private func checkServerKeySize(_ serverBits: Int?) throws {
        guard let own = self.rsaBits, let serverBits, serverBits != own else { return }
        throw LabError(
            .badPublicKey,
            "The server's RSA key has \(serverBits) bits, but this client's has \(own): \(self.options.suite.id) uses one size for both"
        )
    }

    /// Runs a timed step; a backend failure inside it becomes the step's own error code.
    private static func step<T>(
        _ step: Step,
        failure: CXVerdict.Code,
        recorder: inout some StepRecorder,
        _ body: () throws -> T
    ) throws -> T {
        do {
            return try recorder.measure(step, body)
        } catch let error as LabError where error.code == .cryptoFailure {
            throw CXVerdict(failure, "\(step) failed: \(error.message)", cause: error)
        }
    }

    private static func makeKey(
        _ suite: any Suite,
        lifetime: KeyLifetime,
        provider: P,
        recorder: inout some StepRecorder
    ) throws -> (P.PrivateKey, [UInt8], Int?) {
        try recorder.measure(.keygenClient) {
            let key = try FixedKeys.key(suite.clientKey, fixed: lifetime == .fixed, provider: provider)
            let publicKey = try provider.publicKey(for: key)
            return (key, try provider.encode(publicKey), provider.rsaBits(of: publicKey))
        }
    }
}
