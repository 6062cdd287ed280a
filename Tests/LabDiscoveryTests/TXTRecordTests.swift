import LabCore
import LabDiscovery
import LabTestSupport
import Testing

@Suite(.tier(.unit)) struct TXTRecordTests {
    @Test func serverRecordsRoundTrip() throws {
        let server = ServerTXT(suites: ["x25519", "p256", "mlkem768"], tls: true)
        let bytes = try TXTRecord.encode(server.records)
        let records = TXTRecord.decode(bytes)
        #expect(records == ["proto": "cx/1,msg/1", "suites": "x25519,p256,mlkem768", "tls": "1"])
        #expect(ServerTXT(records: records) == server)
    }

    @Test func encodesLengthPrefixedStringsInKeyOrder() throws {
        let bytes = try TXTRecord.encode(["tls": "0", "proto": "cx/1", "e": ""])
        #expect(bytes == [2] + Array("e=".utf8) + [10] + Array("proto=cx/1".utf8) + [5] + Array("tls=0".utf8))
    }

    @Test func noRecordsEncodeAsOneEmptyString() throws {
        #expect(try TXTRecord.encode([:]) == [0])
        #expect(TXTRecord.decode([0]) == [:])
        #expect(TXTRecord.decode([]) == [:])
    }

    @Test func decodesHandMadeData() {
        var bytes: [UInt8] = []
        for string in ["proto=cx/1", "", "flag", "=orphan", "suites=a=b", "PROTO=ignored", "tls="] {
            bytes.append(UInt8(string.utf8.count))
            bytes += Array(string.utf8)
        }
        bytes += [9] + Array("cut".utf8)  // claims 9 bytes, has 3
        #expect(
            TXTRecord.decode(bytes) == [
                "proto": "cx/1",  // the first of PROTO/proto wins
                "flag": "",  // a key without a value
                "suites": "a=b",  // only the first '=' separates
                "tls": "",
            ]
        )
    }

    @Test(arguments: ["", "a=b", "tls\u{7}", "clé"])
    func rejectsBadKeys(_ key: String) {
        #expect(throws: LabError.self) { try TXTRecord.encode([key: "1"]) }
    }

    @Test func rejectsStringsOver255Bytes() throws {
        let fits = String(repeating: "x", count: 251)  // "key=" + 251 = 255
        #expect(try TXTRecord.encode(["key": fits]).count == 256)
        let error = try #require(throws: LabError.self) { try TXTRecord.encode(["key": fits + "x"]) }
        #expect(error.code == .invalidScenario)
    }

    @Test func serverRecordsNeedProtoAndABinaryTLSFlag() {
        #expect(ServerTXT(records: ["suites": "x25519", "tls": "0"]) == nil)
        #expect(ServerTXT(records: ["proto": "cx/1", "tls": "yes"]) == nil)
        #expect(ServerTXT(records: ["proto": "cx/1"]) == ServerTXT(protocols: ["cx/1"], suites: [], tls: false))
    }
}
