import Foundation
import LabCore
import LabMessaging
import LabTestSupport
import LabTransports
import LabWire
import Testing

/// msg/1 as `lab serve` serves it: its virtual clock, and its closing count of error answers.
@Suite(.tier(.load), .serialized, .timeLimit(.minutes(2)))
struct ServeMsgTests {
    /// A client of `served` over TCP, and its endpoint to shut down.
    static func connect(_ served: MsgInteropTests.Served) async throws -> (MessagingClient, any TransportEndpoint) {
        let endpoint = try await TCPTransport(options: TransportOptions()).remote(
            host: served.address.host,
            port: served.address.port
        )
        var quiet = NoStepRecorder()
        return (MessagingClient(connection: try await endpoint.connect(recorder: &quiet)), endpoint)
    }

    @Test(
        "lab serve --clock virtual starts at 2009-06-01T12:00:00Z and stands still: seed's 3rd failure postpones until 12:30"
    )
    func virtualClockStart() async throws {
        let served = try await MsgInteropTests.Served.start(["--clock", "virtual", "--policy", "seed"])
        defer { served.cleanUp() }
        let (client, endpoint) = try await Self.connect(served)
        try await withEndpoint(endpoint) { endpoint in
            var quiet = NoStepRecorder()
            var alice = MessagingUser(username: "alice", password: "correct horse")
            try await alice.register(client, recorder: &quiet).orThrow()
            var answers: [Result<String, MsgFailure>] = []
            for _ in 0..<3 { answers.append(try await Harness.attempt(&alice, client, password: "wrong password")) }
            let start = 1_243_857_600  // 2009-06-01T12:00:00Z
            #expect(answers.map(ReferenceTests.until) == [nil, nil, start + 1800], "\(answers)")
            // The clock has not moved: the right password is still postponed until then.
            let right = try await Harness.attempt(&alice, client, password: "correct horse")
            #expect(right.failureCode == .postponed && ReferenceTests.until(right) == start + 1800, "\(right)")
            await client.connection.close()
        }
        try await served.stop()
    }

    @Test("lab serve's closing line counts msg/1's error answers (ok false) with cx/1's error frames")
    func stoppedLineCountsMsgErrors() async throws {
        let served = try await MsgInteropTests.Served.start()
        defer { served.cleanUp() }
        var quiet = NoStepRecorder()
        // One connection: 4 answers with ok true, 3 with ok false (the connection stays open).
        let (client, endpoint) = try await Self.connect(served)
        try await withEndpoint(endpoint) { endpoint in
            var alice = MessagingUser(username: "alice", password: "correct horse")
            try await alice.register(client, recorder: &quiet).orThrow()  // captcha, register
            let wrong = try await Harness.attempt(&alice, client, password: "wrong password")  // captcha, login
            #expect(wrong.failureCode == .badCredentials)
            let captcha = try await alice.solveCaptcha(client, recorder: &quiet)  // captcha
            let misread = try await alice.login(client, captcha: captcha, captchaAnswer: "?????", recorder: &quiet)
            #expect(misread.failureCode == .badCaptcha)
            let container = try await client.connection.request(try ContainerValueTests.bodies()[0].1, recorder: &quiet)
            #expect(try PropertyListDictionary(decoding: container).optionalString(MsgKey.error) == "badRequest")
            await client.connection.close()
            // Another: one cx/1 error frame, which closes it.
            let cx = try await endpoint.connect(recorder: &quiet)
            let answer = try await cx.request(Array("not a request".utf8), recorder: &quiet)
            #expect(try PropertyListDictionary(decoding: answer).optionalBool("ok") != true)
            await cx.close()
        }
        try await served.stop()
        #expect(
            served.server.lines.last == "stopped: 2 connections, 4 exchanges, 4 error answers",
            "\(served.server.lines)"
        )
    }
}
