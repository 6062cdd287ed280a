#if LAB_GATE_PROBE
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Test-only, and only in a build made with `-Xswiftc -DLAB_GATE_PROBE`: real work added
/// inside one step, to show that the counted gate catches a real code change of about 1%
/// (`scripts/gate-acceptance.sh`). `LAB_GATE_PROBE=PLACE:BYTES` picks the place and the
/// work's size; unset, the probe build does what the release build does, plus one load.
///
/// The places, each an operation of the kind a careless change would add there:
/// - `swift-crypto.sign`: one more SHA-256, of BYTES bytes, inside swift-crypto's signing;
/// - `openssl.verify`: one more SHA-256 through OpenSSL's EVP, inside its verification;
/// - `wire.decode`: an Adler-32 checksum over BYTES bytes, inside the decoding of a cx/1 reply.
public enum GateProbe {
    /// Where a probe can add its work.
    public enum Place: String, Sendable {
        case swiftCryptoSign = "swift-crypto.sign"
        case opensslVerify = "openssl.verify"
        case wireDecode = "wire.decode"
    }

    /// The environment variable that picks the probe.
    public static let variable = "LAB_GATE_PROBE"

    /// The probe this process runs, and its input: BYTES fixed bytes, made once. Read once;
    /// each place then costs a load and a comparison.
    private static let active: (place: Place, input: [UInt8])? = {
        guard let raw = getenv(variable) else { return nil }
        let parts = String(cString: raw).split(separator: ":")
        guard parts.count == 2, let place = Place(rawValue: String(parts[0])), let bytes = Int(parts[1]), bytes > 0
        else { return nil }
        return (place, (0..<bytes).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    }()

    /// The probe's input at `place`, if the probe is there.
    @inline(__always)
    public static func input(at place: Place) -> [UInt8]? {
        guard let active, active.place == place else { return nil }
        return active.input
    }

    private static let sink = Atomic<UInt64>(0)

    /// Keeps `value`, so that the work that made it cannot be dropped.
    public static func keep(_ value: UInt64) {
        Self.sink.store(value, ordering: .relaxed)
    }

    /// Adler-32 of `bytes` (RFC 1950).
    @inline(never)
    public static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in bytes {
            a = (a &+ UInt32(byte)) % 65_521
            b = (b &+ a) % 65_521
        }
        return b << 16 | a
    }
}
#endif
