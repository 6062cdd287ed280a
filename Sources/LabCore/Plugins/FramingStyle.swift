/// How a frame's length is written (docs/protocol.md §1).
public enum FramingStyle: String, Sendable, CaseIterable, Codable {
    /// A 4-byte unsigned big-endian length: the default.
    case u32be
    /// An 8-byte little-endian length: the 2009 sample's `size_t` on a 64-bit host.
    case u64le

    /// Bytes of length before each body.
    public var headerBytes: Int {
        switch self {
        case .u32be: 4
        case .u64le: 8
        }
    }
}
