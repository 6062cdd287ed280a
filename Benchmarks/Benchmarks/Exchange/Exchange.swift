import Benchmark
import LabCore
import LabCrypto
import LabMessaging
import LabOpenSSL
import LabSwiftCrypto
import LabWire

/// What an exchange costs beyond its primitives: the cx/1 codec with its framing, one whole
/// in-process exchange per suite and provider, and the messaging service's password KDFs.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal],
        maxDuration: .seconds(2),
        maxIterations: 100_000
    )
    codec()
    let swiftCrypto = try! SwiftCryptoProvider()
    let openssl = try! OpenSSLProvider()
    let suites: [(String, any Suite)] = [
        ("classic", try! ClassicSuite()), ("classic@1024", try! ClassicSuite(rsaBits: 1024)),
        ("rsa-modern", try! RSAModernSuite()), ("x25519", X25519Suite()), ("pq", PQSuite()),
    ]
    for (name, suite) in suites {
        // swift-crypto signs with RSA keys of 1024 bits and more: not the 2009 sample's 512.
        if name != "classic" { exchange(name, suite, swiftCrypto) }
        // OpenSSL 3.0 has no ML-KEM or ML-DSA.
        if name != "pq" { exchange(name, suite, openssl) }
    }
    kdfs()
}

/// A cx/1 response (the x25519 suite's shape): encoded, framed, parsed, decoded.
func codec() {
    let response = CXResponse(
        suite: "x25519",
        serverKey: [UInt8](repeating: 0x11, count: 32),
        message: [UInt8](repeating: 0x22, count: 443),
        padded: false,
        signature: [UInt8](repeating: 0x33, count: 64),
        wrappedKey: [UInt8](repeating: 0x44, count: 72),
        nonce: [UInt8](repeating: 0x55, count: 12)
    )
    let body = try! response.encoded()
    let frame = try! Framing.standard.frame(body)
    Benchmark("cx/1 response encode + frame") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try Framing.standard.frame(try response.encoded()))
        }
    }
    Benchmark("cx/1 response unframe + decode") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try CXReply(decoding: try FrameParser.singleFrame(frame)))
        }
    }
    let large = PropertyListDictionary.withData("body", count: 1 << 20)
    let largeBody = try! large.encoded()
    Benchmark("bplist 1 MiB data body encode + decode") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try PropertyListDictionary(decoding: try large.encoded()))
        }
    }
    blackHole(largeBody)
}

/// One whole exchange, both sides in this thread, with the same provider on each.
func exchange<P: CryptoProvider>(_ name: String, _ suite: any Suite, _ provider: P) {
    var exchange = try! InProcessExchange(suite: suite, client: provider, server: provider)
    Benchmark("exchange \(name) \(P.name)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try exchange.run())
        }
    }
}

/// The messaging service's password hashes at their configured cost.
func kdfs() {
    let password = Array("correct horse battery staple".utf8)
    for kdf in [PasswordKDF.sha512Salted, .pbkdf2SHA256(iterations: PasswordKDF.defaultPBKDF2Iterations), .default] {
        let salt = kdf.makeSalt()
        Benchmark(
            "msg/1 password KDF \(kdf)",
            configuration: .init(
                metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .peakMemoryResident],
                maxDuration: .seconds(3),
                maxIterations: kdf == .sha512Salted ? 100_000 : 10
            )
        ) { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try kdf.derive(password: password, salt: salt))
            }
        }
    }
}

extension PropertyListDictionary {
    /// A dictionary holding `count` bytes of data under `key`.
    static func withData(_ key: String, count: Int) -> PropertyListDictionary {
        var dictionary = PropertyListDictionary()
        dictionary.set(key, data: [UInt8](repeating: 0x5A, count: count))
        return dictionary
    }
}
