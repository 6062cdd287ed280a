import Crypto
import Foundation
public import LabCore
import NIOCore
public import NIOSSL
import Synchronization

/// A client's pin, loaded: the one certificate (or public key) it accepts.
///
/// Verification replaces the usual chain-of-trust check entirely, as in the "enforcing
/// trusted certificates" pattern: no CA is consulted, the server's leaf must be the bundled
/// certificate, or carry the pinned SubjectPublicKeyInfo.
public struct LoadedPin: Sendable, CustomStringConvertible {
    enum Kind: Sendable {
        case certificate(der: [UInt8])
        case spki(sha256: [UInt8])
    }

    let kind: Kind

    /// Loads a scenario's pin (a bundled certificate is read here, PEM or DER).
    public init(_ pin: CertificatePin) throws {
        switch pin {
        case .spkiSHA256(let hash):
            guard hash.count == 32 else {
                throw LabError(.invalidScenario, "An SPKI pin is a SHA-256: 32 bytes, not \(hash.count)")
            }
            self.kind = .spki(sha256: hash)
        case .certificateFile(let path):
            let certificate: NIOSSLCertificate
            do {
                certificate = try Self.readCertificate(path)
            } catch {
                throw LabError(
                    .invalidScenario,
                    "Cannot read the pinned certificate '\(path)' (expected a PEM or DER certificate)",
                    cause: UnderlyingError(describing: error)
                )
            }
            self.kind = .certificate(der: try certificate.toDERBytes())
        }
    }

    /// Pins exactly `certificate`.
    public init(certificate: NIOSSLCertificate) throws {
        self.kind = .certificate(der: try certificate.toDERBytes())
    }

    private static func readCertificate(_ path: String) throws -> NIOSSLCertificate {
        let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
        if let first = try? NIOSSLCertificate.fromPEMBytes(bytes).first { return first }
        return try NIOSSLCertificate(bytes: bytes, format: .der)
    }

    /// The pin as the error messages show it.
    public var description: String {
        switch self.kind {
        case .certificate(let der): "certificate SHA-256 \(Fingerprint.hex(Array(SHA256.hash(data: der))))"
        case .spki(let hash): "SPKI sha256/\(Fingerprint.base64(hash))"
        }
    }

    /// Whether `leaf` is what this pin accepts; otherwise a description of what was presented.
    func check(_ leaf: NIOSSLCertificate) -> String? {
        do {
            let der = try leaf.toDERBytes()
            let spki = try leaf.extractPublicKey().toSPKIBytes()
            let spkiHash = Array(SHA256.hash(data: spki))
            switch self.kind {
            case .certificate(let pinned) where pinned == der: return nil
            case .spki(let pinned) where pinned == spkiHash: return nil
            default:
                return "certificate SHA-256 \(Fingerprint.hex(Array(SHA256.hash(data: der)))), "
                    + "SPKI sha256/\(Fingerprint.base64(spkiHash))"
            }
        } catch {
            return "a certificate that could not be read (\(error))"
        }
    }
}

/// Fingerprint spellings: `AB:CD:…` as `openssl x509 -fingerprint -sha256` prints them, and
/// base64 as in `sha256/…` SPKI pins (curl's `--pinnedpubkey`, HPKP).
public enum Fingerprint {
    /// Colon-separated upper-case hex.
    public static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02X", $0) }.joined(separator: ":")
    }

    /// Base64.
    public static func base64(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
    }

    /// The SHA-256 of a certificate's SubjectPublicKeyInfo.
    public static func spkiSHA256(_ certificate: NIOSSLCertificate) throws -> [UInt8] {
        Array(SHA256.hash(data: try certificate.extractPublicKey().toSPKIBytes()))
    }
}

/// One connection attempt's pin check: the verification callback, and what it saw.
final class PinCheck: Sendable {
    let pin: LoadedPin
    private let mismatch = Mutex<String?>(nil)

    init(pin: LoadedPin) {
        self.pin = pin
    }

    /// What the server presented, if it was refused.
    var refusal: String? { self.mismatch.withLock { $0 } }

    func verify(_ certificates: [NIOSSLCertificate], _ promise: EventLoopPromise<NIOSSLVerificationResult>) {
        guard let leaf = certificates.first else {
            self.mismatch.withLock { $0 = "no certificate" }
            promise.succeed(.failed)
            return
        }
        if let presented = self.pin.check(leaf) {
            self.mismatch.withLock { $0 = presented }
            promise.succeed(.failed)
        } else {
            promise.succeed(.certificateVerified)
        }
    }
}
