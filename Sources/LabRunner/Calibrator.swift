import Foundation
public import LabCore
public import LabResults

/// Times the reference operations with one provider (the OpenSSL provider where there is
/// one: it calls the system's optimised libcrypto, whatever the lab's build configuration).
public struct Calibrator: Sendable {
    /// The reference operations.
    public enum Operation: String, Sendable, CaseIterable, Codable {
        /// RSA-2048 PKCS#1 v1.5 SHA-256 signature.
        case rsaSign = "rsa2048-sign"
        /// RSA-2048 PKCS#1 v1.5 SHA-256 verification.
        case rsaVerify = "rsa2048-verify"
        /// AES-128-CBC encryption of 16 KiB, no padding.
        case aesCBC16K = "aes-128-cbc-16k"
    }

    /// The provider's name and version, e.g. `openssl (OpenSSL 3.0.17 1 Jul 2025)`.
    public let provider: String
    private let perform: @Sendable (Operation) throws -> Void

    /// A calibrator on `provider`, with its fixed keys and inputs made once.
    public init<P: CryptoProvider>(_ provider: P) throws {
        self.provider = "\(P.name) (\(provider.version))"
        let key = try provider.decodePrivateKey(Self.rsaKey, type: .rsa(.signature))
        let publicKey = try provider.publicKey(for: key)
        let message = Array("crypto-lab calibration".utf8)
        let signature = try provider.sign(message, with: key, scheme: .rsaPKCS1v15(.sha256))
        let aesKey = [UInt8](repeating: 0x2A, count: 16)
        let iv = [UInt8](repeating: 0x17, count: 16)
        let block = [UInt8](repeating: 0x5C, count: 16 * 1024)
        self.perform = { operation in
            switch operation {
            case .rsaSign:
                _ = try provider.sign(message, with: key, scheme: .rsaPKCS1v15(.sha256))
            case .rsaVerify:
                guard
                    try provider.isValidSignature(
                        signature,
                        for: message,
                        publicKey: publicKey,
                        scheme: .rsaPKCS1v15(.sha256)
                    )
                else { throw LabError(.cryptoFailure, "The calibration signature did not verify") }
            case .aesCBC16K:
                _ = try provider.aesCBCEncrypt(block, key: aesKey, iv: iv, padding: false)
            }
        }
    }

    /// One sample: the median of `signs` signatures, `verifies` verifications and
    /// `encryptions` 16 KiB encryptions, each timed alone. The defaults take about 15 ms.
    public func sample(signs: Int = 11, verifies: Int = 31, encryptions: Int = 31) throws -> CalibrationSample {
        CalibrationSample(
            rsaSign: try self.median(.rsaSign, max(1, signs)),
            rsaVerify: try self.median(.rsaVerify, max(1, verifies)),
            aesCBC16K: try self.median(.aesCBC16K, max(1, encryptions))
        )
    }

    /// Operations per second of `operation`, run back to back for `seconds` of wall time,
    /// as `openssl speed` measures: the count done divided by the wall time they took
    /// (`openssl speed -elapsed`) and by the CPU time this thread spent (plain `openssl
    /// speed` divides by user CPU time), so a busy machine does not skew the comparison.
    public func rate(_ operation: Operation, seconds: Double) throws -> (wall: Double, cpu: Double) {
        let start = Stopwatch.now()
        let cpuStart = Self.threadCPUNanoseconds()
        let until = start &+ UInt64(seconds * 1e9)
        var count = 0
        var now = start
        repeat {
            for _ in 0..<8 { try self.perform(operation) }
            count += 8
            now = Stopwatch.now()
        } while now < until
        let cpu = Self.threadCPUNanoseconds() &- cpuStart
        return (Double(count) / (Double(now &- start) / 1e9), cpu > 0 ? Double(count) / (Double(cpu) / 1e9) : 0)
    }

    /// The calling thread's CPU time, in nanoseconds.
    static func threadCPUNanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    private func median(_ operation: Operation, _ count: Int) throws -> UInt64 {
        var times: [UInt64] = []
        times.reserveCapacity(count)
        for _ in 0..<count {
            let start = Stopwatch.now()
            try self.perform(operation)
            times.append(Stopwatch.now() &- start)
        }
        return CalibrationSample.median(times)
    }

    /// The fixed RSA-2048 key the calibration signs with (PKCS#1 `RSAPrivateKey` DER).
    /// It protects nothing: it only makes every run sign with the same key, and spares each
    /// run a key generation.
    static let rsaKey: [UInt8] = Array(
        Data(
            base64Encoded: [
                "MIIEowIBAAKCAQEAxtR7BgwGW9FrRN48/YO03TO1jd9Y7f8aR1326CuL6+hbM/7h4g6Go2pkIrKTB6CdXoDUejs1ec4fZFWfVTZD",
                "c1Wb+M1bRF+jQZr2VtcZl7HDsE9RrjW+tJWDHPmiUAbCUmzoBoQ+oeLI6PujdSF3bIvqF2OWeDJM0oUxpDTsteRQX7cgrkbn6OSc",
                "iRE7e6WZ+wmChjjJYDIawpSe8MJF+ExVJ/RZEy4OPyYemn+pbKMUJaFZrbYsdv8DFJgn5s9CrmIfOj+1769xM7FEdIf/cz7Om2PQ",
                "8egE1PRzk4MlWNAf+WccHgE5HTpI1TnNTNc4oPbz/o8kLSs63TVbOAMjeQIDAQABAoIBADyUHX18qW1NM3kSmxOEjtT8fbrhi0dL",
                "+7Y1x1X6epGgRDVl2W2WDmh4sFSwAsMGqRvTdaleI89eQUtBGSANveREd5aI/t8oomWJMLfJppcExsIPkKva3SVJDl8EIfNu88LI",
                "QrNFlI2fOqZdkPJNhYTRZjvFEGHDtYtIoJTOuTY7ddGF1Y/7vErLVDaSeMhP1zIjHwabAgGYCq7pK3F/BVTpWLRhq5cYMx9y1rpo",
                "afWexGSQo0xy9OjZRsA1hzaG+hWmlY+fvaou64EMW/J3hpLX6K68IvmPmRnoaf9w1c8Wh1CPj8oo8Bx8U/w7KqELf6uRgpEZmjke",
                "U5jkm2wDwocCgYEA5NTWDA0fhdRYQUKjQe+Lu6Xpcel8fy3mmD8WA0B4ujkBL+A/0mHwlaPnDhxux5mPno94/lVrz8pJI4N574hj",
                "Ob4c9U2cSc/Nq2CZSZOXLGsJ+/tsFmA6/oMbEfh8+ooabdCFyuPiVuinlRX9awgtoHx1XWfGSOrCXVLhaMkaRQcCgYEA3m/GJjp7",
                "FJWYRf5pn713UccrPhkAQg9yg367xznePNroRroLAMZ8p+NEkzrP/BmyWQYdfIsW+lkGxySzlXq8AOEHy0wrP71igRyain/4f0GI",
                "8J4MAJMeBoMPzO49Zw9ZGulCIr+o1rZkJMZUi+hWiCKK1JBBsfKmjNFLhq3Rs38CgYBnemeg435Rwoh2WnABLRX/MTOzs2X9DQCt",
                "8DlAFzOA4q5KvBmgRXHJ+WhO1USzNhngFfkc6fvq5wrT6GyHiSF1xybJNuNp7XKQAQrQXtGJ4I2PSU7Df5it5xOiuL+rfDAfYKBf",
                "81Uy/9pobJ1AfV5EqINaTcc4yhBCq2wLOoWKmQKBgCzB6uoYTFnI/BnhZll5I0A2RlI5b57bQtyIrLoav8gY+DH7D2m5hq21gj/p",
                "zp3YgdV98IL17cq0DTQXA3epeZjnrszOZ8lsjxyRp9sEgvkAM9DOzHV1JM6EorJGod5R7UkH9IHPdOa3TpFDwxFfz8GWyb6ZxE5N",
                "GAwvtPXFlfN7AoGBANqx/ubGOy3963FqefmF5NXkj5fLLtv/UnSTHKEdg3Yo15MyC41T3skjrUZlJcwlhgJ4pvVdibzOaoPkf0h5",
                "EB9WtDbRq7bRn//20Lj7/idn8UE/WHmGZOp7KdSdeUT/vP+bofByvyoEhvtDHzSuL3r8N7PQvJJ+tbv4WxDw1uuL",
            ].joined()
        )!
    )
}
