import CLabArgon2
import LabCore

/// Argon2id (RFC 9106) through Argon2's reference implementation (libargon2, version 1.3).
package enum Argon2id {
    /// The tag of `password` and `salt`, with RFC 9106 §3.1's secret value K and associated
    /// data X if given; `memoryKiB` is m (at least 8 × `parallelism`), `iterations` t,
    /// `parallelism` p (lanes, each hashed on a thread of its own).
    package static func derive(
        password: [UInt8],
        salt: [UInt8],
        secret: [UInt8] = [],
        associatedData: [UInt8] = [],
        memoryKiB: Int,
        iterations: Int,
        parallelism: Int,
        length: Int
    ) throws -> [UInt8] {
        // Sizes past UInt32 would be cut short by the C structure: refused, not truncated.
        guard length >= 4, let outputLength = UInt32(exactly: length),
            let passwordLength = UInt32(exactly: password.count), let saltLength = UInt32(exactly: salt.count),
            let secretLength = UInt32(exactly: secret.count), let dataLength = UInt32(exactly: associatedData.count),
            let passes = UInt32(exactly: iterations), let memory = UInt32(exactly: memoryKiB),
            let lanes = UInt32(exactly: parallelism)
        else {
            throw LabError(.cryptoFailure, "Argon2id: a length or parameter out of range (length \(length))")
        }
        var output = [UInt8](repeating: 0, count: length)
        // The inputs are read in place (libargon2 writes them only with its clearing flags, not
        // set here), so the password is not copied.
        let status = output.withUnsafeMutableBufferPointer { out in
            password.withUnsafeBufferPointer { pwd in
                salt.withUnsafeBufferPointer { salt in
                    secret.withUnsafeBufferPointer { secret in
                        associatedData.withUnsafeBufferPointer { data in
                            var context = argon2_context(
                                out: out.baseAddress,
                                outlen: outputLength,
                                pwd: pwd.baseAddress.map(UnsafeMutablePointer.init(mutating:)),
                                pwdlen: passwordLength,
                                salt: salt.baseAddress.map(UnsafeMutablePointer.init(mutating:)),
                                saltlen: saltLength,
                                secret: secret.baseAddress.map(UnsafeMutablePointer.init(mutating:)),
                                secretlen: secretLength,
                                ad: data.baseAddress.map(UnsafeMutablePointer.init(mutating:)),
                                adlen: dataLength,
                                t_cost: passes,
                                m_cost: memory,
                                lanes: lanes,
                                threads: lanes,
                                version: UInt32(ARGON2_VERSION_13.rawValue),
                                allocate_cbk: nil,
                                free_cbk: nil,
                                flags: 0  // ARGON2_DEFAULT_FLAGS: the inputs are not wiped
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
