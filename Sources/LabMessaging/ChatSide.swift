public import Crypto
import Foundation
public import LabCore
import LabWire

/// One side of a chat: the user, the peer's name, and the chat key once known.
public struct ChatSide: Sendable {
    /// This side's user (logged in).
    public var user: MessagingUser
    /// The other participant.
    public let peer: String
    /// The chat key and its version, once opened or fetched.
    public var key: (version: Int, key: SymmetricKey)?
    /// The last message id seen.
    public var lastSeen: Int64 = 0
    /// What makes chat keys and encrypts and decrypts messages (AES-256-GCM).
    public let provider: any CryptoProvider

    /// A side of the chat between `user` and `peer`, its messages on `provider`.
    public init(user: MessagingUser, peer: String, provider: any CryptoProvider) {
        self.user = user
        self.peer = peer
        self.provider = provider
    }

    /// Opens the chat: makes a fresh AES-256 key and stores it wrapped for both users.
    public mutating func open<R: StepRecorder>(
        _ client: MessagingClient,
        peerKey: [UInt8]? = nil,
        recorder: inout R
    ) async throws -> Result<Void, MsgFailure> {
        let token = try self.user.requireToken()
        let theirKey = try await peerKey.asyncOr { try await self.peerKey(client, recorder: &recorder) }
        let key = try MsgCrypto.chatKey(provider: self.provider)
        let context = MsgCrypto.chatKeyContext(users: (self.user.username, self.peer), version: 1)
        let mine = try MsgCrypto.wrapChatKey(key, for: self.user.publicKey, suite: self.user.suite, context: context)
        let theirs = try MsgCrypto.wrapChatKey(key, for: theirKey, suite: self.user.suite, context: context)
        let peer = self.peer
        let answer = try await client.call(
            .openChat,
            {
                $0.set(MsgKey.token, string: token)
                $0.set(MsgKey.with, string: peer)
                $0.set(MsgKey.wrappedKeySelf, data: mine)
                $0.set(MsgKey.wrappedKeyPeer, data: theirs)
            },
            recorder: &recorder
        )
        if case .success = answer { self.key = (1, key) }
        return answer.map { _ in () }
    }

    /// The peer's public key.
    public func peerKey<R: StepRecorder>(_ client: MessagingClient, recorder: inout R) async throws -> [UInt8] {
        let token = try self.user.requireToken()
        let peer = self.peer
        let answer = try await client.call(
            .peerKey,
            {
                $0.set(MsgKey.token, string: token)
                $0.set(MsgKey.username, string: peer)
            },
            recorder: &recorder
        ).orThrow()
        return try answer.data(MsgKey.publicKey)
    }

    /// Encrypts and sends `text` (timed as `send`, encryption included).
    public mutating func send<R: StepRecorder>(
        _ text: [UInt8],
        _ client: MessagingClient,
        recorder: inout R
    ) async throws -> Int64 {
        let token = try self.user.requireToken()
        guard let (version, key) = self.key else { throw LabError(.unsupported, "Open or fetch the chat first") }
        let start = Stopwatch.now()
        let ciphertext = try recorder.measure(.encrypt) {
            try MsgCrypto.encrypt(text, key: key, sender: self.user.username, provider: self.provider)
        }
        let peer = self.peer
        let answer = try await client.call(
            .send,
            {
                $0.set(MsgKey.token, string: token)
                $0.set(MsgKey.to, string: peer)
                $0.set(MsgKey.ciphertext, data: ciphertext)
                $0.set(MsgKey.keyVersion, integer: version)
            },
            recorder: &recorder
        ).orThrow()
        recorder.record(.send, nanoseconds: Stopwatch.now() &- start)
        return Int64(try answer.integer(MsgKey.id))
    }

    /// Fetches the messages after `lastSeen` (or all, with `fromStart`) and decrypts them
    /// with the chat key it unwraps (timed as `fetch`, decryption included). The server
    /// answers in pages that fit its frame limit (`more`); this asks for each in turn.
    public mutating func fetch<R: StepRecorder>(
        _ client: MessagingClient,
        fromStart: Bool = false,
        recorder: inout R
    ) async throws -> [(id: Int64, sender: String, text: [UInt8])] {
        let token = try self.user.requireToken()
        let start = Stopwatch.now()
        let peer = self.peer
        var after = fromStart ? 0 : self.lastSeen
        var texts: [(Int64, String, [UInt8])] = []
        while true {
            let from = after
            let answer = try await client.call(
                .fetch,
                {
                    $0.set(MsgKey.token, string: token)
                    $0.set(MsgKey.with, string: peer)
                    $0.set(MsgKey.after, integer: Int(from))
                },
                recorder: &recorder
            ).orThrow()
            let messages = try self.open(answer, into: &texts, recorder: &recorder)
            if let last = messages.last {
                self.lastSeen = max(self.lastSeen, last.id)
                after = last.id
            }
            // An empty page ends it too, whatever `more` says: no loop without progress.
            guard try answer.optionalBool(MsgKey.more) == true, !messages.isEmpty else { break }
        }
        recorder.record(.fetch, nanoseconds: Stopwatch.now() &- start)
        return texts
    }

    /// Unwraps a page's chat key if it is new and decrypts its messages into `texts`;
    /// returns the page's messages.
    private mutating func open<R: StepRecorder>(
        _ answer: PropertyListDictionary,
        into texts: inout [(Int64, String, [UInt8])],
        recorder: inout R
    ) throws -> [StoredMessage] {
        let version = try answer.integer(MsgKey.keyVersion)
        if self.key?.version != version {
            let context = MsgCrypto.chatKeyContext(users: (self.user.username, self.peer), version: version)
            let key = try recorder.measure(.unwrap) {
                try MsgCrypto.unwrapChatKey(
                    try answer.data(MsgKey.wrappedKey),
                    with: self.user.keyPair,
                    context: context
                )
            }
            self.key = (version, key)
        }
        let key = self.key!.key
        let messages = try MessagePacking.unpack(try answer.data(MsgKey.messages))
        texts.reserveCapacity(texts.count + messages.count)
        try recorder.measure(.decrypt) {
            for message in messages {
                guard message.keyVersion == version else {
                    throw MsgVerdict(
                        .decryptFailed,
                        "Message \(message.id) is under key version \(message.keyVersion), the chat at \(version)"
                    )
                }
                texts.append(
                    (
                        message.id, message.sender,
                        try MsgCrypto.decrypt(message.ciphertext, key: key, sender: message.sender, provider: self.provider)
                    )
                )
            }
        }
        return messages
    }

    /// The most bytes of re-encrypted messages one `rekey` request carries: under the
    /// default 5 MiB frame limit, with room for the rest of the request.
    public static let rekeyPageBytes = 4 << 20

    /// Re-encrypts the whole history under a fresh key and stores it (timed as `rekey`:
    /// fetch, decryption, encryption, wrapping and the server's transaction): in one
    /// request, or in pages of at most `pageBytes` that the server applies together with the
    /// last one (docs/protocol.md §4.6).
    public mutating func rekey<R: StepRecorder>(
        _ client: MessagingClient,
        peerKey: [UInt8],
        newKey: SymmetricKey? = nil,
        pageBytes: Int = ChatSide.rekeyPageBytes,
        recorder: inout R
    ) async throws -> Result<Int, MsgFailure> {
        let token = try self.user.requireToken()
        let start = Stopwatch.now()
        var inner = NoStepRecorder()
        let history = try await self.fetch(client, fromStart: true, recorder: &inner)
        guard let (version, _) = self.key else { throw LabError(.unsupported, "Open the chat first") }
        let key = try newKey ?? MsgCrypto.chatKey(provider: self.provider)
        let provider = self.provider
        let reencrypted = try recorder.measure(.encrypt) {
            try history.map {
                (id: $0.id, ciphertext: try MsgCrypto.encrypt($0.text, key: key, sender: $0.sender, provider: provider))
            }
        }
        let context = MsgCrypto.chatKeyContext(users: (self.user.username, self.peer), version: version + 1)
        let (mine, theirs) = try recorder.measure(.wrap) {
            (
                try MsgCrypto.wrapChatKey(key, for: self.user.publicKey, suite: self.user.suite, context: context),
                try MsgCrypto.wrapChatKey(key, for: peerKey, suite: self.user.suite, context: context)
            )
        }
        let pages = Self.pages(reencrypted, bytes: pageBytes)
        let peer = self.peer
        var answer: Result<PropertyListDictionary, MsgFailure> = .failure(
            MsgFailure(code: .serverError, message: "No rekey request was sent")
        )
        for (index, page) in pages.enumerated() {
            let paged = pages.count > 1
            let more = index < pages.count - 1
            answer = try await client.call(
                .rekey,
                {
                    $0.set(MsgKey.token, string: token)
                    $0.set(MsgKey.with, string: peer)
                    $0.set(MsgKey.keyVersion, integer: version)
                    $0.set(MsgKey.wrappedKeySelf, data: mine)
                    $0.set(MsgKey.wrappedKeyPeer, data: theirs)
                    $0.set(MsgKey.messages, data: MessagePacking.pack(reencrypted: page))
                    if paged {
                        $0.set(MsgKey.page, integer: index)
                        $0.set(MsgKey.more, bool: more)
                    }
                },
                recorder: &recorder
            )
            if case .failure = answer { break }
        }
        switch answer {
        case .success(let dictionary):
            let next = try dictionary.integer(MsgKey.keyVersion)
            self.key = (next, key)
            recorder.record(.rekey, nanoseconds: Stopwatch.now() &- start)
            return .success(next)
        case .failure(let failure):
            return .failure(failure)
        }
    }

    /// `records` cut into pages of at most `bytes` packed (at least one record each, and one
    /// page for an empty history).
    static func pages(_ records: [(id: Int64, ciphertext: [UInt8])], bytes: Int) -> [[(id: Int64, ciphertext: [UInt8])]] {
        var pages: [[(id: Int64, ciphertext: [UInt8])]] = [[]]
        var size = 0
        for record in records {
            let packed = 12 + record.ciphertext.count
            if !pages[pages.count - 1].isEmpty, size + packed > bytes {
                pages.append([])
                size = 0
            }
            pages[pages.count - 1].append(record)
            size += packed
        }
        return pages
    }
}
