import LabCore
import NIOCore
import Synchronization

/// What a TLS client saw of its handshake in the clear: the version, the cipher suite and the
/// key-exchange group the server chose, and whether it first asked for another key share.
struct NegotiatedTLS: Sendable, Equatable {
    /// `1.2` or `1.3` (or the code point in hex, for another).
    var version: String
    /// The cipher suite's IANA name, e.g. `TLS_AES_128_GCM_SHA256` (or its code point).
    var cipher: String
    /// The group's name (`TLSGroup`), or nil when the key exchange used none (TLS 1.2 RSA).
    var group: String?
    /// Whether the server answered the first ClientHello with a HelloRetryRequest.
    var helloRetry: Bool

    /// The outcome names a connection counts (`StepRecorder.count`): `tls.version.1.3`,
    /// `tls.group.x25519`, `tls.cipher.TLS_AES_128_GCM_SHA256`, `tls.hello-retry`.
    var outcomes: [String] {
        ["tls.version.\(self.version)", "tls.cipher.\(self.cipher)"] + (self.group.map { ["tls.group.\($0)"] } ?? [])
            + (self.helloRetry ? ["tls.hello-retry"] : [])
    }

    /// The IANA names of the cipher suites a lab client may meet.
    static let cipherNames: [UInt16: String] = [
        0x1301: "TLS_AES_128_GCM_SHA256", 0x1302: "TLS_AES_256_GCM_SHA384", 0x1303: "TLS_CHACHA20_POLY1305_SHA256",
        0xC02B: "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", 0xC02C: "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        0xC02F: "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", 0xC030: "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        0xCCA8: "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", 0xCCA9: "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
    ]

    static func hex(_ value: UInt16) -> String {
        let digits = String(value, radix: 16)
        return "0x" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

/// When a client connection became active, and what its handshake negotiated: written on
/// the channel's event loop, read by the task that awaits the handshake.
final class HandshakeRecord: Sendable {
    private let state = Mutex<(activeAt: UInt64, doneAt: UInt64, negotiated: NegotiatedTLS?)>((0, 0, nil))
    /// The connection's bytes so far, as the socket carries them (`WireCounter`).
    private let sentBytes = Atomic<Int>(0)
    private let receivedBytes = Atomic<Int>(0)
    /// The bytes each way when the handshake completed.
    private let atCompletion = Mutex<(sent: Int, received: Int)?>(nil)

    /// The handshake's bytes each way (TLS records, from the ClientHello to the client's
    /// Finished); nil until it completed.
    var handshakeBytes: (sent: Int, received: Int)? { self.atCompletion.withLock { $0 } }

    func sent(_ count: Int) { self.sentBytes.add(count, ordering: .relaxed) }
    func received(_ count: Int) { self.receivedBytes.add(count, ordering: .relaxed) }

    /// The handshake's time, active to completed, both on the event loop; nil until both are known.
    var handshakeNanoseconds: UInt64? {
        self.state.withLock { $0.activeAt != 0 && $0.doneAt > $0.activeAt ? $0.doneAt - $0.activeAt : nil }
    }
    var negotiated: NegotiatedTLS? { self.state.withLock { $0.negotiated } }

    func becameActive(at instant: UInt64) { self.state.withLock { $0.activeAt = instant } }
    func completed(at instant: UInt64) {
        self.state.withLock { $0.doneAt = instant }
        let wire = (self.sentBytes.load(ordering: .relaxed), self.receivedBytes.load(ordering: .relaxed))
        self.atCompletion.withLock { $0 = wire }
    }
    func negotiated(_ result: NegotiatedTLS) { self.state.withLock { $0.negotiated = result } }
}

/// Reads the server's first flight on its way to the TLS handler, before anything is
/// encrypted (RFC 8446 §4.1.3, RFC 5246 §7.4): the ServerHello's version (its
/// supported_versions extension in TLS 1.3), cipher suite and, in TLS 1.3, the key_share's
/// group; in TLS 1.2 the group is the ServerKeyExchange's named curve. The TLS library keeps
/// these to itself; the bytes on the wire say them, independently of it. Every byte is passed
/// on unchanged; the handler stops looking at the first record it cannot read in the clear
/// (or past 64 KiB of handshake), and then leaves the pipeline.
final class HandshakeObserver: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let record: HandshakeRecord
    /// Bytes received and not yet cut into records.
    private var pending = ByteBuffer()
    /// The handshake protocol's bytes, across records.
    private var handshake = ByteBuffer()
    /// Read so far: version, cipher, group, retry.
    private var seen: NegotiatedTLS? = nil
    private var helloRetry = false
    private var finished = false
    /// The most handshake bytes kept waiting for a message to complete: a certificate chain
    /// fits many times over; a server that declares more is not read further.
    static let limit = 65_536

    /// SHA-256("HelloRetryRequest"): the random of a ServerHello that is a HelloRetryRequest.
    static let helloRetryRandom: [UInt8] = [
        0xCF, 0x21, 0xAD, 0x74, 0xE5, 0x9A, 0x61, 0x11, 0xBE, 0x1D, 0x8C, 0x02, 0x1E, 0x65, 0xB8, 0x91,
        0xC2, 0xA2, 0x11, 0x16, 0x7A, 0xBB, 0x8C, 0x5E, 0x07, 0x9E, 0x09, 0xE2, 0xC8, 0xA8, 0x33, 0x9C,
    ]

    init(record: HandshakeRecord) {
        self.record = record
    }

    func channelActive(context: ChannelHandlerContext) {
        self.record.becameActive(at: Stopwatch.now())
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if !self.finished {
            var bytes = self.unwrapInboundIn(data)
            self.pending.writeBuffer(&bytes)
            self.readRecords()
            if self.pending.readableBytes + self.handshake.readableBytes > Self.limit { self.finish() }
        }
        context.fireChannelRead(data)
        if self.finished { context.pipeline.syncOperations.removeHandler(context: context, promise: nil) }
    }

    /// Cuts `pending` into TLS records and reads the handshake ones.
    private func readRecords() {
        while !self.finished, self.pending.readableBytes >= 5,
            let type = self.pending.getInteger(at: self.pending.readerIndex, as: UInt8.self),
            let length = self.pending.getInteger(at: self.pending.readerIndex + 3, as: UInt16.self),
            self.pending.readableBytes >= 5 + Int(length)
        {
            self.pending.moveReaderIndex(forwardBy: 5)
            var fragment = self.pending.readSlice(length: Int(length))!
            switch type {
            case 22:  // handshake
                self.handshake.writeBuffer(&fragment)
                self.readHandshake()
            case 20:
                // TLS 1.3's compatibility change_cipher_spec before the ServerHello (after a
                // HelloRetryRequest) is nothing; one after it (TLS 1.2 resumption) means the
                // rest is encrypted.
                if self.seen != nil { self.finish() }
            default:  // application data (encrypted from here in TLS 1.3) or an alert
                self.finish()
            }
        }
        self.pending.discardReadBytes()
    }

    /// Reads whole handshake messages.
    private func readHandshake() {
        while !self.finished, self.handshake.readableBytes >= 4,
            let header = self.handshake.getBytes(at: self.handshake.readerIndex, length: 4)
        {
            let length = Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
            guard self.handshake.readableBytes >= 4 + length else { return }
            self.handshake.moveReaderIndex(forwardBy: 4)
            var body = self.handshake.readSlice(length: length)!
            switch header[0] {
            case 2: self.serverHello(&body)
            case 12: self.serverKeyExchange(&body)
            case 14: self.finish()  // ServerHelloDone (TLS 1.2): no key exchange message came
            default: continue  // Certificate, CertificateRequest, …
            }
        }
        self.handshake.discardReadBytes()
    }

    private func serverHello(_ body: inout ByteBuffer) {
        guard let legacyVersion = body.readInteger(as: UInt16.self), let random = body.readBytes(length: 32),
            let sessionLength = body.readInteger(as: UInt8.self), body.readSlice(length: Int(sessionLength)) != nil,
            let cipher = body.readInteger(as: UInt16.self), body.readInteger(as: UInt8.self) != nil
        else { return self.finish() }
        var version = legacyVersion
        var group: UInt16? = nil
        if let extensionsLength = body.readInteger(as: UInt16.self),
            var extensions = body.readSlice(length: Int(extensionsLength))
        {
            while let type = extensions.readInteger(as: UInt16.self),
                let length = extensions.readInteger(as: UInt16.self),
                var data = extensions.readSlice(length: Int(length))
            {
                switch type {
                case 0x002B: version = data.readInteger(as: UInt16.self) ?? version  // supported_versions
                case 0x0033: group = data.readInteger(as: UInt16.self)  // key_share: its group first
                default: continue
                }
            }
        }
        if random == Self.helloRetryRandom {
            // The real ServerHello follows the client's second ClientHello.
            self.helloRetry = true
            return
        }
        self.seen = NegotiatedTLS(
            version: Self.versionName(version),
            cipher: NegotiatedTLS.cipherNames[cipher] ?? NegotiatedTLS.hex(cipher),
            group: group.map(TLSGroup.name(of:)),
            helloRetry: self.helloRetry
        )
        // In TLS 1.3 all that follows is encrypted; TLS 1.2 names its curve later.
        if version == 0x0304 { self.finish() }
    }

    /// TLS 1.2's ServerKeyExchange for ECDHE: ECParameters, `named_curve` (3) and the group.
    private func serverKeyExchange(_ body: inout ByteBuffer) {
        if body.readInteger(as: UInt8.self) == 3, let group = body.readInteger(as: UInt16.self) {
            self.seen?.group = TLSGroup.name(of: group)
        }
        self.finish()
    }

    private func finish() {
        guard !self.finished else { return }
        self.finished = true
        if let seen = self.seen { self.record.negotiated(seen) }
        self.pending = ByteBuffer()
        self.handshake = ByteBuffer()
    }

    static func versionName(_ version: UInt16) -> String {
        switch version {
        case 0x0304: "1.3"
        case 0x0303: "1.2"
        default: NegotiatedTLS.hex(version)
        }
    }
}

/// Counts a connection's bytes as the socket carries them, first in the pipeline (below TLS):
/// what the `handshake` step's traffic is measured with; `HandshakeWaiter` removes it once
/// the handshake has completed.
final class WireCounter: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let record: HandshakeRecord

    init(record: HandshakeRecord) {
        self.record = record
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        self.record.received(Self.unwrapInboundIn(data).readableBytes)
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        self.record.sent(Self.unwrapOutboundIn(data).readableBytes)
        context.write(data, promise: promise)
    }
}
