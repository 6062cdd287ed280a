import LabCore

/// `echo`: 32 random bytes to the server, which answers them reversed; the client checks the
/// answer. The test-only flow, with a step of its own (`echo`).
struct EchoFlow: Flow {
    struct Options: Decodable, Sendable {
        init(from decoder: any Decoder) throws {
            _ = ScenarioObject(decoder, keys: [])
        }
    }

    struct Reverser: FrameHandler {
        func respond<R: StepRecorder>(to body: [UInt8], recorder: inout R) async -> FrameAnswer {
            FrameAnswer(body: body.reversed(), group: EchoFlow.name)
        }
    }

    struct Client: FlowClient {
        mutating func iterate<R: StepRecorder>(over connection: any Connection, recorder: inout R) async throws {
            let body = (0..<32).map { _ in UInt8.random(in: 0...255) }
            let start = Stopwatch.now()
            let answer = try await connection.request(body, step: .exchange, recorder: &recorder)
            recorder.record(EchoFlow.echo, nanoseconds: Stopwatch.now() - start)
            guard answer == body.reversed() else {
                throw LabError(.malformedMessage, "the echo server answered \(answer.count) bytes that are not the request reversed")
            }
        }
    }

    static let name = "echo"
    static let summary = "test flow: 32 bytes to the server, answered reversed"
    static let echo = Step("echo")
    static let steps = [echo, .exchange]
    static let usesSuite = false
    let suite = "-"
    let isInsecure = false
    let handler: (any FrameHandler)?

    static func check(_ setup: FlowSetup, options: Options) -> [(path: String, message: String)] { [] }

    init<R: StepRecorder>(setup: FlowSetup, options: Options, recorder: inout R) throws {
        self.handler = setup.startsServer ? Reverser() : nil
    }

    func makeClient<R: StepRecorder>(recorder: inout R) throws -> any FlowClient {
        Client()
    }
}
