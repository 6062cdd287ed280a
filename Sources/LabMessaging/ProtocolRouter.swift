import Crypto
import Foundation
import GRDB
public import LabCore
import LabWire
import Logging
import Synchronization

/// Serves cx/1 and msg/1 on one port, as `lab serve` does: a property-list body with an
/// `op` key is msg/1, or one of the lab's own ops (`serverStats`) if it names one; anything
/// else (a cx/1 request, the legacy bare key) goes to cx/1.
public struct ProtocolRouter: FrameHandler {
    /// The cx/1 server.
    public let cx: any FrameHandler
    /// The msg/1 server, if msg/1 is served.
    public let msg: MessagingService?
    /// The lab's own ops, by name, answered before msg/1 sees them.
    public let ops: [String: any FrameHandler]

    /// A router.
    public init(cx: any FrameHandler, msg: MessagingService?, ops: [String: any FrameHandler] = [:]) {
        self.cx = cx
        self.msg = msg
        self.ops = ops
    }

    /// Sends `body` to the service it belongs to, as from a peer the transport cannot name.
    public func respond<R: StepRecorder>(to body: [UInt8], recorder: inout R) async -> FrameAnswer {
        await self.respond(to: body, from: .inProcess, recorder: &recorder)
    }

    /// Sends `body` from `peer` to the service it belongs to.
    public func respond<R: StepRecorder>(to body: [UInt8], from peer: FramePeer, recorder: inout R) async -> FrameAnswer
    {
        // Decoded only if the key `op` may be in it: a cx/1 request (which has none) is not
        // decoded twice.
        // Only the keys decide: a body with the key `op` whose values msg/1 refuses (a
        // container, say) is still msg/1's to answer, with its own error answer.
        if body.starts(with: PropertyListDictionary.magic), Self.mayContainOpKey(body),
            let keys = PropertyListDictionary.topLevelKeys(of: body), keys.contains(MsgKey.op)
        {
            let request = try? PropertyListDictionary(decoding: body)
            if let name = try? request?.optionalString(MsgKey.op), let handler = self.ops[name] {
                return await handler.respond(to: body, from: peer, recorder: &recorder)
            }
            if let msg = self.msg { return await msg.respond(to: body, from: peer, recorder: &recorder) }
        }
        return await self.cx.respond(to: body, from: peer, recorder: &recorder)
    }

    /// The one `busy` answer both protocols' clients read (docs/protocol.md §1.4).
    public func busyAnswer(connectionLimit: Int) -> [UInt8]? {
        CXErrorReply.busyAnswer(connectionLimit: connectionLimit)
    }

    /// Whether the string `op` occurs as a binary plist object: ASCII (`0x52 'o' 'p'`) or
    /// UTF-16 (`0x62 0 'o' 0 'p'`); every dictionary with the key `op` has one of them.
    static func mayContainOpKey(_ body: [UInt8]) -> Bool {
        let ascii: [UInt8] = [0x52, 0x6F, 0x70]
        let utf16: [UInt8] = [0x62, 0x00, 0x6F, 0x00, 0x70]
        return body.withUnsafeBufferPointer { bytes in
            guard bytes.count >= ascii.count else { return false }
            for index in 0...(bytes.count - ascii.count) {
                if bytes[index] == 0x52, bytes[index + 1] == 0x6F, bytes[index + 2] == 0x70 { return true }
                if bytes[index] == 0x62, index + utf16.count <= bytes.count,
                    bytes[index + 1] == 0, bytes[index + 2] == 0x6F, bytes[index + 3] == 0, bytes[index + 4] == 0x70
                {
                    return true
                }
            }
            return false
        }
    }
}
