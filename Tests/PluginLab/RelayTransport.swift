import LabCore
import LabTransports

/// `relay`: TCP under another name, with a count of its own: the test-only transport that
/// `lab run` and `lab serve` take from the catalog. Its server announces itself, so a test
/// sees that `lab serve` listened through this plugin and not the built-in tcp.
struct RelayTransport: Transport {
    static let name = "relay"
    static let usesNetwork = true
    let base: TCPTransport

    init(options: TransportOptions) throws {
        self.base = try TCPTransport(options: options)
    }

    func serve(_ handler: any FrameHandler) async throws -> any TransportEndpoint {
        try await self.base.serve(handler)
    }

    func remote(host: String, port: Int) async throws -> any TransportEndpoint {
        try await self.base.remote(host: host, port: port)
    }

    func listen(_ handler: any FrameHandler, recorder: (any ServerRecorder)?) async throws -> any ListeningServer {
        RelayServer(base: try await self.base.listen(handler, recorder: recorder))
    }
}

/// A relay server: the tcp server, announced as the relay's.
struct RelayServer: ListeningServer {
    let base: any ListeningServer
    var host: String { self.base.host }
    var port: Int { self.base.port }
    var announcement: [String] { ["relay: a test transport over tcp"] + self.base.announcement }

    func shutdown(grace: Duration) async {
        await self.base.shutdown(grace: grace)
    }
}
