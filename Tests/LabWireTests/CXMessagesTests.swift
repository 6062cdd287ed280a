import Foundation
import LabCX
import LabCore
import LabTestSupport
import LabWire
import Testing

@Suite(.tier(.unit)) struct CXMessagesTests {
    let response = CXResponse(
        suite: "x25519",
        serverKey: Array(repeating: 1, count: 32),
        message: Array(repeating: 2, count: 443),
        padded: false,
        signature: Array(repeating: 3, count: 64),
        wrappedKey: Array(repeating: 4, count: 72),
        nonce: Array(repeating: 5, count: 12)
    )

    @Test("Requests and responses survive a round trip")
    func roundTrip() throws {
        let request = CXRequest(suite: "pq", clientKey: Array(repeating: 9, count: 1184))
        #expect(try CXRequest(decoding: try request.encoded()) == request)
        #expect(try CXReply(decoding: try self.response.encoded()) == .response(self.response))
        let error = CXErrorReply(code: .busy, message: "later")
        #expect(try CXReply(decoding: try error.encoded()) == .error(error))
    }

    @Test("Bodies are binary plists with the sample's keys, and crypto7 is an integer")
    func wireShape() throws {
        let body = try self.response.encoded()
        #expect(body.starts(with: Array("bplist00".utf8)))
        let object = try PropertyListSerialization.propertyList(from: Data(body), options: [], format: nil)
        let dictionary = try #require(object as? [String: Any])
        #expect(Set(dictionary.keys) == ["suite", "cryptoP", "cryptoM", "crypto7", "cryptoS", "cryptoK", "cryptoN"])
        #expect(!(type(of: dictionary["crypto7"]!) is Bool.Type), "crypto7 is written as an integer, not a boolean")
        #expect((dictionary["crypto7"] as? NSNumber)?.intValue == 0)
    }

    @Test("A body that is not a plist is the legacy raw-key request")
    func legacy() throws {
        let key: [UInt8] = [0x30, 0x48, 0x02, 0x41]
        let request = try CXRequest(decoding: key)
        #expect(request.isLegacy && request.suite == "classic" && request.clientKey == key)
        #expect(try request.encoded() == key)
    }

    @Test("crypto7 must be the integer 0 or 1")
    func paddingFlag() throws {
        var plist = PropertyListDictionary()
        plist.set("cryptoP", data: [1])
        plist.set("cryptoM", data: [2])
        plist.set("cryptoS", data: [3])
        plist.set("cryptoK", data: [4])
        for (value, accepted) in [(0, true), (1, true), (2, false), (-1, false)] {
            plist.set("crypto7", integer: value)
            if accepted {
                #expect(throws: Never.self) { try CXReply(decoding: try plist.encoded()) }
            } else {
                let error = try #require(throws: LabError.self) { try CXReply(decoding: try plist.encoded()) }
                #expect(error.code == .malformedMessage && error.message.contains("crypto7"))
            }
        }
        plist.set("crypto7", bool: true)
        let error = try #require(throws: LabError.self) { try CXReply(decoding: try plist.encoded()) }
        #expect(error.message == "The key 'crypto7' holds a boolean; expected an integer")
    }

    @Test("Each missing or mistyped key is named")
    func namedKeys() throws {
        for key in ["cryptoP", "cryptoM", "cryptoS", "cryptoK", "crypto7"] {
            var body = try self.response.encoded()
            var plist = try PropertyListDictionary(decoding: body)
            plist.set(key, string: "wrong")
            body = try plist.encoded()
            let error = try #require(throws: LabError.self) { try CXReply(decoding: body) }
            #expect(error.message.contains("'\(key)'") && error.message.contains("holds a string"), "\(error)")
        }
        let array = Array(try PropertyListSerialization.data(fromPropertyList: [1, 2], format: .binary, options: 0))
        let error = try #require(throws: LabError.self) { try CXReply(decoding: array) }
        #expect(error.message.contains("not a dictionary"))
    }
}
