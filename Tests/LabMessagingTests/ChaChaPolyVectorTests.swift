import Crypto
import Foundation
import LabTestSupport
import Testing

/// msg/1 seals passwords and chat keys with HPKE whose AEAD is ChaCha20-Poly1305, which no
/// `CryptoProvider` offers: swift-crypto's `ChaChaPoly`, the AEAD inside its HPKE, is
/// checked here against Wycheproof's `chacha20_poly1305_test.json`, and the check is shown
/// able to fail both ways.
@Suite(.tier(.unit)) struct ChaChaPolyVectorTests {
    /// Seals `message`; nil if refused.
    typealias Seal = @Sendable (_ message: [UInt8], _ key: [UInt8], _ nonce: [UInt8], _ aad: [UInt8]) -> [UInt8]?
    /// Opens `sealed` (ciphertext ‖ tag); nil if refused.
    typealias Open = @Sendable (_ sealed: [UInt8], _ key: [UInt8], _ nonce: [UInt8], _ aad: [UInt8]) -> [UInt8]?

    static let seal: Seal = { message, key, nonce, aad in
        guard let nonce = try? ChaChaPoly.Nonce(data: nonce),
            let box = try? ChaChaPoly.seal(message, using: SymmetricKey(data: key), nonce: nonce, authenticating: aad)
        else { return nil }
        return Array(box.ciphertext) + Array(box.tag)
    }

    static let open: Open = { sealed, key, nonce, aad in
        guard sealed.count >= 16, let nonce = try? ChaChaPoly.Nonce(data: nonce),
            let box = try? ChaChaPoly.SealedBox(
                nonce: nonce,
                ciphertext: sealed.dropLast(16),
                tag: sealed.suffix(16)
            ),
            let opened = try? ChaChaPoly.open(box, using: SymmetricKey(data: key), authenticating: aad)
        else { return nil }
        return Array(opened)
    }

    static func run(seal: Seal, open: Open) throws -> VectorTally {
        let file = try WycheproofFile("chacha20_poly1305_test.json")
        var tally = VectorTally(file: file.name, provider: "swift-crypto ChaChaPoly")
        for group in file.groups {
            for test in group.tests {
                let key = test.bytes("key")
                let nonce = test.bytes("iv")
                let aad = test.bytes("aad")
                let message = test.bytes("msg")
                let sealed = test.bytes("ct") + test.bytes("tag")
                let opened = open(sealed, key, nonce, aad)
                switch test.result {
                case .valid: tally.check(seal(message, key, nonce, aad) == sealed && opened == message, test)
                case .invalid: tally.check(opened == nil, test, "but it opened")
                case .acceptable: tally.check(opened == nil || opened == message, test)
                }
            }
        }
        return tally
    }

    @Test("swift-crypto's ChaCha20-Poly1305 passes every Wycheproof vector")
    func vectors() throws {
        let tally = try Self.run(seal: Self.seal, open: Self.open)
        print(tally)
        #expect(tally.failures.isEmpty, "\(tally.failures.prefix(10).joined(separator: "\n"))")
        #expect(tally.ran == (try WycheproofFile("chacha20_poly1305_test.json").testCount))
    }

    @Test("A seal with a flipped bit fails the valid vectors; an open that accepts anything fails the invalid ones")
    func checksCanFail() throws {
        let corrupt = try Self.run(
            seal: { message, key, nonce, aad in
                Self.seal(message, key, nonce, aad).map { bytes in
                    var bytes = bytes
                    bytes[bytes.count / 2] ^= 1
                    return bytes
                }
            },
            open: Self.open
        )
        #expect(corrupt.failures.contains { $0.contains("expected valid") })
        let lax = try Self.run(seal: Self.seal, open: { sealed, key, nonce, aad in Self.open(sealed, key, nonce, aad) ?? [] })
        #expect(lax.failures.contains { $0.contains("expected invalid") })
    }
}
