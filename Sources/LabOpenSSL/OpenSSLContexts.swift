import CLabOpenSSL
import LabCore
import Synchronization

/// A length as OpenSSL's `int`; lengths past 2 GiB (a frame limit set that high) throw instead of trapping.
func cLength(_ count: Int) throws -> Int32 {
    guard let length = Int32(exactly: count) else {
        throw LabError(.cryptoFailure, "\(count) bytes is more than OpenSSL's int lengths can carry")
    }
    return length
}

/// An `EVP_CIPHER_CTX` for the length of one call.
enum CipherContext {
    static func with<T>(_ body: (OpaquePointer) throws -> T) throws -> T {
        guard let context = EVP_CIPHER_CTX_new() else { throw OpenSSLErrorQueue.error("make a cipher context") }
        defer { EVP_CIPHER_CTX_free(context) }
        return try body(context)
    }
}

/// A stack of idle OpenSSL contexts of one kind, each with what it was last set up with;
/// each context serves one call at a time. At most 16 are kept.
final class IdleContexts<Setup: Sendable>: Sendable {
    struct Idle: @unchecked Sendable {
        let pointer: OpaquePointer
        var setup: Setup
    }

    private let idle = Mutex<[Idle]>([])
    private let free: @Sendable (OpaquePointer) -> Void

    init(free: @escaping @Sendable (OpaquePointer) -> Void) {
        self.free = free
    }

    /// An idle context, or nil.
    func take() -> Idle? { self.idle.withLock { $0.popLast() } }

    /// Keeps `context` for reuse, or frees it if enough are kept.
    func give(_ context: Idle) {
        let kept = self.idle.withLock { idle -> Bool in
            guard idle.count < 16 else { return false }
            idle.append(context)
            return true
        }
        if !kept { self.free(context.pointer) }
    }

    deinit {
        for context in self.idle.withLock({ $0 }) { self.free(context.pointer) }
    }
}

/// Idle AES-CBC `EVP_CIPHER_CTX`s that already hold their cipher and key, by key size and
/// direction: in OpenSSL 3 a new context costs two allocations and the provider's context
/// set-up, and a key schedule costs more again, together a tenth of encrypting 16 KiB with
/// AES-NI. A context whose last key is this call's key only gets the new IV.
final class CipherContextPool: Sendable {
    /// Slot 2 × (key bytes ÷ 8 − 2) + (encrypt ? 1 : 0).
    private let slots: [IdleContexts<[UInt8]>] = (0..<6).map { _ in
        IdleContexts { EVP_CIPHER_CTX_free($0) }
    }

    /// Runs `body` with a context set up for `cipher`, `key` and `iv` in direction `encrypt`.
    /// The context is kept for reuse unless `body` throws.
    func with<T>(
        cipher: OpaquePointer,
        key: [UInt8],
        iv: [UInt8],
        encrypt: Bool,
        _ body: (OpaquePointer) throws -> T
    ) throws -> T {
        let slot = self.slots[2 * (key.count / 8 - 2) + (encrypt ? 1 : 0)]
        let operation = { "set up AES-CBC-\(encrypt ? "encrypt" : "decrypt")" }
        var context: IdleContexts<[UInt8]>.Idle
        if let idle = slot.take() {
            context = idle
            // A reused context keeps its cipher, and its key schedule if the key is the same.
            let sameKey = context.setup == key
            guard EVP_CipherInit_ex2(context.pointer, nil, sameKey ? nil : key, iv, encrypt ? 1 : 0, nil) == 1 else {
                EVP_CIPHER_CTX_free(context.pointer)
                throw OpenSSLErrorQueue.error(operation())
            }
            if !sameKey { context.setup = key }
        } else {
            guard let pointer = EVP_CIPHER_CTX_new() else { throw OpenSSLErrorQueue.error("make a cipher context") }
            guard EVP_CipherInit_ex2(pointer, cipher, key, iv, encrypt ? 1 : 0, nil) == 1 else {
                EVP_CIPHER_CTX_free(pointer)
                throw OpenSSLErrorQueue.error(operation())
            }
            context = .init(pointer: pointer, setup: key)
        }
        let value: T
        do {
            value = try body(context.pointer)
        } catch {
            EVP_CIPHER_CTX_free(context.pointer)
            throw error
        }
        slot.give(context)
        return value
    }
}

/// Ciphers and digests fetched once from the default library context.
final class FetchedAlgorithms: @unchecked Sendable {
    /// Reusable AES-CBC contexts.
    let cbcContexts = CipherContextPool()
    /// Reusable digest contexts.
    let digestContexts = IdleContexts<Void> { EVP_MD_CTX_free($0) }

    enum Mode: String {
        case cbc = "CBC"
        case gcm = "GCM"
        case wrap = "WRAP"
    }

    // Immutable after init; EVP_CIPHER and EVP_MD objects are shareable between threads.
    private struct CipherID: Hashable {
        var mode: Mode
        var keyBytes: Int
    }

    private let ciphers: [CipherID: OpaquePointer]
    private let digests: [HashAlgorithm: OpaquePointer]

    init() throws {
        var ciphers: [CipherID: OpaquePointer] = [:]
        var digests: [HashAlgorithm: OpaquePointer] = [:]
        // deinit does not run when init throws: free what was fetched before the failure.
        var complete = false
        defer {
            if !complete {
                for cipher in ciphers.values { EVP_CIPHER_free(cipher) }
                for digest in digests.values { EVP_MD_free(digest) }
            }
        }
        for mode in [Mode.cbc, .gcm, .wrap] {
            for keyBytes in [16, 24, 32] {
                let name = "AES-\(keyBytes * 8)-\(mode.rawValue)"
                guard let cipher = EVP_CIPHER_fetch(nil, name, nil) else {
                    throw OpenSSLErrorQueue.error("fetch the cipher \(name)", code: .unsupported)
                }
                ciphers[CipherID(mode: mode, keyBytes: keyBytes)] = cipher
            }
        }
        for hash in HashAlgorithm.allCases {
            let name =
                switch hash {
                case .sha1: "SHA1"
                case .sha256: "SHA256"
                case .sha384: "SHA384"
                case .sha512: "SHA512"
                }
            guard let digest = EVP_MD_fetch(nil, name, nil) else {
                throw OpenSSLErrorQueue.error("fetch the digest \(name)", code: .unsupported)
            }
            digests[hash] = digest
        }
        self.ciphers = ciphers
        self.digests = digests
        complete = true
    }

    deinit {
        for cipher in self.ciphers.values { EVP_CIPHER_free(cipher) }
        for digest in self.digests.values { EVP_MD_free(digest) }
    }

    func cipher(_ mode: Mode, keyBytes: Int) throws -> OpaquePointer {
        guard let cipher = self.ciphers[CipherID(mode: mode, keyBytes: keyBytes)] else {
            throw LabError(.cryptoFailure, "AES keys are 16, 24 or 32 bytes, not \(keyBytes)")
        }
        return cipher
    }

    func digest(_ hash: HashAlgorithm) -> OpaquePointer {
        self.digests[hash]!
    }
}
