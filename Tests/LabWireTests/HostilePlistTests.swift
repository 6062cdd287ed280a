import Foundation
import LabCX
import LabCore
import LabTestSupport
import LabWire
import Testing

/// Property lists built to hurt: they are refused fast, without building anything they describe.
@Suite(.tier(.unit)) struct HostilePlistTests {
    /// Assembles a bplist00 from encoded objects (object 0 is the top), one-byte references.
    static func bplist(_ objects: [[UInt8]]) -> [UInt8] {
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(bytes.count)
            bytes += object
        }
        let tableOffset = bytes.count
        for offset in offsets { bytes += [UInt8(offset >> 8), UInt8(offset & 0xFF)] }
        bytes += [0, 0, 0, 0, 0, 0, 2, 1]  // offset size 2, reference size 1
        for value in [UInt64(objects.count), 0, UInt64(tableOffset)] {
            bytes += (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
        }
        return bytes
    }

    static func ascii(_ text: String) -> [UInt8] { [0x50 | UInt8(text.utf8.count)] + Array(text.utf8) }

    @Test("Shared nested arrays (2^40 nodes in 600 bytes) are refused without being expanded")
    func referenceBomb() throws {
        // {suite: A1}, A(i) = [A(i+1), A(i+1)]: Foundation would expand it to 2^40 nodes.
        let depth = 40
        var objects: [[UInt8]] = [[0xD1, 1, 2], Self.ascii("suite")]
        for level in 0..<depth {
            let next = UInt8(3 + level)
            objects.append([0xA2, next, next])
        }
        objects.append([0xA0])
        let body = Self.bplist(objects)
        #expect(body.count < 700)
        let error = try #require(throws: LabError.self) { try CXRequest(decoding: body) }
        #expect(error.code == .malformedMessage)
        // Refused at the first container, which is never followed.
        #expect(error.message.hasPrefix("The body is not a flat binary property list"), "\(error)")
        #expect(error.message.contains("container"), "\(error)")
    }

    @Test("A nested dictionary or array value is refused; a flat one is read")
    func flatOnly() throws {
        let flat = Self.bplist([[0xD1, 1, 2], Self.ascii("suite"), Self.ascii("x25519")])
        #expect(try PropertyListDictionary(decoding: flat).string("suite") == "x25519")
        let nested = Self.bplist([[0xD1, 1, 2], Self.ascii("suite"), [0xD0]])
        #expect(throws: LabError.self) { try PropertyListDictionary(decoding: nested) }
    }

    @Test("Trailers that point outside the body are refused", arguments: [6, 8, 16, 24])
    func badTrailers(_ field: Int) throws {
        var body = Self.bplist([[0xD1, 1, 2], Self.ascii("suite"), Self.ascii("x25519")])
        let trailer = body.count - 32
        body[trailer + field + (field >= 8 ? 7 : 0)] = 0xF7
        let error = try #require(throws: LabError.self) { try PropertyListDictionary(decoding: body) }
        #expect(error.code == .malformedMessage)
    }

    @Test("Random bytes after the magic never crash the decoder")
    func randomBodies() throws {
        var generator = SystemRandomNumberGenerator()
        for length in stride(from: 0, through: 300, by: 3) {
            let body = Array("bplist00".utf8) + (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(throws: LabError.self) { try CXReply(decoding: body) }
        }
    }

    @Test("A real is not the integer crypto7")
    func realIsNotInteger() throws {
        let dictionary: [String: Any] = [
            "cryptoP": Data([1]), "cryptoM": Data([2]), "cryptoS": Data([3]), "cryptoK": Data([4]), "crypto7": 1.0,
        ]
        let body = Array(try PropertyListSerialization.data(fromPropertyList: dictionary, format: .binary, options: 0))
        let error = try #require(throws: LabError.self) { try CXReply(decoding: body) }
        #expect(error.message == "The key 'crypto7' holds a real; expected an integer")
    }

    /// A small valid body with every value kind and both string encodings, some with length objects.
    static func sampleBody() throws -> [UInt8] {
        var plist = PropertyListDictionary()
        plist.set("suite", string: "x25519")
        plist.set("name", string: "café, and more than fifteen")
        plist.set("cryptoP", data: Array(0..<20))
        plist.set("crypto7", integer: 1)
        plist.set("after", integer: -5)
        plist.set("ok", bool: true)
        return try plist.encoded()
    }

    /// Decodes `body`; it must either decode (and then re-encode and decode again) or be
    /// refused with a `.malformedMessage` LabError. Returns whether it was refused.
    @discardableResult
    static func decodeOrRefuse(_ body: [UInt8], _ comment: String) -> Bool {
        do {
            let plist = try PropertyListDictionary(decoding: body)
            _ = try PropertyListDictionary(decoding: try plist.encoded())
            return false
        } catch let error as LabError {
            #expect(error.code == .malformedMessage, "\(comment): \(error)")
            return true
        } catch {
            Issue.record("\(comment): \(error)")
            return true
        }
    }

    @Test("A body cut short at any length is refused")
    func truncations() throws {
        let body = try Self.sampleBody()
        var refused = 0
        for length in 0..<body.count where Self.decodeOrRefuse(Array(body[0..<length]), "cut at \(length)") {
            refused += 1
        }
        #expect(refused == body.count)
    }

    @Test("Every single-byte corruption of a body decodes or is refused, never crashes")
    func corruptions() throws {
        let body = try Self.sampleBody()
        for position in body.indices {
            let original = body[position]
            for value in Set([0x00, 0x0F, 0x7F, 0x80, 0xFF, original ^ 0x01, original ^ 0x10, original ^ 0x80]) {
                var corrupted = body
                corrupted[position] = value
                Self.decodeOrRefuse(corrupted, "byte \(position) set to \(value)")
            }
        }
    }

    @Test(
        "A container value is refused, naming the key and the type",
        arguments: [
            ([0xA0] as [UInt8], "an array"), ([0xD0], "a dictionary"), ([0xC0], "a set"), ([0xB0], "an ordered set"),
        ]
    )
    func containers(_ container: [UInt8], _ name: String) throws {
        let body = Self.bplist([[0xD1, 1, 2], Self.ascii("suite"), container])
        let error = try #require(throws: LabError.self) { try PropertyListDictionary(decoding: body) }
        #expect(
            error.message
                == "The body is not a flat binary property list: the key 'suite' holds \(name), a container; bodies are flat"
        )
    }

    @Test("A dictionary that references itself, as a value or as a key, is refused")
    func selfReference() throws {
        let asValue = Self.bplist([[0xD1, 1, 0], Self.ascii("self")])
        let valueError = try #require(throws: LabError.self) { try PropertyListDictionary(decoding: asValue) }
        #expect(valueError.message.contains("the key 'self' holds a dictionary, a container"), "\(valueError)")
        let asKey = Self.bplist([[0xD1, 0, 1], Self.ascii("x")])
        let keyError = try #require(throws: LabError.self) { try PropertyListDictionary(decoding: asKey) }
        #expect(keyError.message.hasSuffix("key 0 is a dictionary; keys are strings"), "\(keyError)")
    }

    @Test(
        "Length fields larger than the body are refused",
        arguments: [
            [0x4F, 0x13, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF] as [UInt8],
            [0x4F, 0x13, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
            [0x5F, 0x12, 0xFF, 0xFF, 0xFF, 0xFF],
            [0x6F, 0x13, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00],
            [0x6F, 0x13, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
            [0x4F, 0x14, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
            [0x4F],
            [0x44, 1, 2],
        ]
    )
    func hugeLengths(_ value: [UInt8]) throws {
        let body = Self.bplist([[0xD1, 1, 2], Self.ascii("cryptoP"), value])
        let error = try #require(throws: LabError.self) { try PropertyListDictionary(decoding: body) }
        #expect(error.code == .malformedMessage)
        #expect(error.message.contains("'cryptoP'"), "\(error)")
    }

    /// A dictionary of `count` keys `k0`, `k1`, … whose values are all `true`.
    static func manyKeys(_ count: Int) -> [UInt8] {
        let references = (1...(2 * count)).map { UInt8($0) }
        let values = Array(repeating: [UInt8(0x09)], count: count)
        return Self.bplist(
            [[0xDF, 0x10, UInt8(count)] + references] + (0..<count).map { Self.ascii("k\($0)") } + values
        )
    }

    @Test("64 keys are read; 65 are refused, decoding and encoding")
    func keyLimit() throws {
        let plist = try PropertyListDictionary(decoding: Self.manyKeys(64))
        #expect(try plist.optionalBool("k63") == true)
        let error = try #require(throws: LabError.self) { try PropertyListDictionary(decoding: Self.manyKeys(65)) }
        #expect(error.message == "The body's dictionary has 65 keys; at most 64 are accepted")
        var large = PropertyListDictionary()
        for index in 0..<65 { large.set("k\(index)", bool: true) }
        #expect(throws: LabError.self) { try large.encoded() }
    }

    @Test("References and offsets outside the body are refused")
    func references() throws {
        let reference = Self.bplist([[0xD1, 1, 9], Self.ascii("a")])
        let error = try #require(throws: LabError.self) { try PropertyListDictionary(decoding: reference) }
        #expect(error.message.hasSuffix("it references object 9 of 2"), "\(error)")
        var offset = Self.bplist([[0xD1, 1, 2], Self.ascii("a"), [0x09]])
        let table = offset.count - 32 - 6
        offset[table + 5] = 0xF0  // object 2 at 0xF0, past the objects
        #expect(throws: LabError.self) { try PropertyListDictionary(decoding: offset) }
    }

    @Test("A key twice, or a key that is not a string, is refused")
    func keys() throws {
        let twice = Self.bplist([[0xD2, 1, 1, 2, 2], Self.ascii("a"), [0x09]])
        let error = try #require(throws: LabError.self) { try PropertyListDictionary(decoding: twice) }
        #expect(error.message.hasSuffix("the key 'a' appears twice"), "\(error)")
        let integer = Self.bplist([[0xD1, 1, 2], [0x10, 0x01], [0x09]])
        let keyError = try #require(throws: LabError.self) { try PropertyListDictionary(decoding: integer) }
        #expect(keyError.message.hasSuffix("key 0 is an integer; keys are strings"), "\(keyError)")
    }

    @Test("One data object shared by 64 keys is decoded once, and read by all")
    func sharedValue() throws {
        let count = 64
        let references = (1...count).map { UInt8($0) } + Array(repeating: UInt8(count + 1), count: count)
        let data = [0x4F, 0x12, 0x00, 0x10, 0x00, 0x00] + Array(repeating: UInt8(0xAB), count: 1 << 20)
        let body = Self.bplist(
            [[0xDF, 0x10, UInt8(count)] + references] + (0..<count).map { Self.ascii("k\($0)") } + [data]
        )
        let plist = try PropertyListDictionary(decoding: body)
        for index in 0..<count {
            #expect(try plist.data("k\(index)").count == 1 << 20)
        }
    }

    @Test("Values at 64 object numbers that all begin at one 1 MiB object are refused before 64 copies")
    func aliasedValues() throws {
        let count = 64
        let references = (1...(2 * count)).map { UInt8($0) }
        let data = [0x4F, 0x12, 0x00, 0x10, 0x00, 0x00] + Array(repeating: UInt8(0xAB), count: 1 << 20)
        let placeholders = Array(repeating: [UInt8(0x09)], count: count - 1)
        var body = Self.bplist(
            [[0xDF, 0x10, UInt8(count)] + references] + (0..<count).map { Self.ascii("k\($0)") } + placeholders + [data]
        )
        // Point the offsets of values 0 to 62 at value 63's data: 64 object numbers, one object.
        let table = body.count - 32 - 2 * (2 * count + 1)
        let data63 = table + 2 * (2 * count)
        for object in (count + 1)..<(2 * count) {
            body[table + 2 * object] = body[data63]
            body[table + 2 * object + 1] = body[data63 + 1]
        }
        // Not #require(throws:): a decoded result would be printed, all 64 MiB of it.
        guard case .failure(let failure) = Result(catching: { try PropertyListDictionary(decoding: body) }),
            let error = failure as? LabError
        else {
            Issue.record("64 aliases of one 1 MiB object were decoded, not refused")
            return
        }
        #expect(error.code == .malformedMessage)
        #expect(error.message.contains("objects overlap"), "\(error)")
        // An honest body may use one object as a key and as a value: it is read.
        let keyAsValue = Self.bplist([[0xD1, 1, 1], Self.ascii("same")])
        #expect(try PropertyListDictionary(decoding: keyAsValue).string("same") == "same")
    }

    @Test("Integers of 16 bytes are read if they fit in 64 bits")
    func wideIntegers() throws {
        func decode(_ integer: [UInt8]) throws -> Int {
            try PropertyListDictionary(decoding: Self.bplist([[0xD1, 1, 2], Self.ascii("n"), integer])).integer("n")
        }
        #expect(try decode([0x14] + Array(repeating: 0xFF, count: 16)) == -1)
        #expect(try decode([0x14] + Array(repeating: 0, count: 15) + [5]) == 5)
        #expect(try decode([0x13, 0x80, 0, 0, 0, 0, 0, 0, 0]) == Int.min)
        #expect(try decode([0x12, 0xFF, 0xFF, 0xFF, 0xFF]) == Int(UInt32.max))
        #expect(throws: LabError.self) {
            try decode([0x14] + Array(repeating: 0, count: 7) + [1] + Array(repeating: 0, count: 8))
        }
        #expect(throws: LabError.self) {
            try decode([0x14] + Array(repeating: 0, count: 8) + [0x80] + Array(repeating: 0, count: 7))
        }
        #expect(throws: LabError.self) { try decode([0x15] + Array(repeating: 0, count: 32)) }
    }

    @Test("Strings must be valid ASCII or UTF-16")
    func invalidStrings() throws {
        for string in [[0x52, 0x61, 0xE9], [0x61, 0xD8, 0x00], [0x62, 0xDE, 0x00, 0xD8, 0x3D]] as [[UInt8]] {
            let body = Self.bplist([[0xD1, 1, 2], Self.ascii("s"), string])
            let error = try #require(throws: LabError.self) { try PropertyListDictionary(decoding: body) }
            #expect(error.message.contains("the key 's' holds"), "\(error)")
        }
        let valid = Self.bplist([[0xD1, 1, 2], Self.ascii("s"), [0x62, 0xD8, 0x3D, 0xDE, 0x00]])
        #expect(try PropertyListDictionary(decoding: valid).string("s") == "😀")
    }

    @Test("Reals, dates and UIDs are carried but refused by every accessor; null and fill are refused")
    func otherScalars() throws {
        let real: [UInt8] = [0x23, 0x3F, 0xF8, 0, 0, 0, 0, 0, 0]  // 1.5
        let date: [UInt8] = [0x33, 0x41, 0xC0, 0, 0, 0, 0, 0, 0]
        let uid: [UInt8] = [0x80, 0x07]
        let body = Self.bplist([
            [0xD3, 1, 2, 3, 4, 5, 6], Self.ascii("r"), Self.ascii("d"), Self.ascii("u"), real, date, uid,
        ])
        let plist = try PropertyListDictionary(decoding: body)
        #expect(throws: LabError.self) { try plist.integer("r") }
        let error = try #require(throws: LabError.self) { try plist.string("d") }
        #expect(error.message == "The key 'd' holds a date; expected a string")
        let uidError = try #require(throws: LabError.self) { try plist.optionalBool("u") }
        #expect(uidError.message == "The key 'u' holds a UID; expected a boolean")
        // Re-encoded, the real is still the real 1.5.
        let again = try PropertyListSerialization.propertyList(from: Data(try plist.encoded()), format: nil)
        #expect((again as? [String: Any])?["r"] as? Double == 1.5)

        for (marker, name) in [(UInt8(0x00), "null"), (0x0F, "a fill byte"), (0x70, "an unknown object (marker 0x70)")]
        {
            let body = Self.bplist([[0xD1, 1, 2], Self.ascii("x"), [marker]])
            let error = try #require(throws: LabError.self) { try PropertyListDictionary(decoding: body) }
            #expect(error.message.hasSuffix("the key 'x' holds \(name), which is not a value"), "\(error)")
        }
    }

    @Test("An integer is not a boolean")
    func integerIsNotBoolean() throws {
        var plist = PropertyListDictionary()
        plist.set("ok", integer: 1)
        let decoded = try PropertyListDictionary(decoding: try plist.encoded())
        let error = try #require(throws: LabError.self) { try decoded.optionalBool("ok") }
        #expect(error.message == "The key 'ok' holds an integer; expected a boolean")
    }
}
