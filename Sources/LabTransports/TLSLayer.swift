public import LabCore
public import Logging
public import NIOCore
import NIOSSL
import NIOTLS

/// TLS under a socket transport's frames, server side (swift-nio-ssl): the identity, the
/// groups offered and the version spoken.
public struct TLSServerLayer: ServerChannelLayer {
    let context: NIOSSLContext

    /// The TLS 1.2 suites a server accepts: forward-secret AEAD ones.
    static let tls12CipherSuites = [
        "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384",
        "ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305",
    ].joined(separator: ":")

    /// TLS presenting `identity`, offering `groups` and speaking `version` (nil: the
    /// library's choices). TLS 1.2 with AEAD suites only (TLS 1.3 has no others): no CBC, no
    /// RSA key exchange, as Mozilla's "intermediate" profile; BoringSSL's default took
    /// ECDHE-ECDSA-AES128-SHA.
    public init(identity: TLSIdentity, groups: [TLSGroup]? = nil, version: TLSVersionChoice? = nil) throws {
        do {
            var tls = TLSConfiguration.makeServerConfiguration(
                certificateChain: identity.chain.map { .certificate($0) },
                privateKey: .privateKey(identity.privateKey)
            )
            tls.restrict(groups: groups, version: version)
            tls.cipherSuites = Self.tls12CipherSuites
            self.context = try NIOSSLContext(configuration: tls)
        } catch {
            throw LabError(
                .handshakeFailed,
                "Cannot set up TLS with the server's certificate and key",
                cause: UnderlyingError(describing: error)
            )
        }
    }

    /// `tls`.
    public var name: String { "tls" }

    public func addHandlers(to pipeline: ChannelPipeline.SynchronousOperations) throws {
        try pipeline.addHandler(NIOSSLServerHandler(context: self.context))
    }

    /// TLS failures, handshakes and records after them alike, for the log's rate.
    static let failures = OccasionalLog(countKey: "TLS failures so far")

    /// `tls` for a TLS failure: a failed handshake (`NIOSSLError`) or a bad record after a
    /// completed one (`BoringSSLError`, which NIOSSL passes on bare). Anyone can cause either
    /// as often as he likes: the first and every 1,000th are warnings, the rest debug lines
    /// (`OccasionalLog`), with BoringSSL's short reason and none of its source paths.
    public func closeCode(for error: any Error, logger: Logger) -> String? {
        guard error is NIOSSLError || error is NIOSSLExtraError || error is BoringSSLError else { return nil }
        Self.failures.log(
            "closing the connection: TLS failed",
            metadata: ["reason": "\(Self.reason(error))"],
            to: logger
        )
        return "tls"
    }

    /// A TLS error in a few words: BoringSSL's reason names (`WRONG_VERSION_NUMBER`), after
    /// the handshake or in it; other errors as they describe themselves, without source paths.
    static func reason(_ error: any Error) -> String {
        switch error {
        case NIOSSLError.handshakeFailed(let inner): "handshake: \(Self.reason(inner))"
        case BoringSSLError.sslError(let stack), BoringSSLError.unknownError(let stack):
            Self.reasonNames(stack.map(\.description)) ?? Self.withoutSourcePaths("\(error)")
        default: Self.withoutSourcePaths("\(error)")
        }
    }

    /// The reason names of BoringSSL's error strings (`error:100000d3:SSL
    /// routines:OPENSSL_internal:WRONG_VERSION_NUMBER at /path/file.cc:231`), comma-separated;
    /// nil if none has one.
    static func reasonNames(_ descriptions: [String]) -> String? {
        let names = descriptions.compactMap { text in
            text.firstMatch(of: #/error:[0-9A-Fa-f]+:[^:]*:[^:]*:([A-Za-z0-9_]+)/#).map { String($0.1) }
        }
        return names.isEmpty ? nil : names.joined(separator: ", ")
    }

    /// `text` without the " at /path/file.cc:123" that BoringSSL's errors carry.
    static func withoutSourcePaths(_ text: String) -> String {
        text.replacing(#/ at /[^\s\])]*/#, with: "")
    }
}

/// TLS under a socket transport's frames, client side: trusts only the certificate `pin`
/// names, and records each handshake (the `handshake` step, its bytes, what it negotiated).
public struct TLSClientLayer: ClientChannelLayer {
    let context: NIOSSLContext
    let pin: LoadedPin

    /// A client offering the groups and version `settings` name, trusting only `pin`.
    public init(pin: LoadedPin, settings: TLSSettings = TLSSettings()) throws {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.restrict(groups: settings.groups, version: settings.version)
        // The pin check replaces chain and host-name verification entirely; it is only
        // called when verification is on, so keep it on but without host names.
        configuration.certificateVerification = .noHostnameVerification
        do {
            self.context = try NIOSSLContext(configuration: configuration)
        } catch {
            throw LabError(.handshakeFailed, "Cannot set up the TLS client", cause: UnderlyingError(describing: error))
        }
        self.pin = pin
    }

    public func session(peer: String) -> any ClientLayerSession {
        TLSClientSession(context: self.context, check: PinCheck(pin: self.pin), peer: peer)
    }
}

/// One TLS client connection: its pin check, its handshake's record and completion.
final class TLSClientSession: ClientLayerSession {
    let context: NIOSSLContext
    let check: PinCheck
    let peer: String
    let seen = HandshakeRecord()
    let handshake = InitializerBox<EventLoopFuture<Void>>()

    init(context: NIOSSLContext, check: PinCheck, peer: String) {
        self.context = context
        self.check = check
        self.peer = peer
    }

    func addHandlers(to channel: any Channel) throws {
        let pipeline = channel.pipeline.syncOperations
        // First: it reads the server's bytes before the TLS handler does.
        let counter = WireCounter(record: self.seen)
        try pipeline.addHandler(counter)
        try pipeline.addHandler(HandshakeObserver(record: self.seen))
        try pipeline.addHandler(
            NIOSSLClientHandler(context: self.context, serverHostname: nil, customVerificationCallback: self.check.verify)
        )
        let promise = channel.eventLoop.makePromise(of: Void.self)
        self.handshake.set(promise.futureResult)
        try pipeline.addHandler(HandshakeWaiter(promise: promise, record: self.seen, counter: counter))
    }

    /// Waits for the handshake, closing the channel if it fails or takes longer than
    /// `timeout` (a server that accepts but never finishes it must not hang `connect`); a pin
    /// refused is `pinMismatch`, any other failure `handshakeFailed`.
    func ready(on channel: any Channel, timeout: TimeSpan) async throws {
        guard let done = self.handshake.get() else { return }
        let timer = channel.eventLoop.scheduleTask(in: timeout.timeAmount) {
            channel.close(promise: nil)
        }
        done.whenComplete { _ in timer.cancel() }
        do {
            try await done.get()
        } catch {
            try? await channel.close()
            if let refusal = self.check.refusal {
                throw LabError(
                    .pinMismatch,
                    "The server at \(self.peer) presented \(refusal); the scenario pins \(self.check.pin). "
                        + "Refused before any request was sent"
                )
            }
            throw LabError(
                .handshakeFailed,
                "The TLS handshake with \(self.peer) failed",
                cause: UnderlyingError(describing: error)
            )
        }
    }

    func record<R: StepRecorder>(into recorder: inout R) {
        if let handshake = self.seen.handshakeNanoseconds { recorder.record(.handshake, nanoseconds: handshake) }
        if let bytes = self.seen.handshakeBytes {
            recorder.transferred(.handshake, sent: bytes.sent, received: bytes.received)
        }
        for outcome in self.seen.negotiated?.outcomes ?? ["tls.unread"] { recorder.count(outcome, by: 1) }
    }
}

/// Completes a promise when the TLS handshake finishes, or fails it if the connection ends or
/// errs first: `connect` then returns only a connection that is ready to carry requests.
final class HandshakeWaiter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private var promise: EventLoopPromise<Void>?
    /// Where the completion's moment goes (the `handshake` step ends there, not when the
    /// awaiting task next runs).
    private let record: HandshakeRecord?
    /// The handshake's byte counter, taken out of the pipeline once it has counted: the
    /// connection's requests need not pay for it.
    private let counter: WireCounter?

    init(promise: EventLoopPromise<Void>, record: HandshakeRecord? = nil, counter: WireCounter? = nil) {
        self.promise = promise
        self.record = record
        self.counter = counter
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted = event {
            self.record?.completed(at: Stopwatch.now())
            if let counter = self.counter { context.pipeline.syncOperations.removeHandler(counter, promise: nil) }
            self.promise?.succeed()
            self.promise = nil
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        self.promise?.fail(error)
        self.promise = nil
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.promise?.fail(ChannelError.eof)
        self.promise = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.promise?.fail(ChannelError.ioOnClosedChannel)
        self.promise = nil
    }
}

extension TLSConfiguration {
    /// Offers exactly `groups`, in order, and speaks only `version` (1.2 or 1.3 when nil):
    /// the same on the lab's servers and clients.
    mutating func restrict(groups: [TLSGroup]?, version: TLSVersionChoice?) {
        if let groups { self.curves = groups.map { NIOTLSCurve(rawValue: $0.codePoint) } }
        switch version {
        case nil:
            self.minimumTLSVersion = .tlsv12
        case .tls12:
            self.minimumTLSVersion = .tlsv12
            self.maximumTLSVersion = .tlsv12
        case .tls13:
            self.minimumTLSVersion = .tlsv13
        }
    }
}
