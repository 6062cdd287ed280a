public import LabCore
public import LabFraming
import Synchronization

/// The `in-process` transport: no socket, but the same framed bytes a socket would carry.
///
/// Each request is framed, parsed back with the limit in force, handed to the handler in the
/// client's own task (so the server's steps land in the client's recorder), and the answer
/// takes the same path back.
public struct InProcessTransport: Transport {
    /// `in-process`.
    public static let name = "in-process"
    /// The framing both sides use.
    public let framing: Framing

    /// A transport with the scenario's framing.
    public init(options: TransportOptions) throws {
        self.framing = Framing(style: options.framing, maxFrameBytes: options.maxFrameBytes)
    }

    /// Serves `handler` to connections made in this process.
    public func serve(_ handler: any FrameHandler) async throws -> any TransportEndpoint {
        Endpoint(handler: handler, framing: self.framing)
    }

    struct Endpoint: TransportEndpoint {
        let handler: any FrameHandler
        let framing: Framing

        var address: String? { nil }

        func connect<R: StepRecorder>(recorder: inout R) async throws -> any Connection {
            InProcessConnection(handler: self.handler, framing: self.framing)
        }

        func shutdown() async {}
    }
}

/// One client's in-process connection.
///
/// Like a socket connection, it reopens when the server closed it after an answer, and
/// refuses requests once the client closed it.
final class InProcessConnection: Connection {
    let handler: any FrameHandler
    let framing: Framing
    private let closedByClient = Mutex(false)

    init(handler: any FrameHandler, framing: Framing) {
        self.handler = handler
        self.framing = framing
    }

    func request<R: StepRecorder>(_ body: [UInt8], step: Step, recorder: inout R) async throws -> [UInt8] {
        if self.closedByClient.withLock({ $0 }) {
            throw LabError(.connectionClosed, "The connection is closed: closed by the client")
        }
        let request = try self.framing.frame(body)
        let requestBody = try FrameParser.singleFrame(request, framing: self.framing)
        let answer = await self.handler.respond(to: requestBody, from: .inProcess, recorder: &recorder)
        let response = try self.framing.frame(answer.body)
        let responseBody = try FrameParser.singleFrame(response, framing: self.framing)
        recorder.transferred(step, sent: request.count, received: response.count)
        return responseBody
    }

    func close() async {
        self.closedByClient.withLock { $0 = true }
    }
}
