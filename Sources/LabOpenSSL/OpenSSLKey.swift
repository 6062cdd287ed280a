import CLabOpenSSL
public import LabCore
import Synchronization

/// An owned `EVP_PKEY`, private or public; freed when the last reference goes.
///
/// OpenSSL documents `EVP_PKEY` as safe to share between threads for operations that do
/// not change it. An `EVP_PKEY_CTX` is not shareable, but it can serve many operations one
/// after another: the key keeps the contexts it initialised for RSA signing and verifying
/// and lends each to one operation at a time, so a signature costs no context set-up (in
/// OpenSSL 3 that is an algorithm fetch, a key export to the provider and several
/// allocations: about a third of an RSA-2048 verification).
public final class OpenSSLKey: @unchecked Sendable {
    /// The `EVP_PKEY *`.
    let pointer: OpaquePointer
    /// What the key is for.
    public let type: KeyType

    /// What an idle context was initialised for.
    struct ContextPurpose: Hashable {
        var signing: Bool
        var scheme: SignatureScheme
    }

    /// An idle context: owned by the idle list alone, so it may cross threads with it.
    private struct IdleContext: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    /// Idle initialised contexts, by purpose; at most `idleLimit` of each are kept.
    private let idle = Mutex<[ContextPurpose: [IdleContext]]>([:])
    private static let idleLimit = 16

    init(_ pointer: OpaquePointer, type: KeyType) {
        self.pointer = pointer
        self.type = type
    }

    /// Runs `body` with a context for `purpose`: an idle one, or a new one from `make`.
    /// The context goes back to the idle ones if `body` returns `reusable: true`; else (and
    /// if it throws) it is freed.
    func withContext<T>(
        _ purpose: ContextPurpose,
        make: () throws -> OpaquePointer,
        body: (OpaquePointer) throws -> (value: T, reusable: Bool)
    ) throws -> T {
        let context = try self.idle.withLock { $0[purpose]?.popLast()?.pointer } ?? make()
        let outcome: (value: T, reusable: Bool)
        do {
            outcome = try body(context)
        } catch {
            EVP_PKEY_CTX_free(context)
            throw error
        }
        if outcome.reusable {
            let handle = IdleContext(pointer: context)
            let kept = self.idle.withLock { idle -> Bool in
                guard idle[purpose, default: []].count < Self.idleLimit else { return false }
                idle[purpose, default: []].append(handle)
                return true
            }
            if !kept { EVP_PKEY_CTX_free(context) }
        } else {
            EVP_PKEY_CTX_free(context)
        }
        return outcome.value
    }

    deinit {
        self.idle.withLock { idle in
            for contexts in idle.values { for context in contexts { EVP_PKEY_CTX_free(context.pointer) } }
        }
        EVP_PKEY_free(self.pointer)
    }
}

/// OpenSSL's thread-local error queue, drained into text.
enum OpenSSLErrorQueue {
    /// Every queued error as `ERR_error_string_n` text, oldest first; the queue is left empty.
    static func drain() -> String {
        var messages: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            messages.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return messages.isEmpty ? "no OpenSSL error queued" : messages.joined(separator: "; ")
    }

    /// A `LabError` for a failed `operation`, with the queue's text as its cause.
    static func error(_ operation: String, code: LabError.Code = .cryptoFailure) -> LabError {
        LabError(code, "OpenSSL could not \(operation)", cause: UnderlyingError(self.drain()))
    }

    /// Throws unless `result` is 1 (OpenSSL's success).
    static func check(_ result: Int32, _ operation: @autoclosure () -> String) throws {
        if result != 1 {
            throw self.error(operation())
        }
    }
}
