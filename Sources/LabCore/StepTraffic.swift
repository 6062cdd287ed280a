/// The bytes a step put on the wire and took off it, over all its round trips: whole frames
/// (length header and body) for a request and its answer; the TLS records for `handshake`.
///
/// Counts are exact, so they add up across clients, shards and runs.
public struct StepTraffic: Sendable, Hashable, Codable {
    /// Round trips (a request and its answer; one handshake).
    public var roundTrips: UInt64
    /// Bytes sent, in total.
    public var sent: UInt64
    /// Bytes received, in total.
    public var received: UInt64

    /// Traffic.
    public init(roundTrips: UInt64 = 0, sent: UInt64 = 0, received: UInt64 = 0) {
        self.roundTrips = roundTrips
        self.sent = sent
        self.received = received
    }

    /// Adds `other`'s counts to these.
    public mutating func add(_ other: StepTraffic) {
        self.roundTrips &+= other.roundTrips
        self.sent &+= other.sent
        self.received &+= other.received
    }

    /// Both directions.
    public var total: UInt64 { self.sent &+ self.received }

    /// Nothing counted.
    public var isEmpty: Bool { self.roundTrips == 0 && self.sent == 0 && self.received == 0 }
}

/// One iteration's traffic, step by step, in storage of its own: up to eight steps allocate
/// nothing (an exchange's bookkeeping must not move the counted gate's allocator calls);
/// more go to an array.
public struct TrafficLog: Sendable {
    private var inline = InlineArray<8, (step: Step, traffic: StepTraffic)?>(repeating: nil)
    private var overflow: [(step: Step, traffic: StepTraffic)] = []
    /// Steps kept inline so far.
    private var inlineCount = 0

    /// An empty log.
    public init() {}

    /// Adds one round trip of `step`.
    public mutating func add(_ step: Step, sent: Int, received: Int) {
        let traffic = StepTraffic(roundTrips: 1, sent: UInt64(max(0, sent)), received: UInt64(max(0, received)))
        for index in 0..<self.inlineCount where self.inline[index]?.step == step {
            self.inline[index]!.traffic.add(traffic)
            return
        }
        if self.inlineCount < self.inline.count {
            self.inline[self.inlineCount] = (step, traffic)
            self.inlineCount += 1
            return
        }
        if let index = self.overflow.firstIndex(where: { $0.step == step }) {
            self.overflow[index].traffic.add(traffic)
        } else {
            self.overflow.append((step, traffic))
        }
    }

    /// Whether nothing was logged.
    public var isEmpty: Bool { self.inlineCount == 0 }

    /// Adds every step's traffic into `totals`.
    public func add(into totals: inout [Step: StepTraffic]) {
        for index in 0..<self.inlineCount {
            if let entry = self.inline[index] { totals[entry.step, default: StepTraffic()].add(entry.traffic) }
        }
        for entry in self.overflow { totals[entry.step, default: StepTraffic()].add(entry.traffic) }
    }
}
