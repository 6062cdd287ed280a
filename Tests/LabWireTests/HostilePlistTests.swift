import Foundation
import LabCore
import LabWire
import Testing

/// Property lists built to hurt: they are refused fast, without building anything they describe.
struct HostilePlistTests {
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
}
