import Foundation
import LabCore
import LabTestSupport
import LabWire
import Testing

/// The native bplist00 codec against two independent ones: Foundation's
/// `PropertyListSerialization` (CoreFoundation's CFBinaryPList) and Python's plistlib.
@Suite(.tier(.unit)) struct BinaryPropertyListTests {
    /// A value as these tests model it.
    enum Sample: Equatable, CustomStringConvertible {
        case string(String)
        case data([UInt8])
        case integer(Int)
        case bool(Bool)

        var description: String {
            switch self {
            case .string(let string): "string \(string.debugDescription)"
            case .data(let bytes): "\(bytes.count) bytes"
            case .integer(let integer): "integer \(integer)"
            case .bool(let bool): "boolean \(bool)"
            }
        }
    }

    /// A seeded generator, so every case is the same on every run.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            self.state &+= 0x9E37_79B9_7F4A_7C15
            var z = self.state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// Integers at every width boundary of the format (1, 2, 4, 8 bytes; negatives are 8).
    static let integers: [Int] = [
        0, 1, 14, 15, 127, 128, 255, 256, 65535, 65536, Int(Int32.max), Int(UInt32.max), 1 << 32, Int.max,
        -1, -128, -129, -65536, Int(Int32.min), Int.min,
    ]

    /// ASCII and non-ASCII strings, around the 15-character length that needs a length object.
    static let strings: [String] = [
        "", "a", "x25519", "é", "naïve café", "😀", "👩‍👩‍👧 family", "日本語のテキスト", "a\u{0}b",
        String(repeating: "x", count: 14), String(repeating: "y", count: 15), String(repeating: "z", count: 16),
        String(repeating: "é", count: 15), String(repeating: "ascii ", count: 50), String(repeating: "中", count: 300),
    ]

    /// Data sizes around the length object's widths, up to 70000 bytes.
    static let dataSizes = [0, 1, 14, 15, 16, 32, 255, 256, 65535, 65536, 70000]

    static let keys = ["suite", "cryptoP", "cryptoM", "crypto7", "op", "", "clé", "鍵", "🔑", "k", "longer key name"]

    /// A random dictionary: 0 to 20 keys (sometimes 64), values of every kind.
    static func dictionary(_ random: inout Generator, maxDataBytes: Int = 70000) -> [String: Sample] {
        let count = Int.random(in: 0...30, using: &random) == 0 ? 64 : Int.random(in: 0...20, using: &random)
        var dictionary: [String: Sample] = [:]
        while dictionary.count < count {
            let key =
                Bool.random(using: &random)
                ? Self.keys.randomElement(using: &random)! + "\(dictionary.count)"
                : Self.keys.randomElement(using: &random)!
            dictionary[key] = Self.sample(&random, maxDataBytes: maxDataBytes)
        }
        return dictionary
    }

    static func sample(_ random: inout Generator, maxDataBytes: Int) -> Sample {
        switch Int.random(in: 0..<8, using: &random) {
        case 0, 1:
            return .string(Self.strings.randomElement(using: &random)!)
        case 2:
            let sizes = Self.dataSizes.filter { $0 <= maxDataBytes }
            let size =
                Int.random(in: 0..<6, using: &random) == 0
                ? sizes.randomElement(using: &random)! : Int.random(in: 0...100, using: &random)
            return .data((0..<size).map { _ in UInt8.random(in: 0...255, using: &random) })
        case 3, 4:
            return .data((0..<Int.random(in: 0...100, using: &random)).map { UInt8(truncatingIfNeeded: $0) })
        case 5:
            return .integer(Self.integers.randomElement(using: &random)!)
        case 6:
            return .integer(Int(truncatingIfNeeded: random.next()) >> Int.random(in: 0...63, using: &random))
        default:
            return .bool(Bool.random(using: &random))
        }
    }

    static func native(_ dictionary: [String: Sample]) -> PropertyListDictionary {
        var plist = PropertyListDictionary()
        for (key, value) in dictionary { Self.set(&plist, key, value) }
        return plist
    }

    /// Reads every key of `expected` from `plist` with the accessor of its type.
    static func read(_ plist: PropertyListDictionary, like expected: [String: Sample]) throws -> [String: Sample] {
        var read: [String: Sample] = [:]
        for (key, value) in expected {
            switch value {
            case .string: read[key] = .string(try plist.string(key))
            case .data: read[key] = .data(try plist.data(key))
            case .integer: read[key] = .integer(try plist.integer(key))
            case .bool: read[key] = try plist.optionalBool(key).map { .bool($0) }
            }
        }
        return read
    }

    static func foundation(_ dictionary: [String: Sample]) -> [String: Any] {
        dictionary.mapValues { value -> Any in
            switch value {
            case .string(let string): string
            case .data(let bytes): Data(bytes)
            case .integer(let integer): NSNumber(value: integer)
            case .bool(let bool): bool
            }
        }
    }

    /// A value Foundation decoded, as a sample; nil for any other type.
    static func sample(foundation value: Any) -> Sample? {
        if type(of: value) is Bool.Type, let bool = value as? Bool { return .bool(bool) }
        if let string = value as? String { return .string(string) }
        if let data = value as? Data { return .data(Array(data)) }
        if let number = value as? NSNumber, "cCsSiIlLqQ".utf8.contains(UInt8(bitPattern: number.objCType.pointee)) {
            return .integer(number.intValue)
        }
        return nil
    }

    @Test("500 random dictionaries: native encoding decodes in Foundation, Foundation's natively")
    func foundationRoundTrips() throws {
        var random = Generator(state: 2026)
        for index in 0..<500 {
            let expected = Self.dictionary(&random)
            let native = try Self.native(expected).encoded()
            let decoded = try PropertyListSerialization.propertyList(from: Data(native), format: nil)
            let dictionary = try #require(decoded as? [String: Any], "case \(index)")
            #expect(dictionary.count == expected.count, "case \(index)")
            for (key, value) in expected {
                #expect(dictionary[key].flatMap(Self.sample(foundation:)) == value, "case \(index), key \(key)")
            }

            let body = try PropertyListSerialization.data(
                fromPropertyList: Self.foundation(expected),
                format: .binary,
                options: 0
            )
            let plist = try PropertyListDictionary(decoding: Array(body))
            #expect(try Self.read(plist, like: expected) == expected, "case \(index)")
            // Re-encoded natively, Foundation's body keeps every value.
            #expect(try Self.read(PropertyListDictionary(decoding: plist.encoded()), like: expected) == expected)
        }
    }

    @Test("Encoding is reproducible: the same bytes whatever the order the keys were set in")
    func reproducible() throws {
        var random = Generator(state: 7)
        let expected = Self.dictionary(&random, maxDataBytes: 100).merging(["a": .integer(1), "b": .bool(true)]) {
            $1
        }
        var forward = PropertyListDictionary()
        var backward = PropertyListDictionary()
        let sorted = expected.sorted { $0.key < $1.key }
        for (key, value) in sorted { Self.set(&forward, key, value) }
        for (key, value) in sorted.reversed() { Self.set(&backward, key, value) }
        #expect(try forward.encoded() == backward.encoded())
        #expect(try forward.encoded() == PropertyListDictionary(decoding: forward.encoded()).encoded())
    }

    static func set(_ plist: inout PropertyListDictionary, _ key: String, _ value: Sample) {
        switch value {
        case .string(let string): plist.set(key, string: string)
        case .data(let bytes): plist.set(key, data: bytes)
        case .integer(let integer): plist.set(key, integer: integer)
        case .bool(let bool): plist.set(key, bool: bool)
        }
    }

    /// The bytes of the value object in `{"k": value}` (header 8, dictionary 3, key 2 bytes).
    static func valueObject(_ value: Sample) throws -> [UInt8] {
        let body = try Self.native(["k": value]).encoded()
        let tableOffset = Int(body[(body.count - 8)...].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        #expect(Array(body[0..<13]) == Array("bplist00".utf8) + [0xD1, 0x01, 0x02, 0x51, 0x6B])
        return Array(body[13..<tableOffset])
    }

    @Test("Objects are written as CFBinaryPList writes them")
    func objectBytes() throws {
        #expect(try Self.valueObject(.integer(0)) == [0x10, 0x00])
        #expect(try Self.valueObject(.integer(255)) == [0x10, 0xFF])
        #expect(try Self.valueObject(.integer(256)) == [0x11, 0x01, 0x00])
        #expect(try Self.valueObject(.integer(65536)) == [0x12, 0x00, 0x01, 0x00, 0x00])
        #expect(try Self.valueObject(.integer(1 << 32)) == [0x13, 0, 0, 0, 1, 0, 0, 0, 0])
        #expect(try Self.valueObject(.integer(-1)) == [0x13] + Array(repeating: 0xFF, count: 8))
        #expect(try Self.valueObject(.bool(false)) == [0x08])
        #expect(try Self.valueObject(.bool(true)) == [0x09])
        #expect(try Self.valueObject(.string("ab")) == [0x52, 0x61, 0x62])
        #expect(try Self.valueObject(.string("é")) == [0x61, 0x00, 0xE9])
        #expect(try Self.valueObject(.string("😀")) == [0x62, 0xD8, 0x3D, 0xDE, 0x00])
        #expect(try Self.valueObject(.data([])) == [0x40])
        #expect(
            try Self.valueObject(.data(Array(repeating: 7, count: 15))) == [0x4F, 0x10, 0x0F]
                + Array(repeating: 7, count: 15)
        )
        #expect(try Self.valueObject(.data(Array(repeating: 7, count: 256))).prefix(4) == [0x4F, 0x11, 0x01, 0x00])
        let empty = try PropertyListDictionary().encoded()
        #expect(
            empty == Array("bplist00".utf8) + [0xD0, 0x08] + [0, 0, 0, 0, 0, 0, 1, 1] + [0, 0, 0, 0, 0, 0, 0, 1] + [
                0, 0, 0, 0, 0, 0, 0, 0,
            ] + [0, 0, 0, 0, 0, 0, 0, 9]
        )
    }

    /// Reads native bodies with plistlib and writes plistlib's bodies for the native decoder.
    static let plistlibScript = """
        import json, os, plistlib, sys
        folder = sys.argv[1]
        def value(kind, text):
            return {"s": lambda: text, "d": lambda: bytes.fromhex(text), "i": lambda: int(text), "b": lambda: text == "1"}[kind]()
        def describe(v):
            if isinstance(v, bool): return ["b", "1" if v else "0"]
            if isinstance(v, int): return ["i", str(v)]
            if isinstance(v, str): return ["s", v]
            if isinstance(v, bytes): return ["d", v.hex()]
            return ["?", repr(type(v))]
        decoded = []
        for index, spec in enumerate(json.load(open(os.path.join(folder, "spec.json")))):
            with open(os.path.join(folder, "native-%d.plist" % index), "rb") as body:
                loaded = plistlib.loads(body.read(), fmt=plistlib.FMT_BINARY)
            decoded.append({key: describe(v) for key, v in loaded.items()})
            values = {key: value(*v) for key, v in spec.items()}
            with open(os.path.join(folder, "python-%d.plist" % index), "wb") as body:
                body.write(plistlib.dumps(values, fmt=plistlib.FMT_BINARY))
        with open(os.path.join(folder, "python-big.plist"), "wb") as body:
            body.write(plistlib.dumps({"big": 2**64 - 1}, fmt=plistlib.FMT_BINARY))
        json.dump(decoded, open(os.path.join(folder, "decoded.json"), "w"))
        """

    /// A sample as two strings, a type letter and a text, for JSON (integers as text: JSON
    /// numbers lose 64-bit precision in some readers).
    static func pair(_ value: Sample) -> [String] {
        switch value {
        case .string(let string): ["s", string]
        case .data(let bytes): ["d", bytes.map { String(format: "%02x", $0) }.joined()]
        case .integer(let integer): ["i", String(integer)]
        case .bool(let bool): ["b", bool ? "1" : "0"]
        }
    }

    static func sample(pair: [String]) -> Sample? {
        guard pair.count == 2 else { return nil }
        let text = pair[1]
        switch pair[0] {
        case "s": return .string(text)
        case "i": return Int(text).map { .integer($0) }
        case "b": return .bool(text == "1")
        case "d":
            let digits = Array(text.utf8)
            return .data(
                stride(from: 0, to: digits.count, by: 2).compactMap {
                    UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)
                }
            )
        default: return nil
        }
    }

    @Test("Python's plistlib reads native bodies, and native decoding reads plistlib's")
    func plistlibRoundTrips() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("plistlib-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var random = Generator(state: 1984)
        let cases = (0..<100).map { _ in Self.dictionary(&random, maxDataBytes: 70000) }
        for (index, dictionary) in cases.enumerated() {
            let body = try Self.native(dictionary).encoded()
            try Data(body).write(to: folder.appendingPathComponent("native-\(index).plist"))
        }
        let spec = try JSONSerialization.data(withJSONObject: cases.map { $0.mapValues(Self.pair) })
        try spec.write(to: folder.appendingPathComponent("spec.json"))

        let (status, errors) = try await Self.python(Self.plistlibScript, [folder.path], errors: folder)
        #expect(status == 0, "python3 failed: \(errors)")
        let json = try Data(contentsOf: folder.appendingPathComponent("decoded.json"))
        let decoded = try #require(try JSONSerialization.jsonObject(with: json) as? [[String: [String]]])
        #expect(decoded.count == cases.count)
        for (index, (expected, read)) in zip(cases, decoded).enumerated() {
            #expect(
                read.mapValues(Self.sample(pair:)) == expected.mapValues { Optional($0) },
                "plistlib, case \(index)"
            )
            let body = try Data(contentsOf: folder.appendingPathComponent("python-\(index).plist"))
            let plist = try PropertyListDictionary(decoding: Array(body))
            #expect(try Self.read(plist, like: expected) == expected, "native, case \(index)")
        }
        // plistlib writes 2^64 - 1 as a 16-byte integer: valid, but not an Int.
        let big = try Data(contentsOf: folder.appendingPathComponent("python-big.plist"))
        let error = try #require(throws: LabError.self) { try PropertyListDictionary(decoding: Array(big)) }
        #expect(error.message.contains("'big'") && error.message.contains("does not fit in 64 bits"), "\(error)")
    }

    /// Runs `python3 -c script arguments` on a thread of its own (not the concurrency pool's),
    /// its standard error into a file in `errors`; returns the exit status and that text.
    static func python(_ script: String, _ arguments: [String], errors folder: URL) async throws -> (Int32, String) {
        let errorsFile = folder.appendingPathComponent("python-errors.txt")
        try Data().write(to: errorsFile)
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            Thread {
                do {
                    let process = Process()
                    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                    process.arguments = ["python3", "-c", script] + arguments
                    process.standardError = try FileHandle(forWritingTo: errorsFile)
                    try process.run()
                    process.waitUntilExit()
                    continuation.resume(returning: process.terminationStatus)
                } catch {
                    continuation.resume(throwing: error)
                }
            }.start()
        }
        return (status, (try? String(contentsOf: errorsFile, encoding: .utf8)) ?? "")
    }
}
