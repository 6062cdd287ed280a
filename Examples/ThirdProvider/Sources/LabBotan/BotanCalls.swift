import CBotan
import LabKit

/// Botan's FFI returns 0 for success and a negative code with a description for a failure.
enum Botan {
    /// `BOTAN_FFI_ERROR_INSUFFICIENT_BUFFER_SPACE`.
    static let insufficientBufferSpace: Int32 = -10
    /// `BOTAN_FFI_INVALID_VERIFIER`: a signature that does not verify.
    static let invalidVerifier: Int32 = 1
    /// `BOTAN_FFI_ERROR_BAD_MAC`: an AEAD tag that does not authenticate.
    static let badMAC: Int32 = -2

    /// Throws `.cryptoFailure` naming `what` unless `code` is 0.
    static func check(_ code: Int32, _ what: String) throws {
        guard code != 0 else { return }
        throw LabError(.cryptoFailure, "Botan could not \(what): \(String(cString: botan_error_description(code)))")
    }

    /// The bytes a call writes into a buffer of `capacity` bytes and the length it reports
    /// (asked again with the length Botan wants when `capacity` is too small).
    static func output(
        capacity: Int,
        _ what: String,
        _ call: (UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<Int>) -> Int32
    ) throws -> [UInt8] {
        var length = capacity
        var bytes = [UInt8](repeating: 0, count: max(capacity, 1))
        var code = bytes.withUnsafeMutableBufferPointer { call($0.baseAddress!, &length) }
        if code == Self.insufficientBufferSpace {
            bytes = [UInt8](repeating: 0, count: max(length, 1))
            code = bytes.withUnsafeMutableBufferPointer { call($0.baseAddress!, &length) }
        }
        try Self.check(code, what)
        return Array(bytes.prefix(length))
    }
}

/// A multiple-precision integer, freed when it goes.
final class BotanInteger {
    let handle: botan_mp_t

    init() throws {
        var handle: botan_mp_t?
        try Botan.check(botan_mp_init(&handle), "make an integer")
        self.handle = handle!
    }

    convenience init(bigEndian bytes: some Collection<UInt8>) throws {
        try self.init()
        let array = Array(bytes)
        try Botan.check(botan_mp_from_bin(self.handle, array, array.count), "read an integer")
    }

    /// Its big-endian bytes, without leading zeros.
    func bigEndian() throws -> [UInt8] {
        var count = 0
        try Botan.check(botan_mp_num_bytes(self.handle, &count), "size an integer")
        var bytes = [UInt8](repeating: 0, count: count)
        try Botan.check(botan_mp_to_bin(self.handle, &bytes), "write an integer")
        return bytes
    }

    /// Its size in bits.
    func bits() throws -> Int {
        var bits = 0
        try Botan.check(botan_mp_num_bits(self.handle, &bits), "size an integer")
        return bits
    }

    deinit { botan_mp_destroy(self.handle) }
}

/// Botan's thread-safe auto-seeded generator, one per provider.
final class BotanRandom: @unchecked Sendable {
    let handle: botan_rng_t

    init() throws {
        var handle: botan_rng_t?
        try Botan.check(botan_rng_init(&handle, "user-threadsafe"), "start its random generator")
        self.handle = handle!
    }

    deinit { botan_rng_destroy(self.handle) }
}
