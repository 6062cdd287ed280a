public import LabCore

/// The Wycheproof files and the primitive each one checks.
public enum WycheproofFiles {
    /// Every file in `Tests/Vectors/wycheproof` that a provider primitive has, with the RSA
    /// modulus size of its keys (a provider that refuses that size is not offered the file).
    /// `chacha20_poly1305_test.json` is not here: no provider offers ChaCha20-Poly1305; msg/1's
    /// HPKE uses swift-crypto's, which `ChaChaPolyVectorTests` checks.
    public static let all: [(name: String, primitive: Primitive, rsaBits: Int?)] = [
        ("aes_cbc_pkcs5_test.json", .aesCBC, nil),
        ("aes_gcm_test.json", .aesGCM, nil),
        ("aes_wrap_test.json", .aesKeyWrap, nil),
        ("rsa_pkcs1_2048_test.json", .rsaPKCS1Encryption, 2048),
        ("rsa_oaep_2048_sha1_mgf1sha1_test.json", .rsaOAEP, 2048),
        ("rsa_oaep_2048_sha256_mgf1sha256_test.json", .rsaOAEP, 2048),
        ("rsa_pkcs1_1024_sig_gen_test.json", .rsaPKCS1Signature, 1024),
        ("rsa_pkcs1_2048_sig_gen_test.json", .rsaPKCS1Signature, 2048),
        ("rsa_signature_2048_sha256_test.json", .rsaPKCS1Signature, 2048),
        ("rsa_pss_2048_sha256_mgf1_32_test.json", .rsaPSS, 2048),
        ("x25519_test.json", .x25519, nil),
        ("ed25519_test.json", .ed25519, nil),
        ("hkdf_sha256_test.json", .hkdfSHA256, nil),
        ("mlkem_768_test.json", .mlkem768, nil),
        ("mldsa_65_verify_test.json", .mldsa65, nil),
        ("mldsa_65_sign_seed_test.json", .mldsa65, nil),
    ]

    /// Nil when `capabilities` offer what `file` needs; else why not.
    public static func notOffered(_ file: String, by capabilities: ProviderCapabilities) -> String? {
        guard let entry = Self.all.first(where: { $0.name == file }) else { return "no such file" }
        guard capabilities.primitives.contains(entry.primitive) else {
            return capabilities.notes[entry.primitive] ?? "no \(entry.primitive)"
        }
        if let bits = entry.rsaBits, !(capabilities.rsaBits?.contains(bits) ?? false) {
            return "RSA-\(bits) keys are refused (it accepts \(capabilities.rsaBits.map { "\($0)" } ?? "none"))"
        }
        return nil
    }
}

/// Runs Wycheproof files against a provider, honouring each test's `valid`/`invalid`/`acceptable`.
///
/// valid: the operation must succeed with the published output; invalid: it must fail
/// (throw, or verify as false); acceptable: either, but a success must give the output.
/// Where the operation is deterministic and the provider offers the key size (RSA
/// PKCS#1 v1.5 signing), "acceptable" vectors must give the published output too: a
/// provider that refuses them is not offered the file (`WycheproofFiles.notOffered`).
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
                case "rsa_signature_2048_sha256_test.json": self.rsaVerify(group, test, pss: false, &tally)
                case "rsa_pss_2048_sha256_mgf1_32_test.json": self.rsaVerify(group, test, pss: true, &tally)
                case "aes_wrap_test.json": self.aesKeyWrap(test, &tally)
                case "mldsa_65_sign_seed_test.json": self.mldsaSign(group, test, &tally)
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
        // PKCS#1 v1.5 signing is deterministic, and the key loaded: valid and acceptable
        // vectors alike must give the published signature, which must verify.
        switch test.result {
        case .valid, .acceptable:
            tally.check(signature == test.bytes("sig") && verifies, test, signature == nil ? "but signing failed" : "")
        case .invalid: tally.check(signature != test.bytes("sig") && !verifies, test, "but the signature verified")
        }
    }

    private func rsaVerify(
        _ group: WycheproofFile.Group,
        _ test: WycheproofFile.Test,
        pss: Bool,
        _ tally: inout VectorTally
    ) {
        guard let hash = HashAlgorithm(rawValue: group.string("sha") ?? "") else {
            return tally.skip("\(group.string("sha") ?? "?") (not offered)")
        }
        if pss {
            // cx/1's PSS: MGF1 over the message's hash, a salt as long as the digest.
            let digestBytes = [HashAlgorithm.sha1: 20, .sha256: 32, .sha384: 48, .sha512: 64][hash]
            guard group.string("mgfSha") == hash.rawValue, group.int("sLen") == digestBytes else {
                return tally.skip("PSS parameters other than MGF1 with the same hash and a digest-long salt")
            }
        }
        let publicKey = try? self.provider.decodePublicKey(group.bytes("publicKeyAsn"), type: .rsa(.signature))
        let verifies =
            publicKey.flatMap {
                try? self.provider.isValidSignature(
                    test.bytes("sig"),
                    for: test.bytes("msg"),
                    publicKey: $0,
                    scheme: pss ? .rsaPSS(hash) : .rsaPKCS1v15(hash)
                )
            } ?? false
        tally.checkVerdict(verifies, test)
    }

    private func aesKeyWrap(_ test: WycheproofFile.Test, _ tally: inout VectorTally) {
        let kek = test.bytes("key")
        let key = test.bytes("msg")
        let wrapped = test.bytes("ct")
        let unwrapped = try? self.provider.aesKeyUnwrap(wrapped, kek: kek)
        switch test.result {
        case .valid:
            let produced = try? self.provider.aesKeyWrap(key, kek: kek)
            tally.check(produced == wrapped && unwrapped == key, test)
        case .invalid:
            tally.check(unwrapped == nil, test, "but it unwrapped")
        case .acceptable:
            tally.check(unwrapped == nil || unwrapped == key, test)
        }
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

    /// ML-DSA-65 signing from a seed. The provider's signing is hedged (randomized), so a
    /// signature of its own is checked by verifying it with the published public key, and
    /// the published (deterministic) signature must verify with the key made from the seed.
    private func mldsaSign(_ group: WycheproofFile.Group, _ test: WycheproofFile.Test, _ tally: inout VectorTally) {
        guard test.has("msg") else {
            return tally.skip("an external μ instead of a message (cx/1 signs messages)")
        }
        if test.has("ctx"), !test.bytes("ctx").isEmpty || (test.fields["ctx"] as? String)?.isEmpty == false {
            return tally.skip("non-empty ML-DSA contexts (cx/1 uses the empty context)")
        }
        let message = test.bytes("msg")
        let key = try? self.provider.decodePrivateKey(group.bytes("privateSeed"), type: .mldsa65)
        switch test.result {
        case .valid, .acceptable:
            guard let key, let publicKey = try? self.provider.publicKey(for: key),
                let published = try? self.provider.decodePublicKey(group.bytes("publicKey"), type: .mldsa65)
            else {
                return tally.check(test.result == .acceptable, test, "but the key did not load")
            }
            let sameKey = (try? self.provider.encode(publicKey)) == group.bytes("publicKey")
            let signature = try? self.provider.sign(message, with: key, scheme: .mldsa65)
            let ownVerifies = signature.flatMap {
                try? self.provider.isValidSignature($0, for: message, publicKey: published, scheme: .mldsa65)
            } ?? false
            let publishedVerifies =
                (try? self.provider.isValidSignature(test.bytes("sig"), for: message, publicKey: publicKey, scheme: .mldsa65))
                ?? false
            tally.check(
                sameKey && ownVerifies && publishedVerifies,
                test,
                "(key from seed matches: \(sameKey), own signature verifies: \(ownVerifies), published verifies: \(publishedVerifies))"
            )
        case .invalid:
            // A seed of the wrong length: no key, so nothing is signed.
            let signature = key.flatMap { try? self.provider.sign(message, with: $0, scheme: .mldsa65) }
            tally.check(signature == nil, test, "but it signed")
        }
    }
}
