import Crypto
import Foundation
public import LabCore

/// `chat`'s own options.
public struct ChatExtras: MessagingExtras {
    public static let keys = ["messageBytes", "secretLog"]
    /// The plaintext size of each message.
    public var messageBytes: Int
    /// A file to append every password, chat key and plaintext to (hex, one per line), so a
    /// wire tap can be searched for them; for tests, like SSLKEYLOGFILE.
    public var secretLog: String?

    public init(_ object: ScenarioObject) {
        self.messageBytes =
            object.optional(
                "messageBytes",
                expected: "a size from 1 to 60000",
                isValid: { (1...60_000).contains($0) }
            ) ?? 140
        self.secretLog = object.optional("secretLog", expected: "a file path")
    }
}

/// `chat`: two users per client; each iteration one sends an end-to-end encrypted message
/// and the other fetches and decrypts it.
public struct ChatScript: MessagingScript {
    public static let name = "chat"
    public static let summary = "msg/1: send an end-to-end encrypted message, the peer fetches and decrypts it"
    public static let steps: [Step] = [.encrypt, .send, .unwrap, .decrypt, .fetch]
    public static let outcomes: [String] = []

    let extras: ChatExtras
    var sender: ChatSide
    var receiver: ChatSide
    var sent = 0

    public init(extras: ChatExtras, context: ScriptContext) {
        self.extras = extras
        (self.sender, self.receiver) = ChatPair.sides(context)
    }

    public mutating func prepare<R: StepRecorder>(_ client: MessagingClient, recorder: inout R) async throws {
        try await ChatPair.prepare(&self.sender, &self.receiver, client, recorder: &recorder)
        try SecretLog.append(
            to: self.extras.secretLog,
            [
                ("password", Array(self.sender.user.password.utf8)),
                ("password", Array(self.receiver.user.password.utf8)),
                ("chat-key", self.sender.key.map { $0.key.withUnsafeBytes { Array($0) } } ?? []),
            ]
        )
    }

    public mutating func iterate<R: StepRecorder>(_ client: MessagingClient, recorder: inout R) async throws {
        self.sent += 1
        let text = ChatPair.text(number: self.sent, from: self.sender.user.username, bytes: self.extras.messageBytes)
        try SecretLog.append(to: self.extras.secretLog, [("message", text)])
        let id = try await self.sender.send(text, client, recorder: &recorder)
        let received = try await self.receiver.fetch(client, recorder: &recorder)
        guard received.contains(where: { $0.id == id && $0.text == text }) else {
            throw MsgVerdict(.payloadMismatch, "Message \(id) did not arrive intact")
        }
    }
}

/// `rekey`'s own options.
public struct RekeyExtras: MessagingExtras {
    public static let keys = ["history", "messageBytes"]
    /// Messages in the chat before the first rekey.
    public var history: Int
    /// The plaintext size of each message.
    public var messageBytes: Int

    public init(_ object: ScenarioObject) {
        self.history =
            object.optional(
                "history",
                expected: "a message count from 1 to 20000",
                isValid: { (1...MsgLimits.fetchLimit).contains($0) }
            ) ?? 1000
        self.messageBytes =
            object.optional(
                "messageBytes",
                expected: "a size from 1 to 4096",
                isValid: { (1...4096).contains($0) }
            ) ?? 140
    }
}

/// `rekey`: a chat with `history` messages; each iteration re-encrypts all of them under a
/// new key in one request (one server transaction), then the peer fetches and decrypts all.
public struct RekeyScript: MessagingScript {
    public static let name = "rekey"
    public static let summary = "msg/1: re-encrypt a chat's whole history under a new key, one transaction"
    public static let steps: [Step] = [.rekey, .encrypt, .wrap, .fetch, .unwrap, .decrypt]
    public static let outcomes: [String] = []

    let extras: RekeyExtras
    var owner: ChatSide
    var peer: ChatSide
    var texts: [Int64: [UInt8]] = [:]

    public init(extras: RekeyExtras, context: ScriptContext) {
        self.extras = extras
        (self.owner, self.peer) = ChatPair.sides(context)
    }

    public mutating func prepare<R: StepRecorder>(_ client: MessagingClient, recorder: inout R) async throws {
        try await ChatPair.prepare(&self.owner, &self.peer, client, recorder: &recorder)
        var quiet = NoStepRecorder()
        for number in 1...self.extras.history {
            let text = ChatPair.text(number: number, from: self.owner.user.username, bytes: self.extras.messageBytes)
            self.texts[try await self.owner.send(text, client, recorder: &quiet)] = text
        }
    }

    public mutating func iterate<R: StepRecorder>(_ client: MessagingClient, recorder: inout R) async throws {
        _ = try await self.owner.rekey(client, peerKey: self.peer.user.publicKey, recorder: &recorder).orThrow()
        let history = try await self.peer.fetch(client, fromStart: true, recorder: &recorder)
        guard history.count == self.texts.count, history.allSatisfy({ self.texts[$0.id] == $0.text }) else {
            throw MsgVerdict(.payloadMismatch, "After the rekey the history differs from what was sent")
        }
    }
}

/// `password-change`: each iteration changes the password to a new one, giving the current.
public struct PasswordChangeScript: MessagingScript {
    public static let name = "password-change"
    public static let summary = "msg/1: change the password, giving the current one (two KDF runs)"
    public static let steps: [Step] = [.passwordChange, .kdf]
    public static let outcomes = ["changed"]

    var user: MessagingUser

    public init(extras: NoExtras, context: ScriptContext) {
        self.user = MessagingUser(
            username: context.username("user"),
            password: ScriptContext.password(),
            suite: context.hpke
        )
    }

    public mutating func prepare<R: StepRecorder>(_ client: MessagingClient, recorder: inout R) async throws {
        try await self.user.register(client, recorder: &recorder).orThrow()
        try await self.user.logIn(client, recorder: &recorder)
    }

    public mutating func iterate<R: StepRecorder>(_ client: MessagingClient, recorder: inout R) async throws {
        try await self.user.changePassword(client, to: ScriptContext.password(), recorder: &recorder).orThrow()
        recorder.count("changed")
    }
}

/// Two users of one simulated client who chat with each other.
enum ChatPair {
    /// Alice and Bob, each with a fresh password, each the other's peer.
    static func sides(_ context: ScriptContext) -> (alice: ChatSide, bob: ChatSide) {
        let alice = MessagingUser(
            username: context.username("alice"),
            password: ScriptContext.password(),
            suite: context.hpke
        )
        let bob = MessagingUser(
            username: context.username("bob"),
            password: ScriptContext.password(),
            suite: context.hpke
        )
        return (
            ChatSide(user: alice, peer: bob.username, provider: context.provider),
            ChatSide(user: bob, peer: alice.username, provider: context.provider)
        )
    }

    /// Registers and logs in both, and opens their chat.
    static func prepare<R: StepRecorder>(
        _ first: inout ChatSide,
        _ second: inout ChatSide,
        _ client: MessagingClient,
        recorder: inout R
    ) async throws {
        try await first.user.register(client, recorder: &recorder).orThrow()
        try await second.user.register(client, recorder: &recorder).orThrow()
        try await first.user.logIn(client, recorder: &recorder)
        try await second.user.logIn(client, recorder: &recorder)
        try await first.open(client, recorder: &recorder).orThrow()
    }

    /// A recognisable message of `bytes` bytes.
    static func text(number: Int, from sender: String, bytes: Int) -> [UInt8] {
        var text = Array("message \(number) from \(sender): ".utf8)
        let filler = Array(Token.random(bytes: max(1, bytes / 2 + 1)).utf8)
        text += filler
        return Array(text.prefix(bytes))
    }
}

/// Appends secrets to a file as `kind hex` lines (see `ChatExtras.secretLog`).
enum SecretLog {
    private static let lock = NSLock()

    static func append(to path: String?, _ entries: [(String, [UInt8])]) throws {
        guard let path else { return }
        let lines = entries.map { "\($0.0) " + $0.1.map { String(format: "%02x", $0) }.joined() + "\n" }.joined()
        try self.lock.withLock {
            if !FileManager.default.fileExists(atPath: path) {
                // Passwords, chat keys and plaintexts: readable by the owner only.
                _ = FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
            }
            guard let handle = FileHandle(forWritingAtPath: path) else {
                throw LabError(.storage, "Cannot write the secret log \(path)")
            }
            defer { try? handle.close() }
            try handle.seekToEnd()
            try handle.write(contentsOf: Data(lines.utf8))
        }
    }
}
