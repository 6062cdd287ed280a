import LabCore

/// The Wycheproof files and the primitive each one checks.
public enum WycheproofFiles {
    /// Every file in `Tests/Vectors/wycheproof` that a cx/1 primitive has.
    public static let all: [(name: String, primitive: Primitive)] = [
        ("aes_cbc_pkcs5_test.json", .aesCBC),
        ("aes_gcm_test.json", .aesGCM),
        ("rsa_pkcs1_2048_test.json", .rsaPKCS1Encryption),
        ("rsa_oaep_2048_sha1_mgf1sha1_test.json", .rsaOAEP),
        ("rsa_oaep_2048_sha256_mgf1sha256_test.json", .rsaOAEP),
        ("rsa_pkcs1_1024_sig_gen_test.json", .rsaPKCS1Signature),
        ("rsa_pkcs1_2048_sig_gen_test.json", .rsaPKCS1Signature),
        ("rsa_signature_2048_sha256_test.json", .rsaPKCS1Signature),
        ("x25519_test.json", .x25519),
        ("ed25519_test.json", .ed25519),
        ("hkdf_sha256_test.json", .hkdfSHA256),
        ("mlkem_768_test.json", .mlkem768),
        ("mldsa_65_verify_test.json", .mldsa65),
    ]
}

/// Runs Wycheproof files against a provider, honouring each test's `valid`/`invalid`/`acceptable`.
///
/// valid: the operation must succeed with the published output; invalid: it must fail
/// (throw, or verify as false); acceptable: either, but a success must give the output.
public struct WycheproofRunner<P: CryptoProvider> {
    /// The provider under test.
    public let provider: P

    /// A runner for `provider`.
    public init(provider: P) {
        self.provider = provider
    }

    /// Runs one file.
    public func run(_ name: String) throws -> VectorTally {
        let file = try WycheproofFile(name)
        var tally = VectorTally(file: name, provider: self.provider.name)
        for group in file.groups {
            for test in group.tests {
                switch name {
                case "aes_cbc_pkcs5_test.json": self.aesCBC(test, &tally)
                case "aes_gcm_test.json": self.aesGCM(group, test, &tally)
                case "rsa_pkcs1_2048_test.json": self.rsaDecrypt(group, test, padding: .pkcs1v15, &tally)
                case "rsa_oaep_2048_sha1_mgf1sha1_test.json":
                    self.rsaDecrypt(group, test, padding: .oaep(.sha1), &tally)
                case "rsa_oaep_2048_sha256_mgf1sha256_test.json":
                    self.rsaDecrypt(group, test, padding: .oaep(.sha256), &tally)
                case "rsa_pkcs1_1024_sig_gen_test.json", "rsa_pkcs1_2048_sig_gen_test.json":
                    self.rsaSign(group, test, &tally)
                case "rsa_signature_2048_sha256_test.json": self.rsaVerify(group, test, &tally)
                case "x25519_test.json": self.x25519(test, &tally)
                case "ed25519_test.json": self.ed25519(group, test, &tally)
                case "hkdf_sha256_test.json": self.hkdf(test, &tally)
                case "mlkem_768_test.json": self.mlkem(test, &tally)
                case "mldsa_65_verify_test.json": self.mldsa(group, test, &tally)
                default: throw LabError(.unsupported, "No runner for \(name)")
                }
            }
        }
        return tally
    }

    // MARK: - Per primitive

    private func aesCBC(_ test: WycheproofFile.Test, _ tally: inout VectorTally) {
        let key = test.bytes("key")
        let iv = test.bytes("iv")
        let message = test.bytes("msg")
        let ciphertext = test.bytes("ct")
        let decrypted = try? self.provider.aesCBCDecrypt(ciphertext, key: key, iv: iv, padding: true)
        switch test.result {
        case .valid:
            let encrypted = try? self.provider.aesCBCEncrypt(message, key: key, iv: iv, padding: true)
            tally.check(encrypted == ciphertext && decrypted == message, test)
        case .invalid:
            tally.check(decrypted == nil, test, "but decryption succeeded")
        case .acceptable:
            tally.check(decrypted == nil || decrypted == message, test)
        }
    }

    private func aesGCM(_ group: WycheproofFile.Group, _ test: WycheproofFile.Test, _ tally: inout VectorTally) {
        guard group.int("tagSize") == 128 else { return tally.skip("tag sizes other than 128 bits") }
        let key = test.bytes("key")
        let nonce = test.bytes("iv")
        let aad = test.bytes("aad")
        let message = test.bytes("msg")
        let sealed = test.bytes("ct") + test.bytes("tag")
        let opened = try? self.provider.aesGCMOpen(sealed, key: key, nonce: nonce, aad: aad)
        switch test.result {
        case .valid:
            let produced: [UInt8]?
            do {
                produced = try self.provider.aesGCMSeal(message, key: key, nonce: nonce, aad: aad)
            } catch let error as LabError where nonce.count != 12 {
                // swift-crypto takes nonces of 12 bytes or more only; cx/1 uses 12.
                _ = error
                return tally.skip("\(nonce.count)-byte nonces refused by the provider")
            } catch {
                produced = nil
            }
            tally.check(produced == sealed && opened == message, test)
        case .invalid:
            tally.check(opened == nil, test, "but it opened")
        case .acceptable:
            tally.check(opened == nil || opened == message, test)
        }
    }

    private func rsaDecrypt(
        _ group: WycheproofFile.Group,
        _ test: WycheproofFile.Test,
        padding: RSAEncryptionPadding,
        _ tally: inout VectorTally
    ) {
        if !test.bytes("label").isEmpty {
            return tally.skip("OAEP labels (cx/1 uses an empty label)")
        }
        guard let key = try? self.provider.decodePrivateKey(group.bytes("privateKeyPkcs8"), type: .rsa(.encryption))
        else {
            return tally.failures.append("\(test.label): the group's private key did not load")
        }
        let plaintext = try? self.provider.rsaDecrypt(test.bytes("ct"), with: key, padding: padding)
        tally.checkOutput(plaintext, expected: test.bytes("msg"), test)
    }

    private func rsaSign(_ group: WycheproofFile.Group, _ test: WycheproofFile.Test, _ tally: inout VectorTally) {
        guard let hash = HashAlgorithm(rawValue: group.string("sha") ?? "") else {
            return tally.skip("\(group.string("sha") ?? "?") (not offered)")
        }
        let scheme = SignatureScheme.rsaPKCS1v15(hash)
        guard let key = try? self.provider.decodePrivateKey(group.bytes("privateKeyPkcs8"), type: .rsa(.signature)),
            let publicKey = try? self.provider.decodePublicKey(group.bytes("keyAsn"), type: .rsa(.signature))
        else {
            return tally.failures.append("\(test.label): the group's keys did not load")
        }
        let signature = try? self.provider.sign(test.bytes("msg"), with: key, scheme: scheme)
        let verifies =
            (try? self.provider.isValidSignature(
                test.bytes("sig"),
                for: test.bytes("msg"),
                publicKey: publicKey,
                scheme: scheme
            )) ?? false
        switch test.result {
        case .valid: tally.check(signature == test.bytes("sig") && verifies, test)
        case .invalid: tally.check(signature != test.bytes("sig"), test)
        case .acceptable: tally.check(signature == nil || (signature == test.bytes("sig") && verifies), test)
        }
    }

    private func rsaVerify(_ group: WycheproofFile.Group, _ test: WycheproofFile.Test, _ tally: inout VectorTally) {
        guard let hash = HashAlgorithm(rawValue: group.string("sha") ?? "") else {
            return tally.skip("\(group.string("sha") ?? "?") (not offered)")
        }
        let publicKey = try? self.provider.decodePublicKey(group.bytes("publicKeyAsn"), type: .rsa(.signature))
        let verifies =
            publicKey.flatMap {
                try? self.provider.isValidSignature(
                    test.bytes("sig"),
                    for: test.bytes("msg"),
                    publicKey: $0,
                    scheme: .rsaPKCS1v15(hash)
                )
            } ?? false
        tally.checkVerdict(verifies, test)
    }

    private func x25519(_ test: WycheproofFile.Test, _ tally: inout VectorTally) {
        let shared: [UInt8]? = {
            guard let key = try? self.provider.decodePrivateKey(test.bytes("private"), type: .x25519),
                let peer = try? self.provider.decodePublicKey(test.bytes("public"), type: .x25519)
            else { return nil }
            return try? self.provider.x25519(key, peer: peer)
        }()
        // Acceptable low-order and twist points may be refused (RFC 7748 §6.1).
        tally.checkOutput(shared, expected: test.bytes("shared"), test)
    }

    private func ed25519(_ group: WycheproofFile.Group, _ test: WycheproofFile.Test, _ tally: inout VectorTally) {
        let publicKey = try? self.provider.decodePublicKey(group.bytes("publicKey", "pk"), type: .ed25519)
        let verifies =
            publicKey.flatMap {
                try? self.provider.isValidSignature(
                    test.bytes("sig"),
                    for: test.bytes("msg"),
                    publicKey: $0,
                    scheme: .ed25519
                )
            } ?? false
        tally.checkVerdict(verifies, test)
    }

    private func hkdf(_ test: WycheproofFile.Test, _ tally: inout VectorTally) {
        let output = try? self.provider.hkdfSHA256(
            inputKeyMaterial: test.bytes("ikm"),
            salt: test.bytes("salt"),
            info: test.bytes("info"),
            outputByteCount: test.int("size") ?? 0
        )
        tally.checkOutput(output, expected: test.bytes("okm"), test)
    }

    private func mlkem(_ test: WycheproofFile.Test, _ tally: inout VectorTally) {
        let outcome: (publicKey: [UInt8], shared: [UInt8])? = {
            guard let key = try? self.provider.decodePrivateKey(test.bytes("seed"), type: .mlkem768),
                let publicKey = try? self.provider.encode(try self.provider.publicKey(for: key)),
                let shared = try? self.provider.mlkemDecapsulate(test.bytes("c"), with: key)
            else { return nil }
            return (publicKey, shared)
        }()
        switch test.result {
        case .valid:
            tally.check(
                outcome?.shared == test.bytes("K") && (!test.has("ek") || outcome?.publicKey == test.bytes("ek")),
                test
            )
        case .invalid: tally.check(outcome == nil, test, "but decapsulation succeeded")
        case .acceptable: tally.check(outcome == nil || outcome?.shared == test.bytes("K"), test)
        }
    }

    private func mldsa(_ group: WycheproofFile.Group, _ test: WycheproofFile.Test, _ tally: inout VectorTally) {
        if test.has("ctx"), !test.bytes("ctx").isEmpty || (test.fields["ctx"] as? String)?.isEmpty == false {
            return tally.skip("non-empty ML-DSA contexts (cx/1 uses the empty context)")
        }
        let publicKey = try? self.provider.decodePublicKey(group.bytes("publicKey"), type: .mldsa65)
        let verifies =
            publicKey.flatMap {
                try? self.provider.isValidSignature(
                    test.bytes("sig"),
                    for: test.bytes("msg"),
                    publicKey: $0,
                    scheme: .mldsa65
                )
            } ?? false
        tally.checkVerdict(verifies, test)
    }
}
