public import LabCore

/// Why a cx/1 client rejected an answer that arrived whole and decoded (docs/protocol.md
/// §2): each check of the exchange has its own code, by which results count the failed
/// iterations. cx/1's own, beside `LabError`'s transport and decoding codes, as msg/1 has
/// `MsgVerdict`.
public struct CXVerdict: CodedError {
    /// Which check failed.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The wrapped session key (`cryptoK`) did not unwrap.
        case unwrapFailed
        /// The message (`cryptoM`) did not decrypt, or its tag did not authenticate.
        case decryptFailed
        /// `crypto7` said there was PKCS#7 padding and there was none (or the reverse).
        case paddingInvalid
        /// The signature (`cryptoS`) did not verify over the decrypted message.
        case signatureInvalid
        /// Everything verified, but the plaintext is not the expected payload.
        case payloadMismatch
    }

    /// Which check failed.
    public var code: Code
    /// What failed, for people.
    public var message: String
    /// The provider's error, if one caused it.
    public var cause: (any Error & Sendable)?

    /// A verdict.
    public init(_ code: Code, _ message: String, cause: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    /// The code's name, e.g. `signatureInvalid`.
    public var codeName: String { self.code.rawValue }

    /// `code: message (cause)`, as `LabError` writes it.
    public var description: String {
        "\(self.code.rawValue): \(self.message)" + (self.cause.map { " (cause: \($0))" } ?? "")
    }
}
