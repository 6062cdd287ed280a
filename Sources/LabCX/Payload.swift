/// The message the server encrypts and signs (docs/protocol.md §2.5).
public enum Payload {
    /// The 2009 sample's 426-character text.
    public static let loremIpsum =
        "Lorem ipsum dolor sit amet, consectetur adipisicing elit, sed do eiusmod tempor incididunt ut labore "
        + "et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut "
        + "aliquip ex ea commodo consequat. Duis aute irure dolor in reprehenderit in voluptate velit esse "
        + "cillum dolore eu fugiat nulla pariatur. Excepteur sint occaecat cupidatat non proident, sunt in "
        + "culpa qui officia deserunt mollit."

    /// The default payload: the text and one zero byte, 427 bytes.
    public static let standard: [UInt8] = Array(loremIpsum.utf8) + [0]

    /// The first `count` bytes of the 427-byte block repeated (`payloadBytes: N`).
    public static func bytes(_ count: Int) -> [UInt8] {
        precondition(count >= 0, "a payload cannot have a negative size")
        var payload: [UInt8] = []
        payload.reserveCapacity(count)
        while payload.count < count {
            payload.append(contentsOf: standard.prefix(count - payload.count))
        }
        return payload
    }
}
