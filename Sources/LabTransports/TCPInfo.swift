import CLabSystem
public import LabCore
public import NIOCore

#if canImport(Glibc)
import Glibc
#endif

/// Reads a socket channel's TCP counters (`TCP_INFO`) for `StepPackets`.
public enum TCPInfo {
    /// Room for the kernel's struct tcp_info (about 250 bytes on 6.x; NIO zeroes it first
    /// and the kernel fills what it has).
    typealias Buffer = (
        UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
        UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
        UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
        UInt64
    )

    /// The counters of `channel`'s socket, read now (on the channel's event loop the read is
    /// done before this returns; elsewhere it is submitted there); nil when the channel is
    /// no TCP socket.
    public static func read(_ channel: any Channel) -> EventLoopFuture<TCPCounters>? {
        guard let provider = channel as? any SocketOptionProvider else { return nil }
        precondition(lab_tcp_info_size() <= MemoryLayout<Buffer>.size, "struct tcp_info outgrew TCPInfo.Buffer")
        let future: EventLoopFuture<Buffer> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(IPPROTO_TCP),
            name: SocketOptionName(TCP_INFO)
        )
        return future.map { buffer in
            let counters = withUnsafeBytes(of: buffer) { lab_tcp_counters_from($0.baseAddress) }
            return TCPCounters(
                segmentsSent: counters.segs_out,
                segmentsReceived: counters.segs_in,
                dataSegmentsSent: counters.data_segs_out,
                dataSegmentsReceived: counters.data_segs_in,
                retransmissions: counters.total_retrans,
                minRTTMicroseconds: counters.min_rtt_us
            )
        }
    }
}
