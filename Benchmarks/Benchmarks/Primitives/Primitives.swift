import Benchmark
import LabCore
import LabOpenSSL
import LabSwiftCrypto

/// Every primitive cx/1 uses, per provider, timed alone: the lab's own cost floor.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal],
        maxDuration: .seconds(2),
        maxIterations: 100_000
    )
    register(try! SwiftCryptoProvider())
    register(try! OpenSSLProvider())
}

/// The benchmarks of one provider.
func register<P: CryptoProvider>(_ provider: P) {
    do {
        let name = P.name
        let key16 = try! provider.randomBytes(count: 16)
        let iv = try! provider.randomBytes(count: 16)
        let block16k = try! provider.randomBytes(count: 16 * 1024)
        Benchmark("\(name) AES-128-CBC encrypt 16 KiB") { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try provider.aesCBCEncrypt(block16k, key: key16, iv: iv, padding: true))
            }
        }
        let rsa = try! provider.generatePrivateKey(.rsa(bits: 2048, use: .signature))
        let rsaPublic = try! provider.publicKey(for: rsa)
        let message = Array("The quick brown fox jumps over the lazy dog".utf8)
        let rsaSignature = try! provider.sign(message, with: rsa, scheme: .rsaPKCS1v15(.sha256))
        Benchmark("\(name) RSA-2048 sign") { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try provider.sign(message, with: rsa, scheme: .rsaPKCS1v15(.sha256)))
            }
        }
        Benchmark("\(name) RSA-2048 verify") { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try provider.isValidSignature(rsaSignature, for: message, publicKey: rsaPublic, scheme: .rsaPKCS1v15(.sha256)))
            }
        }
        let x25519 = try! provider.generatePrivateKey(.x25519)
        let peer = try! provider.publicKey(for: try! provider.generatePrivateKey(.x25519))
        Benchmark("\(name) X25519 agreement") { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try provider.x25519(x25519, peer: peer))
            }
        }
        let ed25519 = try! provider.generatePrivateKey(.ed25519)
        Benchmark("\(name) Ed25519 sign") { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try provider.sign(message, with: ed25519, scheme: .ed25519))
            }
        }
    }
}
