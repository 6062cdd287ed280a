import Foundation
import LabCore

/// Reference operations timed in the lab's own process, next to the steps they calibrate:
/// RSA-2048 PKCS#1 v1.5 SHA-256 sign and verify, and AES-128-CBC encryption of 16 KiB.
///
/// A step's time divided by the calibration unit (`CalibrationSample.unit`) is a figure
/// that moves with the step's own code rather than with the machine: runs on different
/// machines, or at noisy moments of one machine, compare by it.
public struct CalibrationSample: Sendable, Codable, Equatable {
    /// Median nanoseconds of one RSA-2048 signature.
    public var rsaSign: UInt64
    /// Median nanoseconds of one RSA-2048 verification.
    public var rsaVerify: UInt64
    /// Median nanoseconds of one AES-128-CBC encryption of 16 KiB.
    public var aesCBC16K: UInt64

    /// A sample of the three medians.
    public init(rsaSign: UInt64, rsaVerify: UInt64, aesCBC16K: UInt64) {
        self.rsaSign = rsaSign
        self.rsaVerify = rsaVerify
        self.aesCBC16K = aesCBC16K
    }

    /// The calibration unit in nanoseconds: the geometric mean of the RSA-2048 signature
    /// (public-key arithmetic) and the 16 KiB AES-128-CBC encryption (a symmetric cipher
    /// over memory), so neither kind of work alone sets the scale.
    public var unit: Double { (Double(self.rsaSign) * Double(self.aesCBC16K)).squareRoot() }

    /// The median of `values` (`Statistics.median`); 0 for no values.
    public static func median(_ values: [UInt64]) -> UInt64 {
        Statistics.median(values) ?? 0
    }

    /// The per-operation medians of `samples`; nil when there are none.
    public static func median(_ samples: [CalibrationSample]) -> CalibrationSample? {
        guard !samples.isEmpty else { return nil }
        return CalibrationSample(
            rsaSign: Self.median(samples.map(\.rsaSign)),
            rsaVerify: Self.median(samples.map(\.rsaVerify)),
            aesCBC16K: Self.median(samples.map(\.aesCBC16K))
        )
    }
}

/// The calibration block of a run: what timed the reference operations, and each time it did.
public struct Calibration: Sendable, Codable, Equatable {
    /// The provider that ran the reference operations, with its version.
    public var provider: String
    /// Every sample, in order: at the start of the run, before each round, at the end.
    public var samples: [CalibrationSample]

    /// A block.
    public init(provider: String, samples: [CalibrationSample]) {
        self.provider = provider
        self.samples = samples
    }

    /// The per-operation medians of all samples.
    public var median: CalibrationSample? { CalibrationSample.median(self.samples) }
}
