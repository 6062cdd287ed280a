import LabCore

/// A structural check of a binary property list, made before Foundation decodes it.
///
/// A bplist may reference one container from many places; Foundation's decoder builds
/// the whole tree, so a few hundred bytes of nested, shared arrays expand to gigabytes.
/// cx/1 and msg/1 bodies are flat: one dictionary whose values are strings, data,
/// numbers or booleans. Anything else is refused here, reading only the trailer, the
/// offset table and one marker byte per object, so decoding stays linear in the input.
enum BinaryPropertyListShape {
    /// The most keys a body's dictionary may have.
    static let maxKeys = 64

    /// Throws `.malformedMessage` unless `body` is a bplist00 whose top object is a
    /// dictionary of at most `maxKeys` entries with no container among its keys or values.
    static func requireFlatDictionary(_ body: [UInt8]) throws {
        let trailerBytes = 32
        guard body.count >= 8 + 1 + trailerBytes else { throw Self.malformed("it is too short to hold a trailer") }
        let trailer = body.count - trailerBytes
        let offsetSize = Int(body[trailer + 6])
        let referenceSize = Int(body[trailer + 7])
        let objectCount = Self.integer(body, at: trailer + 8, size: 8)
        let topObject = Self.integer(body, at: trailer + 16, size: 8)
        let tableOffset = Self.integer(body, at: trailer + 24, size: 8)
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else {
            throw Self.malformed("its trailer gives integer sizes \(offsetSize) and \(referenceSize)")
        }
        // A flat dictionary of n entries has 2n + 1 objects at most.
        guard objectCount >= 1, objectCount <= UInt64(2 * maxKeys + 1), topObject < objectCount else {
            throw Self.malformed("its trailer gives \(objectCount) objects with the top one at \(topObject)")
        }
        guard tableOffset >= 8, tableOffset + objectCount * UInt64(offsetSize) <= UInt64(trailer) else {
            throw Self.malformed("its offset table lies outside the body")
        }
        func offset(of object: UInt64) throws -> Int {
            let value = Self.integer(body, at: Int(tableOffset) + Int(object) * offsetSize, size: offsetSize)
            guard value >= 8, value < tableOffset else {
                throw Self.malformed("object \(object) lies outside the body")
            }
            return Int(value)
        }
        let top = try offset(of: topObject)
        guard body[top] >> 4 == 0xD else { throw Self.malformed("its top level is not a dictionary") }
        var cursor = top + 1
        var count = UInt64(body[top] & 0x0F)
        if count == 0x0F {
            // The count follows as an integer object: marker 0x1n, then 2^n bytes.
            guard cursor < Int(tableOffset), body[cursor] >> 4 == 0x1, body[cursor] & 0x0F <= 3 else {
                throw Self.malformed("its dictionary's size is not an integer")
            }
            let size = 1 << Int(body[cursor] & 0x0F)
            guard cursor + 1 + size <= Int(tableOffset) else {
                throw Self.malformed("its dictionary's size is cut off")
            }
            count = Self.integer(body, at: cursor + 1, size: size)
            cursor += 1 + size
        }
        guard count <= UInt64(maxKeys) else {
            throw Self.malformed("its dictionary has \(count) keys; at most \(maxKeys)")
        }
        let references = Int(count) * 2
        guard cursor + references * referenceSize <= Int(tableOffset) else {
            throw Self.malformed("its dictionary's references are cut off")
        }
        for index in 0..<references {
            let object = Self.integer(body, at: cursor + index * referenceSize, size: referenceSize)
            guard object < objectCount else { throw Self.malformed("it references object \(object) of \(objectCount)") }
            switch body[try offset(of: object)] >> 4 {
            case 0xA, 0xB, 0xC, 0xD:
                throw Self.malformed(
                    "a dictionary \(index < Int(count) ? "key" : "value") is a container; bodies are flat"
                )
            default:
                continue
            }
        }
    }

    private static func integer(_ bytes: [UInt8], at start: Int, size: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in start..<(start + size) {
            value = value << 8 | UInt64(bytes[index])
        }
        return value
    }

    private static func malformed(_ reason: String) -> LabError {
        LabError(.malformedMessage, "The body is not a flat binary property list: \(reason)")
    }
}
