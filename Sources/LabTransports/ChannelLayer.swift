public import LabCore
public import Logging
public import NIOCore

/// A layer a socket transport puts under the frames of each connection it accepts, first in
/// the pipeline: TLS is one (`TLSServerLayer`). The transport knows nothing of what the
/// layer does; the layer knows nothing of frames.
public protocol ServerChannelLayer: Sendable {
    /// For logs, e.g. `tls`.
    var name: String { get }
    /// Adds the layer's handlers to an accepted connection's pipeline, before the framing.
    func addHandlers(to pipeline: ChannelPipeline.SynchronousOperations) throws
    /// The close code of a connection that ended with `error`, logged with its reason, if
    /// the error is the layer's (a failed TLS handshake: `tls`); nil for the server's own.
    func closeCode(for error: any Error, logger: Logger) -> String?
}

extension ServerChannelLayer {
    /// No errors of its own.
    public func closeCode(for error: any Error, logger: Logger) -> String? { nil }
}

/// The client side of a layer: each connection a client opens gets a fresh session of it
/// (`TLSClientLayer`: the handshake, the pin check, what the handshake negotiated).
public protocol ClientChannelLayer: Sendable {
    /// A session for one connection about to be opened to `peer` (`host:port`, for messages).
    func session(peer: String) -> any ClientLayerSession
}

/// One connection's state of a client layer, used in this order: `addHandlers` in the
/// channel's initializer, `ready` once connected, `record` once ready.
public protocol ClientLayerSession: Sendable {
    /// Adds the layer's handlers first in a new channel's pipeline (on its event loop).
    func addHandlers(to channel: any Channel) throws
    /// Returns when the layer is ready to carry frames (the handshake done and checked);
    /// closes the channel and throws if it fails or takes longer than `timeout`.
    func ready(on channel: any Channel, timeout: TimeSpan) async throws
    /// Records what the layer did while the connection opened: steps, bytes, outcomes.
    func record<R: StepRecorder>(into recorder: inout R)
}

/// A transport over sockets that can put a layer under its frames: what `TLSTransport` wraps.
/// The lab's is `tcp`; a plugin's stream transport that conforms gets TLS over it with
/// `TLSTransport(wrapping:)`.
public protocol LayeredTransport: Transport {
    /// The scenario's (or `lab serve`'s) transport settings, the TLS ones included.
    var options: TransportOptions { get }
    /// Where the server logs connection events.
    var logger: Logger { get }
    /// `serve`, with `server` under the server's frames and `client` under its clients'.
    func serve(
        _ handler: any FrameHandler,
        server: (any ServerChannelLayer)?,
        client: (any ClientChannelLayer)?
    ) async throws -> any TransportEndpoint
    /// `listen`, with `layer` under the frames of every connection.
    func listen(
        _ handler: any FrameHandler,
        recorder: (any ServerRecorder)?,
        layer: (any ServerChannelLayer)?
    ) async throws -> any ListeningServer
    /// `remote`, with `layer` under the frames of every connection.
    func remote(host: String, port: Int, layer: (any ClientChannelLayer)?) async throws -> any TransportEndpoint
}
