import Foundation
import LabCore
import LabMessaging
import LabTestSupport
import LabTransports
import LabWire
import NIOCore
import NIOPosix
import Testing

/// Issue 37, break 3: clients that pipeline tens of thousands of requests and never read
/// their answers, as many as `--max-connections`. Each is timed out like a silent peer, and
/// an honest client is served afterwards.
@Suite(.tier(.integration), .timeLimit(.minutes(3)))
struct NonReadingPeerTests {
    /// `count` framed `captcha` requests in one buffer (about 40 bytes each).
    static func pipelined(_ count: Int) throws -> ByteBuffer {
        var plist = PropertyListDictionary()
        plist.set(MsgKey.op, string: "captcha")
        let body = try plist.encoded()
        var buffer = ByteBuffer()
        buffer.reserveCapacity(count * (body.count + 4))
        for _ in 0..<count {
            buffer.writeInteger(UInt32(body.count), endianness: .big)
            buffer.writeBytes(body)
        }
        return buffer
    }

    @Test("peers that pipeline 75,000 requests and never read are timed out; an honest client is served")
    func nonReadersAreTimedOut() async throws {
        let limit = 5
        let (server, address) = try await LabProcess.serve([
            "--idle-timeout", "2 s", "--max-connections", "\(limit)",
        ])
        defer { server.terminate() }
        let requests = try Self.pipelined(75_000)
        // Never read: the answers pile up in the kernel's buffers, then in the server's.
        let channels = try await LargeChat.neverReaders(limit, to: address, sending: requests)
        defer { for channel in channels { channel.close(promise: nil) } }
        // Each is timed out, as the log says: for not reading ("read none of its answers"), or,
        // if every answer had left the server by then, as silent. Bounded: the old server
        // closed none of them.
        let reason = "(idle timeout)"
        try await server.errors(described: "\(limit) non-readers timed out", timeout: .seconds(90)) {
            $0.components(separatedBy: reason).count - 1 >= limit
        }
        // Their places are free: an honest client gets its captcha, not `busy`.
        let endpoint = try await TCPTransport(options: TransportOptions()).remote(host: address.host, port: address.port)
        try await withEndpoint(endpoint) { endpoint in
            var quiet = NoStepRecorder()
            let client = MessagingClient(connection: try await endpoint.connect(recorder: &quiet))
            let captcha = try await client.captcha(recorder: &quiet)
            #expect(!captcha.challenge.isEmpty)
            await client.connection.close()
        }
    }
}
