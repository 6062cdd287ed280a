/// What TCP did for a step's round trips, as the kernel counted it on one end's socket
/// (`TCP_INFO`): the segments that end sent and received, and how many it had to send again.
///
/// Read only when a run asks for it (`report.packets`, `lab serve --packets`): two
/// `getsockopt` calls per round trip. Counts are exact, so they add up across clients and runs.
public struct StepPackets: Sendable, Hashable, Codable {
    /// Round trips read.
    public var roundTrips: UInt64 = 0
    /// Segments this end sent (`tcpi_segs_out`: data, pure ACKs and retransmissions).
    public var segmentsSent: UInt64 = 0
    /// Segments this end sent that carried data (`tcpi_data_segs_out`).
    public var dataSegmentsSent: UInt64 = 0
    /// Segments this end received (`tcpi_segs_in`).
    public var segmentsReceived: UInt64 = 0
    /// Segments received that carried data (`tcpi_data_segs_in`).
    public var dataSegmentsReceived: UInt64 = 0
    /// Segments this end sent again (`tcpi_total_retrans`).
    public var retransmissions: UInt64 = 0
    /// Round trips in which this end sent at least one segment again.
    public var retransmittedRoundTrips: UInt64 = 0
    /// The smallest round-trip time the kernel saw on any of the connections, in
    /// microseconds (`tcpi_min_rtt`); 0 when unknown.
    public var minRTTMicroseconds: UInt64 = 0

    /// Nothing counted.
    public init() {}

    /// One round trip: what the counters moved by from `before` to `after`.
    public init(from before: TCPCounters, to after: TCPCounters) {
        func delta(_ path: KeyPath<TCPCounters, UInt32>) -> UInt64 {
            UInt64(after[keyPath: path] &- before[keyPath: path])
        }
        self.roundTrips = 1
        self.segmentsSent = delta(\.segmentsSent)
        self.dataSegmentsSent = delta(\.dataSegmentsSent)
        self.segmentsReceived = delta(\.segmentsReceived)
        self.dataSegmentsReceived = delta(\.dataSegmentsReceived)
        self.retransmissions = delta(\.retransmissions)
        self.retransmittedRoundTrips = self.retransmissions > 0 ? 1 : 0
        self.minRTTMicroseconds = UInt64(after.minRTTMicroseconds)
    }

    /// Adds `other`'s counts to these (the smaller known RTT is kept).
    public mutating func add(_ other: StepPackets) {
        self.roundTrips &+= other.roundTrips
        self.segmentsSent &+= other.segmentsSent
        self.dataSegmentsSent &+= other.dataSegmentsSent
        self.segmentsReceived &+= other.segmentsReceived
        self.dataSegmentsReceived &+= other.dataSegmentsReceived
        self.retransmissions &+= other.retransmissions
        self.retransmittedRoundTrips &+= other.retransmittedRoundTrips
        if other.minRTTMicroseconds > 0,
            self.minRTTMicroseconds == 0 || other.minRTTMicroseconds < self.minRTTMicroseconds
        {
            self.minRTTMicroseconds = other.minRTTMicroseconds
        }
    }

    /// The counts added since `earlier`, an earlier state of the same totals (the RTT kept
    /// as it is now).
    public func subtracting(_ earlier: StepPackets) -> StepPackets {
        var result = self
        func since(_ now: UInt64, _ then: UInt64) -> UInt64 { now >= then ? now - then : 0 }
        result.roundTrips = since(self.roundTrips, earlier.roundTrips)
        result.segmentsSent = since(self.segmentsSent, earlier.segmentsSent)
        result.dataSegmentsSent = since(self.dataSegmentsSent, earlier.dataSegmentsSent)
        result.segmentsReceived = since(self.segmentsReceived, earlier.segmentsReceived)
        result.dataSegmentsReceived = since(self.dataSegmentsReceived, earlier.dataSegmentsReceived)
        result.retransmissions = since(self.retransmissions, earlier.retransmissions)
        result.retransmittedRoundTrips = since(self.retransmittedRoundTrips, earlier.retransmittedRoundTrips)
        return result
    }

    /// The share of round trips in which this end sent a segment again; nil with none read.
    public var retransmittedShare: Double? {
        self.roundTrips == 0 ? nil : Double(self.retransmittedRoundTrips) / Double(self.roundTrips)
    }
}

/// A socket's cumulative TCP counters at one moment (`TCP_INFO`), for `StepPackets`.
public struct TCPCounters: Sendable, Hashable {
    public var segmentsSent: UInt32 = 0
    public var segmentsReceived: UInt32 = 0
    public var dataSegmentsSent: UInt32 = 0
    public var dataSegmentsReceived: UInt32 = 0
    public var retransmissions: UInt32 = 0
    public var minRTTMicroseconds: UInt32 = 0

    /// Zero everywhere: a socket before its first segment.
    public init() {}

    public init(
        segmentsSent: UInt32,
        segmentsReceived: UInt32,
        dataSegmentsSent: UInt32,
        dataSegmentsReceived: UInt32,
        retransmissions: UInt32,
        minRTTMicroseconds: UInt32
    ) {
        self.segmentsSent = segmentsSent
        self.segmentsReceived = segmentsReceived
        self.dataSegmentsSent = dataSegmentsSent
        self.dataSegmentsReceived = dataSegmentsReceived
        self.retransmissions = retransmissions
        self.minRTTMicroseconds = minRTTMicroseconds
    }
}
