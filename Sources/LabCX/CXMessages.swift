import LabCore
import LabWire

/// A cx/1 request (docs/protocol.md §2.1), or the 2009 client's raw key (§2.2).
public struct CXRequest: Sendable, Equatable {
    /// The suite id (`classic` for a legacy request).
    public var suite: String
    /// The client's public key, encoded as the suite says.
    public var clientKey: [UInt8]
    /// Whether the body is the bare PKCS#1 key of the 2009 client.
    public var isLegacy: Bool

    /// A request.
    public init(suite: String, clientKey: [UInt8], isLegacy: Bool = false) {
        self.suite = suite
        self.clientKey = clientKey
        self.isLegacy = isLegacy
    }

    /// The frame body.
    public func encoded() throws -> [UInt8] {
        if self.isLegacy {
            return self.clientKey
        }
        var plist = PropertyListDictionary()
        plist.set(CXKey.suite, string: self.suite)
        plist.set(CXKey.publicKey, data: self.clientKey)
        return try plist.encoded()
    }

    /// Parses a frame body: a plist request, or a legacy raw key (selecting `classic`).
    public init(decoding body: [UInt8]) throws {
        guard body.starts(with: PropertyListDictionary.magic) else {
            self.init(suite: CXKey.legacySuite, clientKey: body, isLegacy: true)
            return
        }
        let plist = try PropertyListDictionary(decoding: body)
        self.init(suite: try plist.string(CXKey.suite), clientKey: try plist.data(CXKey.publicKey))
    }
}

/// A cx/1 response (docs/protocol.md §2.3).
public struct CXResponse: Sendable, Equatable {
    /// The echoed suite id; nil in an answer to a legacy request.
    public var suite: String?
    /// The server's signature-verification public key (`cryptoP`).
    public var serverKey: [UInt8]
    /// The encrypted message (`cryptoM`).
    public var message: [UInt8]
    /// Whether PKCS#7 padding was applied (`crypto7`, written as the integer 1 or 0).
    public var padded: Bool
    /// The signature over the plaintext (`cryptoS`).
    public var signature: [UInt8]
    /// The wrapped session key (`cryptoK`).
    public var wrappedKey: [UInt8]
    /// The AEAD nonce (`cryptoN`); nil for `classic`.
    public var nonce: [UInt8]?

    /// A response.
    public init(
        suite: String?,
        serverKey: [UInt8],
        message: [UInt8],
        padded: Bool,
        signature: [UInt8],
        wrappedKey: [UInt8],
        nonce: [UInt8]?
    ) {
        self.suite = suite
        self.serverKey = serverKey
        self.message = message
        self.padded = padded
        self.signature = signature
        self.wrappedKey = wrappedKey
        self.nonce = nonce
    }

    /// The frame body.
    public func encoded() throws -> [UInt8] {
        var plist = PropertyListDictionary()
        if let suite = self.suite {
            plist.set(CXKey.suite, string: suite)
        }
        plist.set(CXKey.publicKey, data: self.serverKey)
        plist.set(CXKey.message, data: self.message)
        plist.set(CXKey.padding, integer: self.padded ? 1 : 0)
        plist.set(CXKey.signature, data: self.signature)
        plist.set(CXKey.wrappedKey, data: self.wrappedKey)
        if let nonce = self.nonce {
            plist.set(CXKey.nonce, data: nonce)
        }
        return try plist.encoded()
    }

    init(_ plist: PropertyListDictionary) throws {
        let flag = try plist.integer(CXKey.padding)
        guard flag == 0 || flag == 1 else {
            throw LabError(.malformedMessage, "The key 'crypto7' holds \(flag); expected the integer 0 or 1")
        }
        self.init(
            suite: try plist.optionalString(CXKey.suite),
            serverKey: try plist.data(CXKey.publicKey),
            message: try plist.data(CXKey.message),
            padded: flag == 1,
            signature: try plist.data(CXKey.signature),
            wrappedKey: try plist.data(CXKey.wrappedKey),
            nonce: try plist.optionalData(CXKey.nonce)
        )
    }
}

/// The error codes a cx/1 server answers with (docs/protocol.md §2.3).
public enum CXErrorCode: String, Sendable, CaseIterable {
    case unknownSuite
    case badPublicKey
    case badRequest
    case unsupported
    case busy
}

/// A server's error answer: `{ error, message }`, after which it closes.
public struct CXErrorReply: Sendable, Equatable, Error {
    /// The code (an unknown code is kept as `badRequest` with the text preserved in `message`).
    public var code: CXErrorCode
    /// Human-readable text.
    public var message: String

    /// An error answer.
    public init(code: CXErrorCode, message: String) {
        self.code = code
        self.message = message
    }

    /// The frame body.
    public func encoded() throws -> [UInt8] {
        var plist = PropertyListDictionary()
        plist.set(CXKey.error, string: self.code.rawValue)
        plist.set(CXKey.errorMessage, string: self.message)
        return try plist.encoded()
    }
}

/// What a server may answer: a response or an error.
public enum CXReply: Sendable, Equatable {
    /// A successful exchange's response.
    case response(CXResponse)
    /// An error answer.
    case error(CXErrorReply)

    /// Parses a frame body from the server.
    public init(decoding body: [UInt8]) throws {
        #if LAB_GATE_PROBE
        if let input = GateProbe.input(at: .wireDecode) { GateProbe.keep(UInt64(GateProbe.adler32(input))) }
        #endif
        let plist = try PropertyListDictionary(decoding: body)
        if let code = try plist.optionalString(CXKey.error) {
            let text = try plist.optionalString(CXKey.errorMessage) ?? ""
            if let known = CXErrorCode(rawValue: code) {
                self = .error(CXErrorReply(code: known, message: text))
            } else {
                self = .error(CXErrorReply(code: .badRequest, message: "[\(code)] \(text)"))
            }
            return
        }
        self = .response(try CXResponse(plist))
    }

    /// The frame body.
    public func encoded() throws -> [UInt8] {
        switch self {
        case .response(let response): try response.encoded()
        case .error(let error): try error.encoded()
        }
    }
}

/// The dictionary keys of cx/1, as in the 2009 sample.
public enum CXKey {
    public static let suite = "suite"
    public static let publicKey = "cryptoP"
    public static let message = "cryptoM"
    public static let padding = "crypto7"
    public static let signature = "cryptoS"
    public static let wrappedKey = "cryptoK"
    public static let nonce = "cryptoN"
    public static let error = "error"
    public static let errorMessage = "message"
    /// The suite a legacy (raw key) request selects.
    public static let legacySuite = "classic"
}
