import Foundation
import LabCore
import LabMessaging
import LabTesting
import Testing

/// The password KDFs against published vectors and against Python's hashlib.
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

    /// Each KDF, as the service uses it (fresh salt, stored parameters), against hashlib.
    @Test func everyKDFMatchesPythonHashlib() async throws {
        let password = "pässwörd 🔑 ' OR '1'='1"
        let kdfs: [PasswordKDF] = [.sha512Salted, .pbkdf2SHA256(iterations: 1000), .scrypt(logN: 10, r: 8, p: 1)]
        var lines: [String] = []
        var ours: [[UInt8]] = []
        for kdf in kdfs {
            let salt = kdf.makeSalt()
            ours.append(try kdf.derive(password: Array(password.utf8), salt: salt))
            lines.append("\(kdf)|\(salt.hexString)")
        }
        let script = """
            import hashlib, sys
            password = bytes.fromhex(sys.argv[1])
            for line in sys.argv[2:]:
                kdf, salt = line.split('|')
                salt = bytes.fromhex(salt)
                parts = kdf.split(':')
                if parts[0] == 'sha512-salted':
                    out = hashlib.sha512(password + salt).digest()
                elif parts[0] == 'pbkdf2-sha256':
                    out = hashlib.pbkdf2_hmac('sha256', password, salt, int(parts[1]), 32)
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
        for kdf: PasswordKDF in [.sha512Salted, .pbkdf2SHA256(iterations: 600_000), .scrypt(logN: 17, r: 8, p: 1)] {
            #expect(PasswordKDF(stored: kdf.description) == kdf)
        }
        for bad in ["", "scrypt", "pbkdf2-sha256:0", "scrypt:40:8:1", "md5", "sha512-salted:1"] {
            #expect(PasswordKDF(stored: bad) == nil, "\(bad)")
        }
        #expect(PasswordKDF.default == .scrypt(logN: 17, r: 8, p: 1))
        #expect(PasswordKDF(name: "pbkdf2-sha256") == .pbkdf2SHA256(iterations: 600_000))
    }
}
