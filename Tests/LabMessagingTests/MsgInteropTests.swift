import Crypto
import Foundation
import GRDB
import LabCore
import LabMessaging
import LabOpenSSL
import LabSwiftCrypto
import LabTestSupport
import LabTransports
import LabWire
import Testing

/// msg/1 spoken by an independent client: `Tests/Interop/msg_peer.py`, written from the
/// msg/1 reference (now docs/protocol.md §4) and docs/protocol.md §1 alone (Python's `plistlib`
/// and `cryptography`, with the library's HPKE), against a real `lab serve` over TCP on loopback.
@Suite(.tier(.load), .serialized, .timeLimit(.minutes(2)))
struct MsgInteropTests {
    /// How long a server may take to print a line or to stop.
    static let wait = Duration.seconds(20)
    /// `Tests/Interop/msg_peer.py`.
    static let script = RepositoryPaths.interop.appendingPathComponent("msg_peer.py").path
    /// What `converse` must report as checked.
    static let conversationChecks = [
        "containerValueBadRequest", "register", "badCaptchaWithFreshCaptcha", "badCredentials", "login",
        "captchaSingleUse", "peerKey",
        "openChat", "fetchDecrypt", "rekey", "staleSendConflict", "fetchAfterRekey", "changePassword", "logout",
        "newPasswordLogin",
    ]

    /// One `python3 msg_peer.py …` run.
    struct PeerRun: CustomStringConvertible {
        var status: Int32
        var output: String
        var errors: String

        /// The JSON object on the last line of stdout.
        var object: [String: Any] {
            guard let line = self.output.split(separator: "\n").last,
                let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            else { return [:] }
            return object
        }

        var ok: Bool? { self.object["ok"] as? Bool }
        var error: String? { self.object["error"] as? String }
        func strings(_ key: String) -> [String] { self.object[key] as? [String] ?? [] }

        var description: String { "exit \(self.status); stdout: \(self.output) stderr: \(self.errors)" }
    }

    /// A `lab serve` with msg/1 on a fresh SQLite file and a cheap KDF.
    struct Served {
        let folder: URL
        let server: ServerProcess
        let address: ListeningAddress

        var database: URL { self.folder.appendingPathComponent("m.sqlite") }

        static func start(_ extra: [String] = []) async throws -> Served {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
                "msg-interop-\(UUID().uuidString)"
            )
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let (server, address) = try await LabProcess.serve(
                [
                    "--db", folder.appendingPathComponent("m.sqlite").path, "--kdf", "pbkdf2-sha256",
                    "--pbkdf2-iterations", "1000",
                ] + extra,
                timeout: MsgInteropTests.wait
            )
            return Served(folder: folder, server: server, address: address)
        }

        /// Stops the server with SIGINT (SIGTERM may be blocked in a test's children) and
        /// expects a clean exit.
        func stop() async throws {
            let status = try await self.server.stop(signal: SIGINT, timeout: MsgInteropTests.wait)
            #expect(status == 0, "lab serve's exit status; stderr: \(self.server.errors)")
        }

        func cleanUp() {
            self.server.terminate()
            try? FileManager.default.removeItem(at: self.folder)
        }
    }

    /// Runs `python3 msg_peer.py <arguments>`; a missing interpreter or library is a failure.
    static func peer(_ arguments: [String]) async throws -> PeerRun {
        let outcome = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["python3", Self.script] + arguments
        )
        let run = PeerRun(status: outcome.status, output: outcome.output, errors: outcome.errors)
        if run.errors.contains("ModuleNotFoundError") || run.errors.contains("No such file") {
            throw LabError(
                .unsupported,
                "msg_peer.py cannot run (install python3 and cryptography>=48): \(run.errors)"
            )
        }
        return run
    }

    /// `converse` with a fresh name prefix; expects it to succeed.
    static func converse(against served: Served) async throws -> (prefix: String, run: PeerRun) {
        let prefix = "py-" + UUID().uuidString.prefix(8).lowercased()
        let run = try await Self.peer(["converse", served.address.host, "\(served.address.port)", prefix])
        #expect(run.status == 0 && run.ok == true, "\(run)")
        return (prefix, run)
    }

    /// A user registered by the lab's own Swift client over TCP.
    static func registerWithSwift(_ username: String, password: String, at address: ListeningAddress) async throws {
        let endpoint = try await TCPTransport(options: TransportOptions()).remote(
            host: address.host,
            port: address.port
        )
        try await withEndpoint(endpoint) { endpoint in
            var quiet = NoStepRecorder()
            let client = MessagingClient(connection: try await endpoint.connect(recorder: &quiet))
            var user = MessagingUser(username: username, password: password)
            try await user.register(client, recorder: &quiet).orThrow()
            await client.connection.close()
        }
    }

    /// One login from the lab's Swift client: the token, or the refusal's code.
    static func loginWithSwift(
        _ username: String,
        password: String,
        at address: ListeningAddress
    ) async throws -> Result<String, MsgFailure> {
        let endpoint = try await TCPTransport(options: TransportOptions()).remote(
            host: address.host,
            port: address.port
        )
        return try await withEndpoint(endpoint) { endpoint in
            var quiet = NoStepRecorder()
            let client = MessagingClient(connection: try await endpoint.connect(recorder: &quiet))
            var user = MessagingUser(username: username, password: password)
            let captcha = try await user.solveCaptcha(client, recorder: &quiet)
            let result = try await user.login(client, captcha: captcha, recorder: &quiet)
            if case .success = result { try await user.logout(client, recorder: &quiet) }
            await client.connection.close()
            return result
        }
    }

    /// Bytes from hexadecimal text.
    static func bytes(hex: String) throws -> [UInt8] {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { throw LabError(.malformedMessage, "odd-length hex '\(hex)'") }
        return try stride(from: 0, to: digits.count, by: 2).map { index in
            guard let byte = UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16) else {
                throw LabError(.malformedMessage, "not hex: '\(hex)'")
            }
            return byte
        }
    }

    // MARK: - Tests

    @Test(
        "msg_peer.py's hand-written HPKE reproduces RFC 9180 A.2.1, and the cryptography library's HPKE and it open each other's output"
    )
    func pythonHPKEMatchesTheRFCVector() async throws {
        let run = try await Self.peer(["selftest"])
        #expect(run.status == 0 && run.ok == true, "\(run)")
        #expect(run.object["vector"] as? String == "RFC 9180 A.2.1", "\(run)")
        let checks = run.object["checks"] as? [String: Bool] ?? [:]
        for check in ["library sealed, hand-written opens", "hand-written sealed, library opens", "wrong info refused"]
        {
            #expect(checks[check] == true, "check '\(check)': \(run)")
        }
    }

    @Test(
        "The Python client converses with lab serve: accounts, captchas, chat, rekey, stale send, password change; the lab logs in as it"
    )
    func pythonClientConverses() async throws {
        let served = try await Served.start()
        defer { served.cleanUp() }
        let (prefix, run) = try await Self.converse(against: served)
        #expect(run.object["messages"] as? Int == 3, "\(run)")
        #expect(run.object["rekeyedVersion"] as? Int == 2, "\(run)")
        let checks = run.object["checks"] as? [String: Bool] ?? [:]
        for check in Self.conversationChecks {
            #expect(checks[check] == true, "check '\(check)': \(run)")
        }
        #expect(run.strings("users") == ["\(prefix)-a", "\(prefix)-b"], "\(run)")

        // The accounts Python registered (and the password it changed) work from the Swift client.
        let passwords = run.strings("passwords")
        try #require(passwords.count == 3, "\(run)")
        let (old, bob, new) = (passwords[0], passwords[1], passwords[2])
        #expect(try await Self.loginWithSwift("\(prefix)-a", password: new, at: served.address).succeeded)
        #expect(try await Self.loginWithSwift("\(prefix)-b", password: bob, at: served.address).succeeded)
        let stale = try await Self.loginWithSwift("\(prefix)-a", password: old, at: served.address)
        #expect(stale.failureCode == .badCredentials, "the password before the change: \(stale)")
        try await served.stop()
    }

    @Test("After the Python conversation the database holds no plaintext, and the chat's messages are at key version 2")
    func serverStoresNoPlaintext() async throws {
        let served = try await Served.start()
        defer { served.cleanUp() }
        let (prefix, run) = try await Self.converse(against: served)
        let texts = run.strings("texts")
        let passwords = run.strings("passwords")
        try #require(texts.count == 3 && passwords.count == 3, "\(run)")
        // A clean stop checkpoints the WAL; whatever is left of it is searched too.
        try await served.stop()

        let files = try FileManager.default.contentsOfDirectory(atPath: served.folder.path).filter {
            $0.hasPrefix("m.sqlite")
        }
        try #require(files.contains("m.sqlite"))
        var bytes = Data()
        for file in files { bytes.append(try Data(contentsOf: served.folder.appendingPathComponent(file))) }
        // The scan sees the stored data: the user names are there in the clear.
        #expect(bytes.range(of: Data("\(prefix)-a".utf8)) != nil, "user names are stored; the scan must find them")
        for secret in texts + passwords {
            #expect(bytes.range(of: Data(secret.utf8)) == nil, "'\(secret)' is stored in the clear in \(files)")
        }

        let database = try DatabaseQueue(path: served.database.path)
        let (chatVersions, messageVersions, kdfs) = try await database.read { db in
            (
                try Int.fetchAll(db, sql: "SELECT keyVersion FROM chats"),
                try Int.fetchAll(db, sql: "SELECT keyVersion FROM messages ORDER BY id"),
                try String.fetchAll(db, sql: "SELECT kdf FROM users ORDER BY id")
            )
        }
        #expect(chatVersions == [2], "one chat, rekeyed once")
        #expect(messageVersions == [2, 2, 2], "the three messages, re-encrypted under version 2")
        #expect(kdfs == ["pbkdf2-sha256:1000", "pbkdf2-sha256:1000"], "password hashes with their KDF")
    }

    @Test("A user the lab's Swift client registered logs in from Python; a wrong password gets badCredentials")
    func swiftRegisteredUserLogsInFromPython() async throws {
        let served = try await Served.start()
        defer { served.cleanUp() }
        let username = "swift-" + UUID().uuidString.prefix(8).lowercased()
        let password = "swift password \(UUID().uuidString.prefix(8))"
        try await Self.registerWithSwift(username, password: password, at: served.address)

        let host = served.address.host
        let port = "\(served.address.port)"
        let good = try await Self.peer(["login-as", host, port, username, password])
        #expect(good.status == 0 && good.ok == true, "\(good)")
        let wrong = try await Self.peer(["login-as", host, port, username, password + "x"])
        #expect(wrong.status == 1 && wrong.ok == false && wrong.error == "badCredentials", "\(wrong)")
        let unknown = try await Self.peer(["login-as", host, port, username + "-nobody", password])
        #expect(unknown.ok == false && unknown.error == "badCredentials", "an unknown user: \(unknown)")
        try await served.stop()
    }

    @Test(
        "Chats interoperate both ways: the lab's client reads the chat Python keyed and rekeyed; Python reads a chat the lab's client opened",
        arguments: MsgHPKE.allCases
    )
    func chatsInteroperateBothWays(hpke: MsgHPKE) async throws {
        // The lab's side makes and reads its messages on swift-crypto, or, with X-Wing, on
        // OpenSSL: both must meet Python's AES-GCM.
        let provider: any CryptoProvider = hpke == .x25519 ? SwiftCryptoProvider() : try OpenSSLProvider()
        let served = try await Served.start(["--hpke", hpke.rawValue])
        defer { served.cleanUp() }
        let (prefix, run) = try await Self.converse(against: served)
        #expect(run.object["hpke"] as? String == hpke.rawValue, "Python learned the server's suite from its captchas")
        let (alice, bob) = ("\(prefix)-a", "\(prefix)-b")
        let texts = run.strings("texts")
        let passwords = run.strings("passwords")
        let keys = run.object["keys"] as? [String: String] ?? [:]
        try #require(texts.count == 3 && passwords.count == 3, "\(run)")
        let bobKeyHex = try #require(keys[bob], "\(run)")
        // Python's X-Wing keys are its own format (ML-KEM seed ‖ X25519 key), not X-Wing's 32-byte
        // seed swift-crypto takes: the lab reads bob's chat with his key over X25519 only. Over
        // X-Wing, Python → Swift is the passwords Python sealed to the server's key, which the
        // server opened to register and log its users in.
        let bobKey =
            hpke == .x25519
            ? MsgKeyPair(
                x25519: try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: try Self.bytes(hex: bobKeyHex))
            )
            : nil

        // Python → Swift: bob's view of the chat through the lab's own HPKE, unpacking and AES-GCM.
        let endpoint = try await TCPTransport(options: TransportOptions())
            .remote(host: served.address.host, port: served.address.port)
        let (carolName, note) = try await withEndpoint(endpoint) { endpoint in
            var quiet = NoStepRecorder()
            let client = MessagingClient(connection: try await endpoint.connect(recorder: &quiet))
            if let bobKey {
                var bobUser = MessagingUser(username: bob, password: passwords[1])
                try await bobUser.logIn(client, recorder: &quiet)
                let token = try #require(bobUser.token)
                let answer = try await client.call(
                    .fetch,
                    {
                        $0.set(MsgKey.token, string: token)
                        $0.set(MsgKey.with, string: alice)
                    },
                    recorder: &quiet
                ).orThrow()
                let version = try answer.integer(MsgKey.keyVersion)
                #expect(version == 2)
                let key = try MsgCrypto.unwrapChatKey(
                    try answer.data(MsgKey.wrappedKey),
                    with: bobKey,
                    context: MsgCrypto.chatKeyContext(users: (bob, alice), version: version)
                )
                let messages = try MessagePacking.unpack(try answer.data(MsgKey.messages))
                let decrypted = try messages.map {
                    let text = try MsgCrypto.decrypt($0.ciphertext, key: key, sender: $0.sender, provider: provider)
                    return String(decoding: text, as: UTF8.self)
                }
                #expect(decrypted == texts)
                #expect(messages.allSatisfy { $0.sender == alice && $0.keyVersion == 2 }, "\(messages)")
                try await bobUser.logout(client, recorder: &quiet)
            }

            // Swift → Python: a user of the lab's client opens a chat with bob and writes to him.
            let carolName = "swift-" + UUID().uuidString.prefix(8).lowercased()
            var carol = MessagingUser(
                username: carolName,
                password: "swift password \(UUID().uuidString.prefix(8))",
                suite: hpke
            )
            try await carol.register(client, recorder: &quiet).orThrow()
            try await carol.logIn(client, recorder: &quiet)
            var side = ChatSide(user: carol, peer: bob, provider: provider)
            try await side.open(client, recorder: &quiet).orThrow()
            let note = "hello from the lab's Swift client \(UUID().uuidString)"
            _ = try await side.send(Array(note.utf8), client, recorder: &quiet)
            try await carol.logout(client, recorder: &quiet)
            await client.connection.close()
            return (carolName, note)
        }

        let host = served.address.host
        let port = "\(served.address.port)"
        let read = try await Self.peer(["read-chat", host, port, bob, passwords[1], carolName, bobKeyHex])
        #expect(read.status == 0 && read.ok == true, "\(read)")
        #expect(read.object["keyVersion"] as? Int == 1, "\(read)")
        let received = read.object["messages"] as? [[String: Any]] ?? []
        #expect(received.map { $0["text"] as? String } == [note], "\(read)")
        #expect(received.map { $0["sender"] as? String } == [carolName], "\(read)")
        try await served.stop()
    }
}
