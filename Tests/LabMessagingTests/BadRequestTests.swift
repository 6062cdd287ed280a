import Foundation
import GRDB
import LabBuiltIns
import LabCore
import LabMessaging
import LabTestSupport
import LabTransports
import LabWire
import Testing

/// Bad requests get an error answer and change nothing in the store.
@Suite(.tier(.load)) struct BadRequestTests {
    /// Every row of every table, as text: what "nothing changed" compares.
    static func snapshot(_ store: MessagingStore) throws -> [String] {
        let queue = try DatabaseQueue(path: store.path)
        return try queue.read { db in
            var rows: [String] = []
            for table in ["users", "chats", "chatKeys", "messages"] {
                for row in try Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY rowid") {
                    rows.append("\(table): \(row.description)")
                }
            }
            return rows
        }
    }

    /// Sends a raw msg/1 request and decodes the answer.
    static func send(
        _ client: MessagingClient,
        _ fill: (inout PropertyListDictionary) -> Void
    ) async throws
        -> PropertyListDictionary
    {
        var request = PropertyListDictionary()
        fill(&request)
        var quiet = NoStepRecorder()
        return try PropertyListDictionary(
            decoding: try await client.connection.request(try request.encoded(), recorder: &quiet)
        )
    }

    @Test func malformedRequestsAreAnsweredAndChangeNothing() async throws {
        let harness = try await Harness(policy: .seedDefault)
        var (alice, client) = try await harness.registered("alice")
        var quiet = NoStepRecorder()
        try await alice.logIn(client, recorder: &quiet)
        let token = try #require(alice.token)
        _ = try await harness.registered("bob")
        let before = try Self.snapshot(harness.store)
        let captcha = try await client.captcha(recorder: &quiet)

        let sqlish = "alice'; DROP TABLE users; --"
        let cases: [(String, MsgErrorCode, (inout PropertyListDictionary) -> Void)] = [
            ("no op", .badRequest, { $0.set("user", string: "alice") }),
            ("unknown op", .badRequest, { $0.set(MsgKey.op, string: "dropTables") }),
            ("op of the wrong type", .badRequest, { $0.set(MsgKey.op, integer: 3) }),
            ("login without fields", .badRequest, { $0.set(MsgKey.op, string: "login") }),
            (
                "login with a numeric user name", .badRequest,
                {
                    $0.set(MsgKey.op, string: "login")
                    $0.set(MsgKey.username, integer: 7)
                    $0.set(MsgKey.password, data: [1, 2, 3])
                    $0.set(MsgKey.captchaID, string: captcha.id)
                    $0.set(MsgKey.captcha, string: captcha.challenge)
                }
            ),
            (
                "register with an SQL-looking user name", .badRequest,
                {
                    $0.set(MsgKey.op, string: "register")
                    $0.set(MsgKey.username, string: sqlish)
                    $0.set(MsgKey.password, data: Array(repeating: 7, count: 60))
                    $0.set(MsgKey.publicKey, data: Array(repeating: 9, count: 32))
                    $0.set(MsgKey.captchaID, string: captcha.id)
                    $0.set(MsgKey.captcha, string: captcha.challenge)
                }
            ),
            (
                "peerKey for an SQL-looking name", .badRequest,
                {
                    $0.set(MsgKey.op, string: "peerKey")
                    $0.set(MsgKey.token, string: token)
                    $0.set(MsgKey.username, string: "x' OR '1'='1")
                }
            ),
            (
                "send with an SQL-looking token", .notLoggedIn,
                {
                    $0.set(MsgKey.op, string: "send")
                    $0.set(MsgKey.token, string: "' OR 1=1 --")
                    $0.set(MsgKey.to, string: "bob")
                    $0.set(MsgKey.ciphertext, data: Array(repeating: 1, count: 40))
                    $0.set(MsgKey.keyVersion, integer: 1)
                }
            ),
            (
                "send with a string key version", .badRequest,
                {
                    $0.set(MsgKey.op, string: "send")
                    $0.set(MsgKey.token, string: token)
                    $0.set(MsgKey.to, string: "bob")
                    $0.set(MsgKey.ciphertext, data: Array(repeating: 1, count: 40))
                    $0.set(MsgKey.keyVersion, string: "1; DELETE FROM messages")
                }
            ),
            (
                "openChat with a short wrapped key", .badRequest,
                {
                    $0.set(MsgKey.op, string: "openChat")
                    $0.set(MsgKey.token, string: token)
                    $0.set(MsgKey.with, string: "bob")
                    $0.set(MsgKey.wrappedKeySelf, data: [1])
                    $0.set(MsgKey.wrappedKeyPeer, data: [1])
                }
            ),
            (
                "rekey with garbage packing", .badRequest,
                {
                    $0.set(MsgKey.op, string: "rekey")
                    $0.set(MsgKey.token, string: token)
                    $0.set(MsgKey.with, string: "bob")
                    $0.set(MsgKey.keyVersion, integer: 1)
                    $0.set(MsgKey.wrappedKeySelf, data: Array(repeating: 1, count: 80))
                    $0.set(MsgKey.wrappedKeyPeer, data: Array(repeating: 1, count: 80))
                    $0.set(MsgKey.messages, data: [0, 0, 0, 1, 0xFF])
                }
            ),
            (
                "fetch before any chat", .noChat,
                {
                    $0.set(MsgKey.op, string: "fetch")
                    $0.set(MsgKey.token, string: token)
                    $0.set(MsgKey.with, string: "bob")
                }
            ),
            (
                "logout of an unknown token", .notLoggedIn,
                {
                    $0.set(MsgKey.op, string: "logout")
                    $0.set(MsgKey.token, string: "not a token")
                }
            ),
            (
                "fetch with a negative cursor", .badRequest,
                {
                    $0.set(MsgKey.op, string: "fetch")
                    $0.set(MsgKey.token, string: token)
                    $0.set(MsgKey.with, string: "bob")
                    $0.set(MsgKey.after, integer: -1)
                }
            ),
        ]
        for (name, expected, fill) in cases {
            let answer = try await Self.send(client, fill)
            #expect(try answer.optionalBool(MsgKey.ok) == false, "\(name)")
            #expect(try answer.string(MsgKey.error) == expected.rawValue, "\(name)")
            #expect(try !answer.string(MsgKey.message).isEmpty, "\(name)")
        }
        #expect(try Self.snapshot(harness.store) == before)
        // The connection still works.
        #expect(try await client.captcha(recorder: &quiet).challenge.count == 5)
    }

    /// Keys no one should wrap to (issue 37, break 9): X25519's low-order points, as the
    /// trial sent them in `publishKey`, and in `register`; each refused, nothing stored.
    @Test("low-order X25519 public keys are refused badRequest in register and publishKey; nothing is stored")
    func lowOrderKeysAreRefused() async throws {
        let harness = try await Harness(policy: .seedDefault)
        var (alice, client) = try await harness.registered("alice")
        var quiet = NoStepRecorder()
        try await alice.logIn(client, recorder: &quiet)
        let token = try #require(alice.token)
        let before = try Self.snapshot(harness.store)
        // 0, 1, and a point of order 8 (RFC 7748's list, as libsodium blocks them).
        let points: [[UInt8]] = [
            Array(repeating: 0, count: 32),
            [1] + Array(repeating: 0, count: 31),
            [UInt8](hex: "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800")!,
        ]
        for point in points {
            let published = try await Self.send(client) {
                $0.set(MsgKey.op, string: "publishKey")
                $0.set(MsgKey.token, string: token)
                $0.set(MsgKey.publicKey, data: point)
            }
            #expect(try published.string(MsgKey.error) == MsgErrorCode.badRequest.rawValue, "\(point.hexString)")
            #expect(try published.string(MsgKey.message).contains("low-order"))
            let captcha = try await client.captcha(recorder: &quiet)
            let registered = try await Self.send(client) {
                $0.set(MsgKey.op, string: "register")
                $0.set(MsgKey.username, string: "mallory")
                $0.set(MsgKey.password, data: Array(repeating: 7, count: 60))
                $0.set(MsgKey.publicKey, data: point)
                $0.set(MsgKey.captchaID, string: captcha.id)
                $0.set(MsgKey.captcha, string: captcha.challenge)
            }
            #expect(try registered.string(MsgKey.error) == MsgErrorCode.badRequest.rawValue, "\(point.hexString)")
        }
        #expect(try Self.snapshot(harness.store) == before)
        // A usable key is still published.
        let usable = try await Self.send(client) {
            $0.set(MsgKey.op, string: "publishKey")
            $0.set(MsgKey.token, string: token)
            $0.set(MsgKey.publicKey, data: Array(repeating: 9, count: 32))
        }
        #expect(try usable.optionalString(MsgKey.error) == nil)
    }

    /// An 8 MB user name: answered `badRequest` where frames that large are allowed (a
    /// 16 MiB limit), and with the default 5 MiB limit the connection ends unread.
    @Test func eightMegabyteUsername() async throws {
        let harness = try await Harness()
        let before = try Self.snapshot(harness.store)
        let huge = String(repeating: "a", count: 8 << 20)
        var quiet = NoStepRecorder()
        let roomy = try await TCPTransport(options: TransportOptions(maxFrameBytes: 16 << 20)).serve(harness.service)
        try await withEndpoint(roomy) { roomy in
            let client = MessagingClient(connection: try await roomy.connect(recorder: &quiet))
            let captcha = try await client.captcha(recorder: &quiet)
            let answer = try await Self.send(client) {
                $0.set(MsgKey.op, string: "register")
                $0.set(MsgKey.username, string: huge)
                $0.set(MsgKey.password, data: Array(repeating: 7, count: 60))
                $0.set(MsgKey.publicKey, data: Array(repeating: 9, count: 32))
                $0.set(MsgKey.captchaID, string: captcha.id)
                $0.set(MsgKey.captcha, string: captcha.challenge)
            }
            #expect(try answer.string(MsgKey.error) == MsgErrorCode.badRequest.rawValue)
            #expect(try answer.string(MsgKey.message).contains("1 to 64"))
        }

        let endpoint = try await TCPTransport(options: TransportOptions()).serve(harness.service)
        try await withEndpoint(endpoint) { endpoint in
            let tcp = MessagingClient(connection: try await endpoint.connect(recorder: &quiet))
            await #expect(throws: LabError.self) {
                _ = try await Self.send(tcp) {
                    $0.set(MsgKey.op, string: "login")
                    $0.set(MsgKey.username, string: huge)
                }
            }
            // Others are still served.
            let other = MessagingClient(connection: try await endpoint.connect(recorder: &quiet))
            #expect(try await other.captcha(recorder: &quiet).challenge.count == 5)
        }
        #expect(try Self.snapshot(harness.store) == before)
    }

    @Test func passwordsSealedForAnotherRequestAreRefused() async throws {
        let harness = try await Harness()
        var (alice, client) = try await harness.registered("alice")
        var quiet = NoStepRecorder()
        let first = try await alice.solveCaptcha(client, recorder: &quiet)
        let second = try await alice.solveCaptcha(client, recorder: &quiet)
        // A password sealed for the first captcha, replayed with the second.
        let sealed = try MsgCrypto.sealPassword(
            "correct horse",
            to: first.serverKey,
            context: MsgCrypto.passwordContext(op: .login, field: MsgKey.password, binding: ["alice", first.id])
        )
        let answer = try await Self.send(client) {
            $0.set(MsgKey.op, string: "login")
            $0.set(MsgKey.username, string: "alice")
            $0.set(MsgKey.password, data: sealed)
            $0.set(MsgKey.captchaID, string: second.id)
            $0.set(MsgKey.captcha, string: second.challenge)
        }
        #expect(try answer.string(MsgKey.error) == MsgErrorCode.badRequest.rawValue)
        #expect(try await harness.state("alice") == LoginState())
    }

    @Test func passwordChangeNeedsTheCurrentPasswordAndEightCharacters() async throws {
        let harness = try await Harness(policy: .seedDefault)
        var (alice, client) = try await harness.registered("alice")
        var quiet = NoStepRecorder()
        try await alice.logIn(client, recorder: &quiet)
        let stored = try await harness.store.account(named: "alice")
        #expect(
            try await alice.changePassword(client, to: "short", recorder: &quiet).failureCode == .weakPassword
        )
        #expect(
            try await alice.changePassword(client, current: "not it at all", to: "long enough 1", recorder: &quiet)
                .failureCode == .badCredentials
        )
        // The wrong current password counted as a failure; the hash is unchanged.
        #expect(try await harness.state("alice")?.failures == 1)
        #expect(try await harness.store.account(named: "alice")?.hash == stored?.hash)
        #expect(try await alice.changePassword(client, to: "long enough 2", recorder: &quiet).succeeded)
        #expect(try await harness.store.account(named: "alice")?.hash != stored?.hash)
        // The new password logs in; the old one does not.
        var fresh = MessagingUser(username: "alice", password: "long enough 2")
        #expect(try await Harness.attempt(&fresh, client, password: "long enough 2").succeeded)
        #expect(try await Harness.attempt(&fresh, client, password: "correct horse").failureCode == .badCredentials)
    }
}

/// Where a body goes on `lab serve`'s port, and how msg/1 answers one it cannot read.
@Suite(.tier(.load)) struct ContainerValueTests {
    /// cx/1's stand-in: answers a marker and closes, as a cx/1 error would.
    struct CXStandIn: FrameHandler {
        func respond<R: StepRecorder>(to body: [UInt8], recorder: inout R) async -> FrameAnswer {
            var answer = PropertyListDictionary()
            answer.set("cx", bool: true)
            return FrameAnswer(body: (try? answer.encoded()) ?? [], closeReason: "cx: stand-in")
        }
    }

    /// Bodies with the key `op` and a value no msg/1 body may hold, made by Foundation's
    /// encoder (not the lab's, which cannot write containers).
    static func bodies() throws -> [(String, [UInt8])] {
        let requests: [(String, [String: Any])] = [
            ("a dictionary user name", ["op": "register", "username": ["nested": "x"]]),
            ("an array password", ["op": "login", "username": "alice", "password": [1, 2, 3]]),
            ("an array op", ["op": ["login"]]),
        ]
        return try requests.map { name, request in
            let data = try PropertyListSerialization.data(fromPropertyList: request, format: .binary, options: 0)
            return (name, Array(data))
        }
    }

    @Test("a msg/1 body holding a container is answered badRequest with ok false, the connection kept open")
    func containerValuesAreBadRequests() async throws {
        let harness = try await Harness()
        let router = ProtocolRouter([(.rest, CXStandIn()), (.otherOps, harness.service)])
        for (name, body) in try Self.bodies() {
            // On lab serve's port (the router) and where msg/1 is served alone (a scenario).
            for handler in [router, harness.service] as [any FrameHandler] {
                var quiet = NoStepRecorder()
                let answer = await handler.respond(to: body, recorder: &quiet)
                #expect(answer.closeReason == nil, "\(name): the connection closes (\(answer.closeReason ?? ""))")
                let decoded = try PropertyListDictionary(decoding: answer.body)
                #expect(try decoded.optionalBool("cx") == nil, "\(name): answered by cx/1")
                #expect(try decoded.optionalBool(MsgKey.ok) == false, "\(name)")
                #expect(try decoded.optionalString(MsgKey.error) == MsgErrorCode.badRequest.rawValue, "\(name)")
                #expect(try decoded.optionalString(MsgKey.message)?.contains("container") == true, "\(name)")
            }
        }
        // Over a connection: the next request on it is answered.
        let client = try await harness.client()
        var quiet = NoStepRecorder()
        let answer = try await client.connection.request(try Self.bodies()[0].1, recorder: &quiet)
        #expect(try PropertyListDictionary(decoding: answer).optionalString(MsgKey.error) == "badRequest")
        #expect(try await client.captcha(recorder: &quiet).challenge.count == 5)
    }

    @Test(
        "a body that is not a property-list dictionary with op still ends the connection; one without op goes to cx/1"
    )
    func otherBodiesAreNotMsg() async throws {
        let harness = try await Harness()
        var quiet = NoStepRecorder()
        let garbage = await harness.service.respond(to: Array("not a plist".utf8), recorder: &quiet)
        #expect(garbage.closeReason?.hasPrefix("badRequest") == true)
        let router = ProtocolRouter([(.rest, CXStandIn()), (.otherOps, harness.service)])
        let data = try PropertyListSerialization.data(
            fromPropertyList: ["suite": ["x25519"]] as [String: Any],
            format: .binary,
            options: 0
        )
        let answer = await router.respond(to: Array(data), recorder: &quiet)
        #expect(try PropertyListDictionary(decoding: answer.body).optionalBool("cx") == true)
    }
}
