import Crypto
import Foundation
import LabCore
public import NIOSSL
import SwiftASN1
import X509

/// A server's TLS identity: its certificate chain and private key.
public struct TLSIdentity: Sendable {
    /// The chain, leaf first.
    public let chain: [NIOSSLCertificate]
    /// The leaf's private key.
    public let privateKey: NIOSSLPrivateKey

    /// The leaf certificate.
    public var leaf: NIOSSLCertificate { self.chain[0] }

    /// An identity from PEM files.
    public init(certificateFile: String, privateKeyFile: String) throws {
        do {
            self.chain = try NIOSSLCertificate.fromPEMFile(certificateFile)
        } catch {
            throw LabError(
                .invalidScenario,
                "Cannot read the TLS certificate '\(certificateFile)' (expected a PEM file)",
                cause: UnderlyingError(describing: error)
            )
        }
        guard !self.chain.isEmpty else {
            throw LabError(.invalidScenario, "The TLS certificate file '\(certificateFile)' holds no certificate")
        }
        do {
            self.privateKey = try NIOSSLPrivateKey(file: privateKeyFile, format: .pem)
        } catch {
            throw LabError(
                .invalidScenario,
                "Cannot read the TLS private key '\(privateKeyFile)' (expected an unencrypted PEM file)",
                cause: UnderlyingError(describing: error)
            )
        }
    }

    /// A warning if the private key file at `path` can be read by anyone but its owner (as
    /// ssh refuses such keys; the lab serves, and says so), else nil.
    public static func exposure(ofKeyFile path: String) -> String? {
        // The file itself, not a symbolic link to it (certbot's live/privkey.pem is one).
        let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: target),
            let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue, mode & 0o077 != 0
        else { return nil }
        return
            "the TLS private key '\(path)' can be read by group or others (mode \(String(mode, radix: 8))): chmod 600 it"
    }

    init(chain: [NIOSSLCertificate], privateKey: NIOSSLPrivateKey) {
        self.chain = chain
        self.privateKey = privateKey
    }

    /// A fresh self-signed P-256 identity for `localhost` and 127.0.0.1, valid for a day,
    /// made with swift-certificates: for a run whose scenario brings no certificate.
    public static func selfSigned(commonName: String = "crypto-lab") throws -> TLSIdentity {
        do {
            let key = P256.Signing.PrivateKey()
            let name = try DistinguishedName { CommonName(commonName) }
            let now = Date()
            let certificate = try Certificate(
                version: .v3,
                serialNumber: Certificate.SerialNumber(),
                publicKey: Certificate.PublicKey(key.publicKey),
                notValidBefore: now.addingTimeInterval(-300),
                notValidAfter: now.addingTimeInterval(86_400),
                issuer: name,
                subject: name,
                signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.notCertificateAuthority)
                    SubjectAlternativeNames([
                        .dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])),
                    ])
                },
                issuerPrivateKey: Certificate.PrivateKey(key)
            )
            let der = try certificate.serializeAsPEM().derBytes
            return TLSIdentity(
                chain: [try NIOSSLCertificate(bytes: der, format: .der)],
                privateKey: try NIOSSLPrivateKey(bytes: Array(key.derRepresentation), format: .der)
            )
        } catch {
            throw LabError(
                .cryptoFailure,
                "Cannot make a self-signed certificate",
                cause: UnderlyingError(describing: error)
            )
        }
    }

    /// The leaf as PEM, e.g. for a client that pins it.
    public func leafPEM() throws -> String {
        let der = try self.leaf.toDERBytes()
        let base64 = Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN CERTIFICATE-----\n\(base64)\n-----END CERTIFICATE-----\n"
    }
}
