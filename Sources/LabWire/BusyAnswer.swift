/// The `busy` answer a lab server sends, unasked, to a connection over its limit
/// (docs/protocol.md §1.4), whatever protocol the connection would have spoken: cx/1's error
/// answer (`error` = `busy`, a `message`) with msg/1's `ok` = false beside it, so that a client
/// of either reads it as a refusal.
public enum BusyAnswer {
    /// The answer's body for a server at `connectionLimit` connections.
    public static func body(connectionLimit: Int) -> [UInt8]? {
        var answer = PropertyListDictionary()
        answer.set("error", string: "busy")
        answer.set("message", string: "The server is serving its limit of \(connectionLimit) connections; try again later")
        answer.set("ok", bool: false)
        return try? answer.encoded()
    }
}
