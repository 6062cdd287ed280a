import LabCore
import Synchronization

/// A test-only transport, `direct`: each request body goes straight to the server's handler,
/// with no framing and no bytes copied, and it counts the requests it carried. It shows that
/// a transport is one file plus one registry line (`TestPlugins.catalog`).
struct DirectTransport: Transport {
    static let name = "direct"
    /// Requests carried by every `direct` connection of this process.
    static let carried = Atomic<Int>(0)

    init(options: TransportOptions) throws {}

    func serve(_ handler: any FrameHandler) async throws -> any TransportEndpoint {
        Endpoint(handler: handler)
    }

    struct Endpoint: TransportEndpoint {
        let handler: any FrameHandler
        var address: String? { nil }

        func connect<R: StepRecorder>(recorder: inout R) async throws -> any Connection {
            DirectConnection(handler: self.handler)
        }

        func shutdown() async {}
    }

    struct DirectConnection: Connection {
        let handler: any FrameHandler

        func request<R: StepRecorder>(_ body: [UInt8], step: Step, recorder: inout R) async throws -> [UInt8] {
            DirectTransport.carried.add(1, ordering: .relaxed)
            return await self.handler.respond(to: body, recorder: &recorder).body
        }

        func close() async {}
    }
}
