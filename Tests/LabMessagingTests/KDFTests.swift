import Foundation
import LabBuiltIns
import LabCore
import LabMessaging
import LabTestSupport
import Testing

/// The password KDFs against published vectors and against Python's hashlib (and, for
/// Argon2id, Python's `cryptography`, whose Argon2id is not libargon2's code).
@Suite(.tier(.unit)) struct KDFTests {
    @Test func pbkdf2MatchesWycheproof() throws {
        let file = try WycheproofFile("pbkdf2_hmacsha256_test.json")
        var checked = 0
        for group in file.groups {
            for test in group.tests {
                let iterations = try #require(test.int("iterationCount"))
                // The vectors go up to 2^24 iterations; the cheap ones cover the algorithm.
                guard iterations <= 100_000 else { continue }
                let kdf = PasswordKDF.pbkdf2SHA256(iterations: iterations)
                let derived = try kdf.derive(
                    password: test.bytes("password"),
                    salt: test.bytes("salt"),
                    length: try #require(test.int("dkLen"))
                )
                #expect((derived == test.bytes("dk")) == (test.result != .invalid), "\(test.label)")
                checked += 1
            }
        }
        #expect(checked >= 40)
    }

    /// RFC 7914 §12's scrypt vectors (the first two; the third needs 1 GiB).
    @Test(arguments: [
        (
            "", "", 4, 1, 1,
            "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906"
        ),
        (
            "password", "NaCl", 10, 8, 16,
            "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640"
        ),
    ])
    func scryptMatchesRFC7914(password: String, salt: String, logN: Int, r: Int, p: Int, expected: String) throws {
        let derived = try PasswordKDF.scrypt(logN: logN, r: r, p: p).derive(
            password: Array(password.utf8),
            salt: Array(salt.utf8),
            length: 64
        )
        #expect(derived == [UInt8](hex: expected))
    }

    /// RFC 9106 §5.3's Argon2id vector: version 1.3, m = 32 KiB, t = 3, p = 4, with the
    /// secret K and associated data X that the service's own use leaves empty.
    @Test func argon2idMatchesRFC9106() throws {
        let tag = try Argon2id.derive(
            password: [UInt8](repeating: 0x01, count: 32),
            salt: [UInt8](repeating: 0x02, count: 16),
            secret: [UInt8](repeating: 0x03, count: 8),
            associatedData: [UInt8](repeating: 0x04, count: 12),
            memoryKiB: 32,
            iterations: 3,
            parallelism: 4,
            length: 32
        )
        #expect(tag == [UInt8](hex: "0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659"))
    }

    @Test func argon2idRefusesWhatRFC9106Forbids() {
        #expect(throws: LabError.self) {
            try Argon2id.derive(
                password: [1],
                salt: [UInt8](repeating: 2, count: 16),
                memoryKiB: 64,
                iterations: 1,
                parallelism: 1,
                length: -1
            )
        }
        // A salt under 8 bytes, and less memory than 8 KiB per lane.
        for (salt, memory) in [(4, 64), (16, 16)] {
            #expect(throws: LabError.self) {
                try PasswordKDF.argon2id(memoryKiB: memory, iterations: 2, parallelism: 4)
                    .derive(password: [1, 2, 3], salt: [UInt8](repeating: 7, count: salt))
            }
        }
    }

    /// Each KDF, as the service uses it (fresh salt, stored parameters), against hashlib.
    @Test func everyKDFMatchesPythonHashlib() async throws {
        let password = "pässwörd 🔑 ' OR '1'='1"
        let kdfs: [PasswordKDF] = [
            .sha512Salted, .pbkdf2SHA256(iterations: 1000), .scrypt(logN: 10, r: 8, p: 1),
            .argon2id(memoryKiB: 256, iterations: 2, parallelism: 2),
        ]
        var lines: [String] = []
        var ours: [[UInt8]] = []
        for kdf in kdfs {
            let salt = kdf.makeSalt()
            ours.append(try kdf.derive(password: Array(password.utf8), salt: salt))
            lines.append("\(kdf)|\(salt.hexString)")
        }
        let script = """
            import hashlib, sys
            from cryptography.hazmat.primitives.kdf.argon2 import Argon2id
            password = bytes.fromhex(sys.argv[1])
            for line in sys.argv[2:]:
                kdf, salt = line.split('|')
                salt = bytes.fromhex(salt)
                parts = kdf.split(':')
                if parts[0] == 'sha512-salted':
                    out = hashlib.sha512(password + salt).digest()
                elif parts[0] == 'pbkdf2-sha256':
                    out = hashlib.pbkdf2_hmac('sha256', password, salt, int(parts[1]), 32)
                elif parts[0] == 'argon2id':
                    out = Argon2id(salt=salt, length=32, iterations=int(parts[2]), lanes=int(parts[3]), memory_cost=int(parts[1])).derive(password)
                else:
                    out = hashlib.scrypt(password, salt=salt, n=2 ** int(parts[1]), r=int(parts[2]), p=int(parts[3]), dklen=32, maxmem=2 ** 28)
                print(out.hex())
            """
        let outcome = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["python3", "-c", script, Array(password.utf8).hexString] + lines
        )
        #expect(outcome.status == 0, "\(outcome.errors)")
        let theirs = outcome.output.split(separator: "\n").map { [UInt8](hex: String($0)) ?? [] }
        #expect(theirs == ours)
    }

    @Test func seedSaltIsSixtyFourHexCharacters() throws {
        let salt = PasswordKDF.sha512Salted.makeSalt()
        #expect(salt.count == 64)
        #expect(salt.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        #expect(PasswordKDF.sha512Salted.makeSalt() != salt)
    }

    @Test func storedFormRoundTrips() {
        for kdf: PasswordKDF in [
            .sha512Salted, .pbkdf2SHA256(iterations: 600_000), .scrypt(logN: 17, r: 8, p: 1), .defaultArgon2id,
        ] {
            #expect(PasswordKDF(stored: kdf.description, kinds: BuiltInPlugins.messagingKinds) == kdf)
        }
        #expect(PasswordKDF.defaultArgon2id.description == "argon2id:19456:2:1")
        #expect(PasswordKDF(name: "argon2id", kinds: BuiltInPlugins.messagingKinds) == .argon2id(memoryKiB: 19_456, iterations: 2, parallelism: 1))
        for bad in [
            "", "scrypt", "pbkdf2-sha256:0", "scrypt:40:8:1", "md5", "sha512-salted:1", "argon2id", "argon2id:32:2:1",
            "argon2id:19456:0:1", "argon2id:64:2:9", "argon2id:19456:2",
        ] {
            #expect(PasswordKDF(stored: bad, kinds: BuiltInPlugins.messagingKinds) == nil, "\(bad)")
        }
        #expect(PasswordKDF.default == .scrypt(logN: 17, r: 8, p: 1))
        #expect(PasswordKDF(name: "pbkdf2-sha256", kinds: BuiltInPlugins.messagingKinds) == .pbkdf2SHA256(iterations: 600_000))
    }
}
