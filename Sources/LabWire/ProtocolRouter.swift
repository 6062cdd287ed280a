public import LabCore

/// Serves every protocol of a server on its one port, as `lab serve` does, by what each
/// claims (`ServedRequests`): a property-list body with an `op` key goes to the lab's own op
/// of that name (`serverStats`), or the protocol whose ops name it, or the one that takes the
/// other ops (msg/1); anything else goes to the one that takes the rest (cx/1).
public struct ProtocolRouter: FrameHandler {
    /// Handlers by the op they answer: the lab's own ops and the protocols' named ones.
    let byOp: [String: any FrameHandler]
    /// The handler of ops no one names (msg/1), if any.
    let otherOps: (any FrameHandler)?
    /// The handler of everything else (cx/1), if any.
    let rest: (any FrameHandler)?

    /// A router over `routes`, each a protocol's claim and its handler, and `ops`, the lab's
    /// own ops by name (answered before any protocol's). A claim twice over traps: the
    /// catalog's registry has checked them (`ServedProtocolRegistry`).
    public init(_ routes: [(requests: ServedRequests, handler: any FrameHandler)], ops: [String: any FrameHandler] = [:]) {
        var byOp = ops
        var otherOps: (any FrameHandler)? = nil
        var rest: (any FrameHandler)? = nil
        for (requests, handler) in routes {
            switch requests {
            case .ops(let names):
                for name in names {
                    precondition(byOp[name] == nil, "the op '\(name)' is served twice")
                    byOp[name] = handler
                }
            case .otherOps:
                precondition(otherOps == nil, "two protocols take the other ops")
                otherOps = handler
            case .rest:
                precondition(rest == nil, "two protocols take the rest")
                rest = handler
            }
        }
        self.byOp = byOp
        self.otherOps = otherOps
        self.rest = rest
    }

    /// Sends `body` to the service it belongs to, as from a peer the transport cannot name.
    public func respond<R: StepRecorder>(to body: [UInt8], recorder: inout R) async -> FrameAnswer {
        await self.respond(to: body, from: .inProcess, recorder: &recorder)
    }

    /// Sends `body` from `peer` to the service it belongs to; a body no protocol takes ends
    /// its connection, with the reason.
    public func respond<R: StepRecorder>(to body: [UInt8], from peer: FramePeer, recorder: inout R) async -> FrameAnswer
    {
        // Decoded only if the key `op` may be in it: a cx/1 request (which has none) is not
        // decoded twice.
        // Only the keys decide: a body with the key `op` whose values msg/1 refuses (a
        // container, say) is still msg/1's to answer, with its own error answer.
        if body.starts(with: PropertyListDictionary.magic), Self.mayContainOpKey(body),
            let keys = PropertyListDictionary.topLevelKeys(of: body), keys.contains(Self.opKey)
        {
            let request = try? PropertyListDictionary(decoding: body)
            if let name = try? request?.optionalString(Self.opKey), let handler = self.byOp[name] {
                return await handler.respond(to: body, from: peer, recorder: &recorder)
            }
            if let otherOps = self.otherOps { return await otherOps.respond(to: body, from: peer, recorder: &recorder) }
        }
        guard let rest = self.rest else {
            return FrameAnswer(body: [], closeReason: "badRequest: no protocol this server serves takes the request")
        }
        return await rest.respond(to: body, from: peer, recorder: &recorder)
    }

    /// The `busy` answer of the protocol that takes the rest (cx/1's, which msg/1's clients
    /// read too: docs/protocol.md §1.4), else the other ops' protocol's.
    public func busyAnswer(connectionLimit: Int) -> [UInt8]? {
        self.rest?.busyAnswer(connectionLimit: connectionLimit)
            ?? self.otherOps?.busyAnswer(connectionLimit: connectionLimit)
    }

    /// The key that names a request's operation.
    static let opKey = "op"

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
