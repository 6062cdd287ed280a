public import LabCore
import Logging

/// The `tls` transport: a socket transport (`tcp`, or any `LayeredTransport`) with TLS
/// under its frames (`TLSServerLayer`, `TLSClientLayer`: swift-nio-ssl), and a client that
/// trusts only what the scenario pins.
///
/// The server presents the scenario's certificate, or a fresh self-signed one when the
/// scenario brings none; the lab's own clients then pin exactly that certificate unless the
/// scenario pins something else (to show a mismatch is refused). A remote server needs a pin.
public struct TLSTransport: Transport {
    /// `tls`.
    public static let name = "tls"
    /// Crosses a socket.
    public static let usesNetwork = true
    /// Runs TLS.
    public static let usesTLS = true
    /// Every connection counts what its handshake negotiated: `tls.version.1.3`, `tls.group.…`.
    public static let outcomePrefix: String? = "tls."

    /// The plain transport underneath.
    public let base: any LayeredTransport

    /// A transport with the scenario's settings; the server logs as `lab.server`.
    public init(options: TransportOptions) throws {
        self.init(wrapping: try TCPTransport(options: options))
    }

    /// TLS over `base`.
    public init(wrapping base: any LayeredTransport) {
        self.base = base
    }

    var settings: TLSSettings { self.base.options.tls }

    /// The server's identity: the scenario's files, or a fresh self-signed certificate.
    public func identity() throws -> TLSIdentity {
        if let certificate = self.settings.certificateFile {
            guard let key = self.settings.privateKeyFile else {
                throw LabError(
                    .invalidScenario,
                    "server.tls.certificate needs server.tls.key, the certificate's private key"
                )
            }
            if let exposure = TLSIdentity.exposure(ofKeyFile: key) {
                self.base.logger.warning("\(exposure)")
            }
            return try TLSIdentity(certificateFile: certificate, privateKeyFile: key)
        }
        return try TLSIdentity.selfSigned()
    }

    /// Serves `handler` over TLS; the endpoint's clients pin the scenario's pin, or else the
    /// server's own certificate.
    public func serve(_ handler: any FrameHandler) async throws -> any TransportEndpoint {
        let identity = try self.identity()
        let pin = try self.settings.pin.map(LoadedPin.init) ?? LoadedPin(certificate: identity.leaf)
        return try await self.base.serve(
            handler,
            server: try self.serverLayer(identity),
            client: try TLSClientLayer(pin: pin, settings: self.settings)
        )
    }

    /// TLS presenting `identity`, with the groups and version of the settings.
    func serverLayer(_ identity: TLSIdentity) throws -> TLSServerLayer {
        try TLSServerLayer(identity: identity, groups: self.settings.groups, version: self.settings.version)
    }

    /// A server for `lab serve`, presenting the scenario's certificate or a fresh self-signed
    /// one; it announces the certificate's pin, which its clients need.
    public func listen(_ handler: any FrameHandler, recorder: (any ServerRecorder)?) async throws -> any ListeningServer {
        let identity = try self.identity()
        let pin = try Fingerprint.spkiSHA256(identity.leaf)
        let server = try await self.base.listen(handler, recorder: recorder, layer: try self.serverLayer(identity))
        return TLSServer(server: server, pin: pin)
    }

    /// Reaches the TLS server at `host`:`port`, which must present the pinned certificate.
    public func remote(host: String, port: Int) async throws -> any TransportEndpoint {
        guard let pin = self.settings.pin else {
            throw LabError(
                .invalidScenario,
                "A tls client needs a pin to reach \(host):\(port): set server.tls.pin to a certificate file or an SPKI SHA-256"
            )
        }
        return try await self.base.remote(
            host: host,
            port: port,
            layer: try TLSClientLayer(pin: try LoadedPin(pin), settings: self.settings)
        )
    }
}

/// A TLS server others reach: the base transport's server and the pin of the certificate it
/// presents.
struct TLSServer: ListeningServer {
    let server: any ListeningServer
    /// The SHA-256 of the certificate's SubjectPublicKeyInfo.
    let pin: [UInt8]

    var host: String { self.server.host }
    var port: Int { self.server.port }
    var announcement: [String] { self.server.announcement + ["tls: spki sha256/\(Fingerprint.base64(self.pin))"] }

    func shutdown(grace: Duration) async {
        await self.server.shutdown(grace: grace)
    }
}
