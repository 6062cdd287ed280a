import Foundation
import LabCX
import LabCore
import LabTestSupport
import LabWire
import NIOCore
import NIOPosix
import Testing

/// Issue 37, break 7: `rsa-modern` client keys that no RSA key should be, sent to `lab serve`
/// as the trial sent them. With e = 1, `cryptoK` is the padded session key in clear and
/// `cryptoM` opens from the wire; each key must be refused `badPublicKey` by both providers,
/// as BoringSSL (swift-crypto) refuses it.
@Suite(.tier(.integration)) struct UnusableRSAKeyTests {
    /// DER's INTEGER, as written (`minimal: false` adds a leading zero byte).
    static func integer(_ magnitude: [UInt8], negative: Bool = false, minimal: Bool = true) -> [UInt8] {
        var content = Array(magnitude.drop { $0 == 0 })
        if negative {
            // Two's complement of a small magnitude (the exponents here fit a byte).
            precondition(content.count == 1 && content[0] < 0x80)
            content = [UInt8(256 - Int(content[0]))]
        } else if content.isEmpty || content[0] & 0x80 != 0 {
            content.insert(0, at: 0)
        }
        if !minimal { content.insert(0, at: 0) }
        return [0x02] + Self.length(content.count) + content
    }

    static func length(_ count: Int) -> [UInt8] {
        if count < 0x80 { return [UInt8(count)] }
        let bytes = withUnsafeBytes(of: UInt32(count).bigEndian, Array.init).drop { $0 == 0 }
        return [0x80 | UInt8(bytes.count)] + bytes
    }

    static func key(n: [UInt8], e: [UInt8]) -> [UInt8] {
        let body = n + e
        return [0x30] + Self.length(body.count) + body
    }

    /// A fresh 2048-bit modulus from the `openssl` command line (an independent maker).
    static func modulus() async throws -> [UInt8] {
        let hex = try await TestCertificates.shell(
            "openssl genrsa 2048 2>/dev/null | openssl rsa -RSAPublicKey_out -outform DER 2>/dev/null | od -An -v -tx1"
        )
        let der = [UInt8](hex: hex.filter(\.isHexDigit))!
        // SEQUENCE (30 82 01 0a) { INTEGER (02 82 01 01) n, INTEGER e }
        #expect(Array(der.prefix(2)) == [0x30, 0x82] && Array(der[4..<6]) == [0x02, 0x82])
        let count = Int(der[6]) << 8 | Int(der[7])
        return Array(der[8..<(8 + count)])
    }

    /// n − k for a small k, big-endian.
    static func minus(_ n: [UInt8], _ k: UInt8) -> [UInt8] {
        var result = n
        var borrow = Int(k)
        for index in result.indices.reversed() where borrow > 0 {
            let value = Int(result[index]) - borrow
            result[index] = UInt8((value + 256) % 256)
            borrow = value < 0 ? 1 : 0
        }
        return result
    }

    static func request(_ key: [UInt8]) throws -> ByteBuffer {
        var plist = PropertyListDictionary()
        plist.set("suite", string: "rsa-modern")
        plist.set("cryptoP", data: key)
        let body = try plist.encoded()
        var buffer = ByteBuffer()
        buffer.writeInteger(UInt32(body.count), endianness: .big)
        buffer.writeBytes(body)
        return buffer
    }

    /// The server's reply to one request on a connection of its own: the first whole frame.
    static func reply(to key: [UInt8], port: Int) async throws -> CXReply {
        let frame = try Self.request(key)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        let body = try await channel.executeThenClose { inbound, outbound -> [UInt8]? in
            try await outbound.write(frame)
            var received: [UInt8] = []
            for try await buffer in inbound {
                received += buffer.readableBytesView
                guard received.count >= 4 else { continue }
                let length = received.prefix(4).reduce(0) { $0 << 8 | Int($1) }
                if received.count >= 4 + length { return Array(received[4..<(4 + length)]) }
            }
            return nil
        }
        return try CXReply(decoding: try #require(body, "the server closed without a whole answer"))
    }

    @Test("rsa-modern keys with e = 1, 0, 2, −3, n − 2 or a non-minimal integer are refused badPublicKey",
          arguments: ["openssl", "swift-crypto"])
    func unusableKeysAreRefused(provider: String) async throws {
        let (server, address) = try await LabProcess.serve(["--provider", provider, "--suites", "rsa-modern"])
        defer { server.terminate() }
        let n = try await Self.modulus()
        let f4: [UInt8] = [0x01, 0x00, 0x01]
        let modulus = Self.integer(n)
        let bad: [(String, [UInt8])] = [
            ("e = 1", Self.key(n: modulus, e: Self.integer([1]))),
            ("e = 0", Self.key(n: modulus, e: Self.integer([0]))),
            ("e = 2", Self.key(n: modulus, e: Self.integer([2]))),
            ("e = -3", Self.key(n: modulus, e: Self.integer([3], negative: true))),
            ("e = n - 2", Self.key(n: modulus, e: Self.integer(Self.minus(n, 2)))),
            ("n with a leading zero byte", Self.key(n: Self.integer(n, minimal: false), e: Self.integer(f4))),
            ("e with a leading zero byte", Self.key(n: modulus, e: Self.integer(f4, minimal: false))),
            ("an even n", Self.key(n: Self.integer(Self.minus(n, 1)), e: Self.integer(f4))),
        ]
        // The same modulus with e = 65537 is served: the refusals are the keys', not the modulus's.
        guard case .response = try await Self.reply(to: Self.key(n: modulus, e: Self.integer(f4)), port: address.port)
        else {
            Issue.record("\(provider): a good key was not answered")
            return
        }
        for (name, key) in bad {
            let reply = try await Self.reply(to: key, port: address.port)
            guard case .error(let error) = reply else {
                Issue.record("\(provider) answered the key with \(name)")
                continue
            }
            #expect(error.code == .badPublicKey, "\(provider), \(name): \(error.code) \(error.message)")
        }
    }
}
