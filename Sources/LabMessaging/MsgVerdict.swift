public import LabCore

/// Why the lab's msg/1 client rejected what the service sent back: a chat key or a message
/// that does not open, or a history that is not what was sent. Counted by its code, like
/// cx/1's `CXVerdict`; the service's own error answers are `MsgFailure`.
public struct MsgVerdict: CodedError {
    /// Which check failed.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// A wrapped chat key did not open with the user's key.
        case unwrapFailed
        /// A message did not decrypt under the chat key, or is under another key version.
        case decryptFailed
        /// A message or a history is not what was sent.
        case payloadMismatch
    }

    /// Which check failed.
    public var code: Code
    /// What failed, for people.
    public var message: String

    /// A verdict.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The code's name, e.g. `decryptFailed`.
    public var codeName: String { self.code.rawValue }

    /// `code: message`.
    public var description: String { "\(self.code.rawValue): \(self.message)" }
}
