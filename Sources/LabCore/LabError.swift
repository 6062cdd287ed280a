/// The one public error of the lab: what failed, how to fix it, and what caused it.
///
/// Modelled on swift-nio's `FileSystemError` and swift-service-lifecycle's
/// `ServiceGroupError`: a small `code` to switch on, a `message` for people, the
/// underlying `cause` (an OpenSSL error string, a swift-crypto error, …) and where it
/// was thrown.
public struct LabError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is; stable across releases, suitable for `switch`.
    public var code: Code
    /// What failed and, where there is one, how to fix it.
    public var message: String
    /// The underlying error, if any.
    public var cause: (any Error & Sendable)?
    /// `#fileID:#line` of the throw site.
    public var location: String

    /// Makes an error; `location` defaults to the caller's file and line.
    public init(
        _ code: Code,
        _ message: String,
        cause: (any Error & Sendable)? = nil,
        fileID: String = #fileID,
        line: Int = #line
    ) {
        self.code = code
        self.message = message
        self.cause = cause
        self.location = "\(fileID):\(line)"
    }

    /// `code: message (cause)`.
    public var description: String {
        var text = "\(self.code): \(self.message)"
        if let cause = self.cause {
            text += " (cause: \(cause))"
        }
        return text
    }
}

extension LabError {
    /// A kind of failure. A struct over a private enum so that new codes are not a breaking change.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case invalidScenario
            case unknownPlugin
            case unsupported
            case handshakeFailed
            case pinMismatch
            case discoveryTimeout
            case discoveryFailed
            case connectFailed
            case connectionClosed
            case timedOut
            case storage
            case frameTooLarge
            case emptyFrame
            case truncatedFrame
            case malformedMessage
            case badPublicKey
            case unknownSuite
            case serverError
            case cryptoFailure
            case unreadableFile
            case busy
        }

        private let base: Base

        private init(_ base: Base) {
            self.base = base
        }

        /// The code's name, e.g. `signatureInvalid`.
        public var description: String { self.base.rawValue }

        /// A scenario file or flag is wrong; the message names the JSON path.
        /// The server is at a limit it states (connections, password checks, buffered
        /// bytes): try again later.
        public static let busy = Code(.busy)
        public static let invalidScenario = Code(.invalidScenario)
        /// A scenario or the CLI named a plugin that is not registered.
        public static let unknownPlugin = Code(.unknownPlugin)
        /// A provider cannot do what was asked (a suite, a key size); the message says who can.
        public static let unsupported = Code(.unsupported)
        /// A transport or cx/1 handshake could not complete.
        public static let handshakeFailed = Code(.handshakeFailed)
        /// A TLS peer presented a certificate other than the pinned one.
        public static let pinMismatch = Code(.pinMismatch)
        /// DNS-SD found nothing before its deadline.
        public static let discoveryTimeout = Code(.discoveryTimeout)
        /// DNS-SD could not run: the daemon is not reachable, or it refused a call.
        public static let discoveryFailed = Code(.discoveryFailed)
        /// A connection to the server could not be opened.
        public static let connectFailed = Code(.connectFailed)
        /// The peer closed the connection before a whole answer arrived.
        public static let connectionClosed = Code(.connectionClosed)
        /// A peer did not answer or send in time.
        public static let timedOut = Code(.timedOut)
        /// The messaging store failed.
        public static let storage = Code(.storage)
        /// A frame's length is over the limit; the connection ends before the body is read.
        public static let frameTooLarge = Code(.frameTooLarge)
        /// A frame's length is zero.
        public static let emptyFrame = Code(.emptyFrame)
        /// The bytes ended in the middle of a frame.
        public static let truncatedFrame = Code(.truncatedFrame)
        /// A frame's body is not a property list of the expected shape.
        public static let malformedMessage = Code(.malformedMessage)
        /// A public key could not be parsed or is of a size the suite does not allow.
        public static let badPublicKey = Code(.badPublicKey)
        /// A request named a suite the lab does not know.
        public static let unknownSuite = Code(.unknownSuite)
        /// The server answered with an `error` dictionary.
        public static let serverError = Code(.serverError)
        /// A crypto backend failed for another reason; `cause` holds its own error.
        public static let cryptoFailure = Code(.cryptoFailure)
        /// A file given as input (a scenario, a results.json) cannot be read; the message says
        /// why: it does not exist, it is a folder, or it may not be read.
        public static let unreadableFile = Code(.unreadableFile)
    }
}

/// An error that a failed iteration is counted by, under a stable name: `LabError`'s codes
/// (`timedOut`, `connectionClosed`, …) and each protocol's own verdicts on an answer that
/// arrived whole but did not check out (cx/1's `CXVerdict` in LabCX, msg/1's
/// `MsgVerdict` in LabMessaging). An iteration that fails with any other error counts as
/// `other`.
public protocol CodedError: Error, Sendable, CustomStringConvertible {
    /// The name results count the failure by, e.g. `signatureInvalid`.
    var codeName: String { get }
    /// What failed, for people.
    var message: String { get }
}

extension LabError: CodedError {
    /// The code's name.
    public var codeName: String { self.code.description }
}

/// A foreign error kept as text: for causes that are not `Sendable` or have no type of their
/// own (an OpenSSL error queue, a Foundation error).
public struct UnderlyingError: Error, Sendable, CustomStringConvertible {
    /// The error's text.
    public var description: String

    /// Wraps a text.
    public init(_ description: String) {
        self.description = description
    }

    /// Keeps `error`'s description.
    public init(describing error: any Error) {
        self.description = String(describing: error)
    }
}
