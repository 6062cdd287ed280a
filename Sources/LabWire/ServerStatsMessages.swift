import LabCore
public import LabResults

/// The lab's `serverStats` request: a client (`lab run` against a `lab serve` elsewhere) asks
/// the server for its own step histograms, on the same framing and connection as cx/1 and
/// msg/1. A lab extension, not part of docs/protocol.md; docs/several-hosts.md documents it.
///
/// - Request: `{op: "serverStats"}`, or `{op: "serverStats", group: NAME}` for one group
///   (e.g. msg/1's `login`) alone.
/// - Answer: `{op: "serverStats", ok: true, stats: <data>}`, where `stats` is a UTF-8 JSON
///   `ServerStats` document (`format` = `crypto-lab/server-stats/1`). An answer that would
///   not fit in the server's frame limit is `{op: "serverStats", ok: false, error: "tooLarge",
///   message}` instead, and the connection stays open.
/// - A server without the extension answers msg/1's `badRequest` (unknown op) or, with
///   msg/1 off, cx/1's error: either way the client learns it is not available.
public enum ServerStatsMessage {
    /// The op's name.
    public static let op = "serverStats"

    /// The request body: every group's statistics, or `group`'s alone.
    public static func request(group: String? = nil) throws -> [UInt8] {
        var request = PropertyListDictionary()
        request.set("op", string: Self.op)
        if let group { request.set("group", string: group) }
        return try request.encoded()
    }

    /// Whether `body` is a `serverStats` request (an already decoded plist's `op`).
    public static func isRequest(_ plist: PropertyListDictionary) -> Bool {
        (try? plist.optionalString("op")) == Self.op
    }

    /// The answer carrying `stats`.
    public static func answer(_ stats: ServerStats) throws -> [UInt8] {
        var answer = PropertyListDictionary()
        answer.set("op", string: Self.op)
        answer.set("ok", bool: true)
        answer.set("stats", data: try stats.encoded())
        return try answer.encoded()
    }

    /// The statistics in an answer; throws `.unsupported` if the server answered with an error.
    public static func decodeAnswer(_ body: [UInt8]) throws -> ServerStats {
        let answer = try PropertyListDictionary(decoding: body)
        guard try answer.optionalBool("ok") == true, let stats = try answer.optionalData("stats") else {
            let reason = (try? answer.optionalString("message")) ?? (try? answer.optionalString("error")) ?? nil
            if (try? answer.optionalString("error")) == "tooLarge" {
                throw LabError(.frameTooLarge, "The server's statistics do not fit in a frame: \(reason ?? "")")
            }
            throw LabError(
                .unsupported,
                "The server does not report its own steps (no \(Self.op) answer\(reason.map { ": \($0)" } ?? ""))"
            )
        }
        return try ServerStats.decode(stats)
    }
}
