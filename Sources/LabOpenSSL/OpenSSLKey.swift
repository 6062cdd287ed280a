import CLabOpenSSL
import LabCore

/// An owned `EVP_PKEY`, private or public; freed when the last reference goes.
///
/// OpenSSL documents `EVP_PKEY` as safe to share between threads for operations that do
/// not change it, and every operation here makes its own `EVP_PKEY_CTX`.
public final class OpenSSLKey: @unchecked Sendable {
    /// The `EVP_PKEY *`.
    let pointer: OpaquePointer
    /// What the key is for.
    public let type: KeyType

    init(_ pointer: OpaquePointer, type: KeyType) {
        self.pointer = pointer
        self.type = type
    }

    deinit {
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
