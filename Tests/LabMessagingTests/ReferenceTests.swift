import Foundation
import LabCore
import LabMessaging
import LabNIO
import LabWire
import Testing

/// What the README's msg/1 reference says, point by point, where an outside client found it
/// silent or wrong (issue 18, point 10).
@Suite struct ReferenceTests {
    /// A login request's fields, filled by hand.
    static func login(
        _ request: inout PropertyListDictionary,
        username: String,
        sealed: [UInt8],
        captcha: IssuedCaptcha
    ) {
        request.set(MsgKey.op, string: MsgOp.login.rawValue)
        request.set(MsgKey.username, string: username)
        request.set(MsgKey.password, data: sealed)
        request.set(MsgKey.captchaID, string: captcha.id)
        request.set(MsgKey.captcha, string: captcha.challenge)
    }

    /// `password` sealed for a login of `username` with `captcha`.
    static func sealedLogin(_ password: [UInt8], _ username: String, _ captcha: IssuedCaptcha) throws -> [UInt8] {
        try MsgCrypto.sealPassword(
            bytes: password,
            to: captcha.serverKey,
            context: MsgCrypto.passwordContext(op: .login, field: MsgKey.password, binding: [username, captcha.id])
        )
    }

    /// The `until` of an answer, as Unix seconds.
    static func until(_ result: Result<String, MsgFailure>) -> Int? {
        guard case .failure(let failure) = result, let until = failure.until else { return nil }
        return Int(until.timeIntervalSince1970)
    }

    // MARK: - Passwords (point 2)

    @Test("the minimum is counted in bytes of UTF-8: 'éééé' (8 bytes) registers, 7 bytes is weakPassword")
    func minimumCountsBytes() async throws {
        let harness = try await Harness()
        var quiet = NoStepRecorder()
        let client = try await harness.client()
        var accented = MessagingUser(username: "accented", password: "éééé")
        #expect(try await accented.register(client, recorder: &quiet).succeeded)
        #expect(try await Harness.attempt(&accented, client, password: "éééé").succeeded)
        var short = MessagingUser(username: "short", password: "éééa")
        let refused = try await short.register(client, recorder: &quiet)
        #expect(refused.failureCode == .weakPassword, "\(refused)")
        #expect(try await harness.store.account(named: "short") == nil)
    }

    @Test("a sealed password whose plaintext is not UTF-8 is badRequest: nothing counted, the captcha still usable")
    func nonUTF8PasswordIsBadRequest() async throws {
        let harness = try await Harness(policy: .seedDefault)
        var (alice, client) = try await harness.registered("alice")
        var quiet = NoStepRecorder()
        let captcha = try await alice.solveCaptcha(client, recorder: &quiet)
        let notUTF8: [UInt8] = [0xFF, 0xFE, 0xC3, 0x28, 0x80, 0x81, 0x82, 0x83, 0x84]
        let sealedLogin = try Self.sealedLogin(notUTF8, "alice", captcha)
        let answer = try await BadRequestTests.send(client) {
            Self.login(&$0, username: "alice", sealed: sealedLogin, captcha: captcha)
        }
        #expect(try answer.optionalString(MsgKey.error) == MsgErrorCode.badRequest.rawValue)
        #expect(try answer.optionalString(MsgKey.message)?.contains("UTF-8") == true)
        #expect(try await harness.state("alice") == LoginState())
        // The same captcha still answers a login.
        #expect(try await alice.login(client, captcha: captcha, recorder: &quiet).succeeded)

        // In register too.
        let second = try await alice.solveCaptcha(client, recorder: &quiet)
        let sealed = try MsgCrypto.sealPassword(
            bytes: notUTF8,
            to: second.serverKey,
            context: MsgCrypto.passwordContext(op: .register, field: MsgKey.password, binding: ["carol", second.id])
        )
        let registration = try await BadRequestTests.send(client) {
            $0.set(MsgKey.op, string: MsgOp.register.rawValue)
            $0.set(MsgKey.username, string: "carol")
            $0.set(MsgKey.password, data: sealed)
            $0.set(MsgKey.publicKey, data: alice.publicKey)
            $0.set(MsgKey.captchaID, string: second.id)
            $0.set(MsgKey.captcha, string: second.challenge)
        }
        #expect(try registration.optionalString(MsgKey.error) == MsgErrorCode.badRequest.rawValue)
        #expect(try await harness.store.account(named: "carol") == nil)
    }

    // MARK: - Bad requests (point 3)

    @Test("bad requests answer badRequest, count nothing and leave the captcha usable")
    func badRequestsCountNothingAndKeepTheCaptcha() async throws {
        let harness = try await Harness(policy: .seedDefault)
        var (alice, client) = try await harness.registered("alice")
        _ = try await harness.registered("bob")
        var quiet = NoStepRecorder()
        try await alice.logIn(client, recorder: &quiet)
        let token = try #require(alice.token)
        let captcha = try await alice.solveCaptcha(client, recorder: &quiet)
        let other = try await alice.solveCaptcha(client, recorder: &quiet)
        let right = Array("correct horse".utf8)
        let cases: [(String, (inout PropertyListDictionary) throws -> Void)] = [
            (
                "unknown op",
                {
                    try Self.login(
                        &$0,
                        username: "alice",
                        sealed: Self.sealedLogin(right, "alice", captcha),
                        captcha: captcha
                    )
                    $0.set(MsgKey.op, string: "Login")
                }
            ),
            (
                "op of the wrong type",
                {
                    try Self.login(
                        &$0,
                        username: "alice",
                        sealed: Self.sealedLogin(right, "alice", captcha),
                        captcha: captcha
                    )
                    $0.set(MsgKey.op, integer: 2)
                }
            ),
            (
                "a sealed password that does not open (sealed for another captcha)",
                {
                    try Self.login(
                        &$0,
                        username: "alice",
                        sealed: Self.sealedLogin(right, "alice", other),
                        captcha: captcha
                    )
                }
            ),
            (
                "a name breaking the name rule",
                {
                    try Self.login(
                        &$0,
                        username: "al ice",
                        sealed: Self.sealedLogin(right, "al ice", captcha),
                        captcha: captcha
                    )
                }
            ),
            (
                "a 1,025-byte password",
                {
                    let long = Array(repeating: UInt8(ascii: "a"), count: MsgLimits.passwordBytes + 1)
                    try Self.login(
                        &$0,
                        username: "alice",
                        sealed: Self.sealedLogin(long, "alice", captcha),
                        captcha: captcha
                    )
                }
            ),
            (
                "a short wrapped key",
                {
                    $0.set(MsgKey.op, string: MsgOp.openChat.rawValue)
                    $0.set(MsgKey.token, string: token)
                    $0.set(MsgKey.with, string: "bob")
                    $0.set(MsgKey.wrappedKeySelf, data: Array(repeating: 1, count: 32))
                    $0.set(MsgKey.wrappedKeyPeer, data: Array(repeating: 1, count: 80))
                }
            ),
        ]
        let before = try BadRequestTests.snapshot(harness.store)
        for (name, fill) in cases {
            var request = PropertyListDictionary()
            try fill(&request)
            let answer = try PropertyListDictionary(
                decoding: try await client.connection.request(try request.encoded(), recorder: &quiet)
            )
            #expect(try answer.optionalBool(MsgKey.ok) == false, "\(name)")
            #expect(try answer.optionalString(MsgKey.error) == MsgErrorCode.badRequest.rawValue, "\(name): \(answer)")
        }
        #expect(try BadRequestTests.snapshot(harness.store) == before, "nothing changed, nothing counted")
        #expect(try await harness.state("alice") == LoginState())
        // The captcha every login above carried still answers one.
        let login = try await alice.login(client, captcha: captcha, recorder: &quiet)
        #expect(login.succeeded, "the captcha was used up: \(login)")
    }
}
