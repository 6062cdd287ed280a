public import LabCore

/// msg/1's service as a server runs it: what `lab serve`'s msg/1 options come down to.
public struct MessagingSettings: Sendable {
    /// The KDF, policy, captchas and password-check pool.
    public var options: MessagingOptions
    /// The time its policies wait in.
    public var clock: ClockKind
    /// The SQLite file of its accounts and chats.
    public var store: String

    /// Settings.
    public init(options: MessagingOptions = MessagingOptions(), clock: ClockKind = .system, store: String) {
        self.options = options
        self.clock = clock
        self.store = store
    }
}

/// The key of msg/1's settings in a server's `ServingSetup.settings`: unset, msg/1 is not
/// served (`lab serve --no-messaging`).
public enum MessagingServing: PluginExtensionKey {
    public static let defaultValue: MessagingSettings? = nil
}

/// msg/1 as a served protocol (docs/messaging.md): accounts, logins and chats in a SQLite
/// store. It takes every property-list request whose `op` no other protocol names, and
/// answers an op it does not know with its own `badRequest`.
public enum MessagingProtocol: ServedProtocol {
    public static let name = "msg/1"
    public static let summary = "the messaging service: accounts, lockouts, captchas, end-to-end encrypted chats"
    public static let requests = ServedRequests.otherOps

    /// The service `setup.settings[MessagingServing.self]` describes, on the catalog's msg/1
    /// kinds, answers bounded by the transport's limits; nil without settings.
    public static func handler<R: StepRecorder>(for setup: ServingSetup, recorder: inout R) throws -> (any FrameHandler)? {
        guard let settings = setup.settings[MessagingServing.self] else { return nil }
        return MessagingService(
            store: try MessagingStore(path: settings.store),
            options: settings.options,
            kinds: setup.extensions[MessagingKinds.self],
            clock: settings.clock.make(),
            maxAnswerBytes: setup.options.maxFrameBytes,
            maxPagesBytes: setup.options.maxBufferedBytes
        )
    }
}
