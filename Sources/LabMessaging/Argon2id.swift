import CLabArgon2
import LabCore

/// Argon2id (RFC 9106) through Argon2's reference implementation (libargon2, version 1.3).
enum Argon2id {
    /// The tag of `password` and `salt`, with RFC 9106 §3.1's secret value K and associated
    /// data X if given; `memoryKiB` is m (at least 8 × `parallelism`), `iterations` t,
    /// `parallelism` p (lanes, each hashed on a thread of its own).
    static func derive(
        password: [UInt8],
        salt: [UInt8],
        secret: [UInt8] = [],
        associatedData: [UInt8] = [],
        memoryKiB: Int,
        iterations: Int,
        parallelism: Int,
        length: Int
    ) throws -> [UInt8] {
        var output = [UInt8](repeating: 0, count: length)
        var password = password
        var salt = salt
        var secret = secret
        var associatedData = associatedData
        let status = output.withUnsafeMutableBufferPointer { out in
            password.withUnsafeMutableBufferPointer { pwd in
                salt.withUnsafeMutableBufferPointer { salt in
                    secret.withUnsafeMutableBufferPointer { secret in
                        associatedData.withUnsafeMutableBufferPointer { data in
                            var context = argon2_context(
                                out: out.baseAddress,
                                outlen: UInt32(clamping: out.count),
                                pwd: pwd.baseAddress,
                                pwdlen: UInt32(clamping: pwd.count),
                                salt: salt.baseAddress,
                                saltlen: UInt32(clamping: salt.count),
                                secret: secret.baseAddress,
                                secretlen: UInt32(clamping: secret.count),
                                ad: data.baseAddress,
                                adlen: UInt32(clamping: data.count),
                                t_cost: UInt32(clamping: iterations),
                                m_cost: UInt32(clamping: memoryKiB),
                                lanes: UInt32(clamping: parallelism),
                                threads: UInt32(clamping: parallelism),
                                version: UInt32(ARGON2_VERSION_13.rawValue),
                                allocate_cbk: nil,
                                free_cbk: nil,
                                flags: 0  // ARGON2_DEFAULT_FLAGS: the inputs (copies here) are not wiped
                            )
                            return argon2_ctx(&context, Argon2_id)
                        }
                    }
                }
            }
        }
        guard status == ARGON2_OK.rawValue else {
            throw LabError(
                .cryptoFailure,
                "Argon2id (m = \(memoryKiB) KiB, t = \(iterations), p = \(parallelism)) failed: "
                    + String(cString: argon2_error_message(status))
            )
        }
        return output
    }
}
