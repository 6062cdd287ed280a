import Crypto
import Foundation
import LabCore
import LabMessaging
import LabSwiftCrypto
import LabTestSupport
import LabTransports
import LabWire
import Testing

/// What the msg/1 reference (docs/protocol.md §4) says, point by point, where an outside client
/// found it silent or wrong (issue 18, point 10).
@Suite(.tier(.load)) struct ReferenceTests {
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

    // MARK: - Policies (point 3)

    @Test(
        "seed: the 3rd failure carries until (now + 30 min); after it, the 4th and the locking 5th are badCredentials without until; then locked"
    )
    func seedLockingFailureAnswer() async throws {
        let harness = try await Harness(policy: .seedDefault)
        var (alice, client) = try await harness.registered("alice")
        let start = Int(harness.clock.now().timeIntervalSince1970)
        var answers: [Result<String, MsgFailure>] = []
        for _ in 0..<3 { answers.append(try await Harness.attempt(&alice, client, password: "wrong password")) }
        #expect(answers.map(\.failureCode) == [.badCredentials, .badCredentials, .badCredentials])
        #expect(answers.map(Self.until) == [nil, nil, start + 1800])
        let early = try await Harness.attempt(&alice, client, password: "correct horse")
        #expect(early.failureCode == .postponed && Self.until(early) == start + 1800, "\(early)")
        harness.clock.advance(by: 1800)
        let fourth = try await Harness.attempt(&alice, client, password: "wrong password")
        let fifth = try await Harness.attempt(&alice, client, password: "wrong password")
        #expect(fourth.failureCode == .badCredentials && Self.until(fourth) == nil, "\(fourth)")
        #expect(fifth.failureCode == .badCredentials && Self.until(fifth) == nil, "the locking failure: \(fifth)")
        #expect(try await harness.state("alice") == LoginState(failures: 5, postponedUntil: nil, locked: true))
        let after = try await Harness.attempt(&alice, client, password: "correct horse")
        #expect(after.failureCode == .locked, "\(after)")
    }

    @Test(
        "throttle: 5 failures answer badCredentials without until; the 6th is checked, counted, and carries until (now + 60 s)"
    )
    func throttleFreeFailures() async throws {
        let harness = try await Harness(policy: .default)
        var (alice, client) = try await harness.registered("alice")
        let start = Int(harness.clock.now().timeIntervalSince1970)
        var answers: [Result<String, MsgFailure>] = []
        for _ in 0..<6 { answers.append(try await Harness.attempt(&alice, client, password: "wrong password")) }
        #expect(answers.allSatisfy { $0.failureCode == .badCredentials }, "\(answers)")
        #expect(answers.map(Self.until) == [nil, nil, nil, nil, nil, start + 60])
        #expect(try await harness.state("alice")?.failures == 6)
        let seventh = try await Harness.attempt(&alice, client, password: "correct horse")
        #expect(seventh.failureCode == .postponed && Self.until(seventh) == start + 60, "\(seventh)")
        #expect(try await harness.state("alice")?.failures == 6, "a postponed attempt counts nothing")
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

    // MARK: - Captchas, fields, names (point 3)

    @Test("a captcha asked for on one connection answers a login on another")
    func captchaFromAnotherConnection() async throws {
        let harness = try await Harness()
        _ = try await harness.registered("alice")
        let endpoint = try await TCPTransport(options: TransportOptions()).serve(harness.service)
        try await withEndpoint(endpoint) { endpoint in
            var quiet = NoStepRecorder()
            let first = MessagingClient(connection: try await endpoint.connect(recorder: &quiet))
            let second = MessagingClient(connection: try await endpoint.connect(recorder: &quiet))
            var alice = MessagingUser(username: "alice", password: "correct horse")
            let captcha = try await alice.solveCaptcha(first, recorder: &quiet)
            await first.connection.close()
            let login = try await alice.login(second, captcha: captcha, recorder: &quiet)
            #expect(login.succeeded, "\(login)")
            await second.connection.close()
        }
    }

    @Test("unknown fields are ignored")
    func unknownFieldsAreIgnored() async throws {
        let harness = try await Harness()
        var (alice, client) = try await harness.registered("alice")
        var quiet = NoStepRecorder()
        let captcha = try await alice.solveCaptcha(client, recorder: &quiet)
        let sealed = try Self.sealedLogin(Array("correct horse".utf8), "alice", captcha)
        let answer = try await BadRequestTests.send(client) {
            Self.login(&$0, username: "alice", sealed: sealed, captcha: captcha)
            $0.set("colour", string: "blue")
            $0.set("ok", bool: false)
            $0.set("retries", integer: 3)
        }
        #expect(try answer.optionalBool(MsgKey.ok) == true, "\(answer)")
        #expect(try !answer.string(MsgKey.token).isEmpty)
        let extra = try await BadRequestTests.send(client) {
            $0.set(MsgKey.op, string: MsgOp.captcha.rawValue)
            $0.set("extra", data: [1, 2, 3])
        }
        #expect(try extra.optionalBool(MsgKey.ok) == true, "\(extra)")
    }

    @Test("user names are case-sensitive: 'Alice' and 'alice' are two accounts")
    func namesAreCaseSensitive() async throws {
        let harness = try await Harness()
        var (upper, client) = try await harness.registered("Alice", password: "upper password")
        var quiet = NoStepRecorder()
        var lower = MessagingUser(username: "alice", password: "lower password")
        let registered = try await lower.register(client, recorder: &quiet)
        #expect(registered.succeeded, "\(registered)")
        #expect(try await Harness.attempt(&upper, client, password: "upper password").succeeded)
        #expect(try await Harness.attempt(&lower, client, password: "lower password").succeeded)
        var shouting = MessagingUser(username: "ALICE", password: "upper password")
        #expect(try await Harness.attempt(&shouting, client, password: "upper password").failureCode == .badCredentials)
        #expect(try await Harness.attempt(&lower, client, password: "upper password").failureCode == .badCredentials)
    }

    @Test("rekey's answer is the current version + 1: 1 → 2 → 3")
    func rekeyVersionIsCurrentPlusOne() async throws {
        let harness = try await Harness()
        var (alice, client) = try await harness.registered("alice")
        var (bob, _) = try await harness.registered("bob")
        var quiet = NoStepRecorder()
        try await alice.logIn(client, recorder: &quiet)
        try await bob.logIn(client, recorder: &quiet)
        var side = ChatSide(user: alice, peer: "bob", provider: SwiftCryptoProvider())
        try await side.open(client, recorder: &quiet).orThrow()
        _ = try await side.send(Array("first".utf8), client, recorder: &quiet)
        #expect(try await side.rekey(client, peerKey: bob.publicKey, recorder: &quiet).get() == 2)
        #expect(try await side.rekey(client, peerKey: bob.publicKey, recorder: &quiet).get() == 3)
        var reader = ChatSide(user: bob, peer: "alice", provider: SwiftCryptoProvider())
        let texts = try await reader.fetch(client, fromStart: true, recorder: &quiet)
        #expect(texts.map { String(decoding: $0.text, as: UTF8.self) } == ["first"])
        #expect(reader.key?.version == 3)
    }

    // MARK: - HPKE (point 6)

    @Test(
        "a password sealed as the reference says (HPKE info with the op, field and binding; no associated data) logs in"
    )
    func passwordSealedAsTheReferenceSays() async throws {
        let harness = try await Harness()
        var (alice, client) = try await harness.registered("alice")
        var quiet = NoStepRecorder()
        let captcha = try await alice.solveCaptcha(client, recorder: &quiet)
        let info = "crypto-lab msg/1 password\nlogin\npassword\nalice\n\(captcha.id)"
        var sender = try HPKE.Sender(
            recipientKey: try Curve25519.KeyAgreement.PublicKey(rawRepresentation: captcha.serverKey),
            ciphersuite: .Curve25519_SHA256_ChachaPoly,
            info: Data(info.utf8)
        )
        let sealed = Array(sender.encapsulatedKey) + Array(try sender.seal(Array("correct horse".utf8)))
        let answer = try await BadRequestTests.send(client) {
            Self.login(&$0, username: "alice", sealed: sealed, captcha: captcha)
        }
        #expect(try answer.optionalBool(MsgKey.ok) == true, "\(answer)")
    }

    @Test(
        "a chat key is wrapped as the reference says: HPKE info 'crypto-lab msg/1 chat key\\n<lower>\\n<higher>\\nv<version>', no associated data"
    )
    func chatKeyWrappedAsTheReferenceSays() throws {
        let bob = Curve25519.KeyAgreement.PrivateKey()
        let key = SymmetricKey(size: .bits256)
        let wrapped = try MsgCrypto.wrapChatKey(
            key,
            for: Array(bob.publicKey.rawRepresentation),
            context: MsgCrypto.chatKeyContext(users: ("bob", "alice"), version: 3)
        )
        #expect(wrapped.count == 80)
        var recipient = try HPKE.Recipient(
            privateKey: bob,
            ciphersuite: .Curve25519_SHA256_ChachaPoly,
            info: Data("crypto-lab msg/1 chat key\nalice\nbob\nv3".utf8),
            encapsulatedKey: Data(wrapped.prefix(32))
        )
        let opened = try recipient.open(Data(wrapped.dropFirst(32)))
        #expect(opened == key.withUnsafeBytes { Data($0) })
    }
}
