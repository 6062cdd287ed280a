import LabBuiltIns
import LabCX
import LabCore
import LabFraming
import LabMessaging
import LabOpenSSL
import LabSwiftCrypto
import LabWire
import Synchronization

/// One micro-benchmark of `Benchmarks/`: a name and one operation, run by ordo-one/benchmark
/// there and once by this package's tests, so that a change to the lab's API or a case that
/// cannot run (a suite a provider lacks) fails the lab's own build and tests, not only the
/// benchmark package's.
public struct BenchmarkCase: Sendable {
    /// The benchmark's name, e.g. `swift-crypto RSA-2048 sign`.
    public let name: String
    /// The most iterations worth running (the password KDFs take tenths of a second each).
    public let maxIterations: Int
    /// One operation; it returns a count (bytes made, say) for the benchmark to consume, so
    /// that the work cannot be optimised away.
    public let run: @Sendable () throws -> Int

    init(_ name: String, maxIterations: Int = 100_000, _ run: @escaping @Sendable () throws -> Int) {
        self.name = name
        self.maxIterations = maxIterations
        self.run = run
    }
}

/// The lab's micro-benchmarks, by target.
public enum BenchmarkCases {
    /// Every primitive cx/1 uses, per provider, timed alone: the lab's own cost floor.
    public static func primitives() throws -> [BenchmarkCase] {
        try BuiltInPlugins.providers.makeAll().flatMap { try Self.primitives($0) }
    }

    /// What an exchange costs beyond its primitives: the cx/1 codec with its framing, one
    /// whole in-process exchange per suite and provider, and the messaging service's password
    /// KDFs.
    public static func exchange() throws -> [BenchmarkCase] {
        var cases = try Self.codec()
        let providers = try BuiltInPlugins.providers.makeAll()
        let registry = BuiltInPlugins.suites
        var suites: [(String, any Suite)] = try registry.ids.map { ($0, try registry.make($0)) }
        // classic at 1024 bits too: swift-crypto signs with RSA keys of 1024 bits and more, not
        // the 2009 sample's 512.
        if let classic = suites.firstIndex(where: { $0.0 == ClassicSuite.id }) {
            suites.insert(("classic@1024", try registry.make(ClassicSuite.id, options: SuiteOptions(rsaBits: 1024))), at: classic + 1)
        }
        // Each suite on every provider that can do it (OpenSSL 3.0 has no ML-KEM or ML-DSA).
        for (name, suite) in suites {
            for provider in providers where suite.unsupportedReason(on: provider) == nil {
                cases.append(try Self.exchange(name, suite, provider))
            }
        }
        return cases + Self.kdfs()
    }

    static func primitives<P: CryptoProvider>(_ provider: P) throws -> [BenchmarkCase] {
        let name = P.name
        let key16 = try provider.randomBytes(count: 16)
        let iv = try provider.randomBytes(count: 16)
        let block16k = try provider.randomBytes(count: 16 * 1024)
        let rsa = try provider.generatePrivateKey(.rsa(bits: 2048, use: .signature))
        let rsaPublic = try provider.publicKey(for: rsa)
        let message = Array("The quick brown fox jumps over the lazy dog".utf8)
        let rsaSignature = try provider.sign(message, with: rsa, scheme: .rsaPKCS1v15(.sha256))
        let x25519 = try provider.generatePrivateKey(.x25519)
        let peer = try provider.publicKey(for: try provider.generatePrivateKey(.x25519))
        let ed25519 = try provider.generatePrivateKey(.ed25519)
        return [
            BenchmarkCase("\(name) AES-128-CBC encrypt 16 KiB") {
                try provider.aesCBCEncrypt(block16k, key: key16, iv: iv, padding: true).count
            },
            BenchmarkCase("\(name) RSA-2048 sign") {
                try provider.sign(message, with: rsa, scheme: .rsaPKCS1v15(.sha256)).count
            },
            BenchmarkCase("\(name) RSA-2048 verify") {
                try provider.isValidSignature(
                    rsaSignature,
                    for: message,
                    publicKey: rsaPublic,
                    scheme: .rsaPKCS1v15(.sha256)
                )
                    ? 1 : 0
            },
            BenchmarkCase("\(name) X25519 agreement") { try provider.x25519(x25519, peer: peer).count },
            BenchmarkCase("\(name) Ed25519 sign") { try provider.sign(message, with: ed25519, scheme: .ed25519).count },
        ]
    }

    /// A cx/1 response (the x25519 suite's shape): encoded, framed, parsed, decoded; the
    /// request; and a large data body through the plist codec.
    static func codec() throws -> [BenchmarkCase] {
        let response = CXResponse(
            suite: "x25519",
            serverKey: [UInt8](repeating: 0x11, count: 32),
            message: [UInt8](repeating: 0x22, count: 443),
            padded: false,
            signature: [UInt8](repeating: 0x33, count: 64),
            wrappedKey: [UInt8](repeating: 0x44, count: 72),
            nonce: [UInt8](repeating: 0x55, count: 12)
        )
        let frame = try Framing.standard.frame(try response.encoded())
        let request = CXRequest(suite: "x25519", clientKey: [UInt8](repeating: 0x66, count: 32))
        var dictionary = PropertyListDictionary()
        dictionary.set("body", data: [UInt8](repeating: 0x5A, count: 1 << 20))
        let large = dictionary
        return [
            BenchmarkCase("cx/1 response encode + frame") { try Framing.standard.frame(try response.encoded()).count },
            BenchmarkCase("cx/1 response unframe + decode") {
                guard case .response(let decoded) = try CXReply(decoding: try FrameParser.singleFrame(frame)) else {
                    throw LabError(.malformedMessage, "The benchmark's response did not decode as one")
                }
                return decoded.message.count
            },
            BenchmarkCase("cx/1 request encode + decode") {
                try CXRequest(decoding: try request.encoded()).clientKey.count
            },
            BenchmarkCase("bplist 1 MiB data body encode + decode") {
                try PropertyListDictionary(decoding: try large.encoded()).data("body").count
            },
        ]
    }

    /// One whole exchange, both sides in this thread, with the same provider on each.
    static func exchange<P: CryptoProvider>(_ name: String, _ suite: any Suite, _ provider: P) throws -> BenchmarkCase {
        let exchange = Exchanges(try InProcessExchange(suite: suite, client: provider, server: provider))
        return BenchmarkCase("exchange \(name) \(P.name)") { try exchange.run() }
    }

    /// The messaging service's password hashes at their configured cost.
    static func kdfs() -> [BenchmarkCase] {
        let password = Array("correct horse battery staple".utf8)
        return [PasswordKDF.sha512Salted, .pbkdf2SHA256(iterations: PasswordKDF.defaultPBKDF2Iterations), .default].map
        {
            kdf in
            let salt = kdf.makeSalt()
            return BenchmarkCase("msg/1 password KDF \(kdf)", maxIterations: kdf == .sha512Salted ? 100_000 : 10) {
                try kdf.derive(password: password, salt: salt).count
            }
        }
    }
}

/// An in-process exchange that a `@Sendable` benchmark closure can run again and again.
final class Exchanges<C: CryptoProvider, S: CryptoProvider>: Sendable {
    private let exchange: Mutex<InProcessExchange<C, S>>

    init(_ exchange: InProcessExchange<C, S>) {
        self.exchange = Mutex(exchange)
    }

    func run() throws -> Int {
        try self.exchange.withLock { try $0.run().plaintext.count }
    }
}
