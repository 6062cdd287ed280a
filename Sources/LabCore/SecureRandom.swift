#if canImport(Glibc)
import CLabSystem
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Random bytes from the kernel's CSPRNG, a whole buffer per call.
///
/// `UInt8.random(using: &SystemRandomNumberGenerator())` per byte costs one `getrandom`
/// system call per byte: a session key and an IV were 48 system calls per exchange, 4% of
/// an in-process x25519 run's time (perf, release). This asks once for the whole buffer.
public enum SecureRandom {
    /// `count` random bytes.
    public static func bytes(_ count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            Self.fill(UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
    }

    /// Fills `buffer` with random bytes.
    public static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        #if canImport(Darwin)
        arc4random_buf(buffer.baseAddress, buffer.count)
        #else
        var filled = 0
        while filled < buffer.count {
            // getrandom(2) returns at most 32 MiB per call, and may be interrupted by a signal.
            let got = getrandom(buffer.baseAddress! + filled, buffer.count - filled, 0)
            if got > 0 {
                filled += got
            } else if got < 0, errno != EINTR {
                // Only before the kernel's pool is first seeded (never after boot) or with a
                // bad argument: fall back to the standard library's generator.
                var generator = SystemRandomNumberGenerator()
                while filled < buffer.count {
                    buffer[filled] = UInt8.random(in: .min ... .max, using: &generator)
                    filled += 1
                }
            }
        }
        #endif
    }
}
