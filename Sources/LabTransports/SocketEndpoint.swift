import LabCore

/// A server reached over a socket: ours (started by `serve`, shut down with the endpoint) or
/// someone else's (`remote`).
struct SocketEndpoint: TransportEndpoint {
    let client: SocketClient
    let server: SocketServer?

    var address: String? { "\(self.client.host):\(self.client.port)" }

    func connect<R: StepRecorder>(recorder: inout R) async throws -> any Connection {
        try await self.client.connect(recorder: &recorder)
    }

    func shutdown() async {
        await self.server?.shutdown()
    }
}
