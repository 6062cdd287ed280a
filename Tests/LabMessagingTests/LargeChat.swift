import LabCore
import LabMessaging
import LabProcesses
import LabSwiftCrypto
import LabWire
import NIOCore
import NIOPosix
import Testing

/// A chat of about 5 MiB, one page of a `fetch` under the default frame limit (78 messages of
/// 64 KiB), and the pipelined `fetch`es of it that a peer who never reads sends: what issue
/// 51's break 3 attacked with.
struct LargeChat {
    /// Messages in the chat.
    static let messages = 78

    /// The writer's side of the chat.
    var side: ChatSide
    /// The writer's session token.
    let token: String

    /// Registers `writer` and `peer` over `client`, logs the writer in, opens their chat and
    /// fills it.
    static func make(_ client: MessagingClient, writer: String, peer: String) async throws -> LargeChat {
        var quiet = NoStepRecorder()
        var user = MessagingUser(username: writer, password: "\(writer)'s password")
        var other = MessagingUser(username: peer, password: "\(peer)'s password")
        try await user.register(client, recorder: &quiet).orThrow()
        try await other.register(client, recorder: &quiet).orThrow()
        try await user.logIn(client, recorder: &quiet)
        var side = ChatSide(user: user, peer: peer, provider: SwiftCryptoProvider())
        try await side.open(client, recorder: &quiet).orThrow()
        for number in 0..<Self.messages {
            let text = [UInt8](repeating: UInt8(number), count: MsgLimits.ciphertextBytes - 28)
            _ = try await side.send(text, client, recorder: &quiet)
        }
        return LargeChat(side: side, token: try #require(user.token))
    }

    /// `count` framed `fetch` requests of the whole chat, back to back.
    func pipelinedFetches(_ count: Int = 20) throws -> ByteBuffer {
        var plist = PropertyListDictionary()
        plist.set(MsgKey.op, string: "fetch")
        plist.set(MsgKey.token, string: self.token)
        plist.set(MsgKey.with, string: self.side.peer)
        plist.set(MsgKey.after, integer: 0)
        let body = try plist.encoded()
        var requests = ByteBuffer()
        for _ in 0..<count {
            requests.writeInteger(UInt32(body.count), endianness: .big)
            requests.writeBytes(body)
        }
        return requests
    }

    /// `count` connections to `address` that send `requests` each and never read: what they
    /// hold open, for the caller to close.
    static func neverReaders(_ count: Int, to address: ListeningAddress, sending requests: ByteBuffer) async throws
        -> [any Channel]
    {
        var channels: [any Channel] = []
        for _ in 0..<count {
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelOption(.autoRead, value: false)
                .connect(host: address.host, port: address.port)
                .get()
            channel.writeAndFlush(requests, promise: nil)
            channels.append(channel)
        }
        return channels
    }
}
