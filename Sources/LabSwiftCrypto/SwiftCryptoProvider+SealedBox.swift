import Crypto
import Foundation

extension SwiftCryptoProvider {
    /// `sealed` (ciphertext then tag) under `nonce` as swift-crypto takes it, without a
    /// `Data.append(contentsOf:)`: that generic call asks at run time whether its argument is
    /// `ContiguousBytes`, and for an array or a slice of one the Swift runtime answered by
    /// scanning every conformance record of the binary, on each open: 56% of the step's
    /// instructions, and more with each conformance a build adds (docs/performance.md,
    /// "Counted AES-GCM and the conformance scan"). A 12-byte nonce (cx/1's and msg/1's)
    /// goes as one combined `Data`, copied from raw bytes.
    static func sealedBox(nonce: [UInt8], sealed: [UInt8]) throws -> AES.GCM.SealedBox {
        guard nonce.count == 12 else {
            return try AES.GCM.SealedBox(
                nonce: try AES.GCM.Nonce(data: nonce),
                ciphertext: sealed[..<(sealed.count - 16)],
                tag: sealed[(sealed.count - 16)...]
            )
        }
        var combined = Data(count: nonce.count + sealed.count)
        combined.withUnsafeMutableBytes { buffer in
            nonce.withUnsafeBytes { buffer.copyMemory(from: $0) }
            sealed.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: buffer[nonce.count...]).copyMemory(from: $0) }
        }
        return try AES.GCM.SealedBox(combined: combined)
    }
}
