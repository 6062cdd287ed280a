public import LabCore
import Logging

/// The `tls` transport: the `tcp` transport wrapped in TLS (swift-nio-ssl), with a client
/// that trusts only what the scenario pins.
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
    public let base: TCPTransport

    /// A transport with the scenario's settings; the server logs as `lab.server`.
    public init(options: TransportOptions) throws {
        self.init(wrapping: try TCPTransport(options: options))
    }

    /// TLS over `base`.
    public init(wrapping base: TCPTransport) {
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
        return try await self.base.serve(handler, identity: identity, pin: pin)
    }

    /// A server for `lab serve`, presenting the scenario's certificate or a fresh self-signed
    /// one; it announces the certificate's pin, which its clients need.
    public func listen(_ handler: any FrameHandler, recorder: (any ServerRecorder)?) async throws -> any ListeningServer {
        let identity = try self.identity()
        let socket = try await SocketServer.start(
            handler: handler,
            configuration: self.base.serverConfiguration(identity: identity),
            recording: recorder
        )
        do {
            return TLSServer(socket: socket, pin: try Fingerprint.spkiSHA256(identity.leaf))
        } catch {
            await socket.shutdown()
            throw error
        }
    }

    /// Reaches the TLS server at `host`:`port`, which must present the pinned certificate.
    public func remote(host: String, port: Int) async throws -> any TransportEndpoint {
        guard let pin = self.settings.pin else {
            throw LabError(
                .invalidScenario,
                "A tls client needs a pin to reach \(host):\(port): set server.tls.pin to a certificate file or an SPKI SHA-256"
            )
        }
        let security = try SocketClient.security(pin: try LoadedPin(pin), settings: self.settings)
        return SocketEndpoint(
            client: self.base.client(host: host, port: port, security: security, mailbox: nil),
            server: nil
        )
    }
}

/// A TLS server others reach: a socket server and the pin of the certificate it presents.
struct TLSServer: ListeningServer {
    let socket: SocketServer
    /// The SHA-256 of the certificate's SubjectPublicKeyInfo.
    let pin: [UInt8]

    var host: String { self.socket.host }
    var port: Int { self.socket.port }
    var announcement: [String] { ["tls: spki sha256/\(Fingerprint.base64(self.pin))"] }

    func shutdown(grace: Duration) async {
        await self.socket.shutdown(grace: grace)
    }
}
