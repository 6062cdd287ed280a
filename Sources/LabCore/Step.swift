import Synchronization

#if canImport(Glibc)
public import Glibc
#elseif canImport(Darwin)
public import Darwin
#endif

/// A timed step; the names are the ones every report uses (docs/reports.md).
public struct Step: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The report name, e.g. `keygen.client`.
    public let name: String

    /// A step with a given report name.
    public init(_ name: String) {
        self.name = name
    }

    /// The report name.
    public var description: String { self.name }

    /// Orders by name, so tables and CSV rows come out in a stable order.
    public static func < (lhs: Step, rhs: Step) -> Bool { lhs.name < rhs.name }

    /// The client makes its key pair.
    public static let keygenClient = Step("keygen.client")
    /// The server makes its signing key pair.
    public static let keygenServer = Step("keygen.server")
    /// The server makes a fresh session key.
    public static let keygenSession = Step("keygen.session")
    /// The server wraps the session key for the client (parsing the client's key included).
    public static let wrap = Step("wrap")
    /// The client unwraps the session key.
    public static let unwrap = Step("unwrap")
    /// The server encrypts the message.
    public static let encrypt = Step("encrypt")
    /// The client decrypts the message.
    public static let decrypt = Step("decrypt")
    /// The server signs the plaintext.
    public static let sign = Step("sign")
    /// The client verifies the signature (parsing the server's key included).
    public static let verify = Step("verify")
    /// A side turns a message into a frame.
    public static let encode = Step("encode")
    /// A side turns a frame into a message.
    public static let decode = Step("decode")
    /// One whole exchange as the client sees it.
    public static let exchange = Step("exchange")
    /// The work of one exchange (with `report.stepUsage`): the CPU time its timed steps took
    /// on their threads, the client's and, for a server in the lab's process, the server's,
    /// added up. What the suite and the provider cost, whatever the machine's queue did.
    /// Steps without a thread of their own (`connect`, `handshake`, `discover`: the kernel's
    /// and the peer's time) are not in it.
    public static let work = Step("exchange.work")
    /// The rest of one exchange's time (with `report.stepUsage`): `exchange` − `work` per
    /// exchange, at least 0. Queueing for a core or an event loop, the network, the peer.
    public static let waiting = Step("exchange.waiting")
    /// A server's answer to one request, as its packets count it (`StepPackets`, read from
    /// one request's arrival to the next's).
    public static let answer = Step("answer")
    /// Opening a connection to the server: TCP connect, plus the TLS handshake over `tls`.
    public static let connect = Step("connect")
    /// The TLS handshake alone, inside `connect` over `tls`: from the moment the TCP
    /// connection is active to the handshake's completion (the pin checked), both taken on
    /// the connection's event loop.
    public static let handshake = Step("handshake")
    /// Finding the server by DNS-SD: browse, resolve and address lookup.
    public static let discover = Step("discover")
}

/// Receives step durations and outcome counts. The runner's recorders are HDR histograms;
/// tests use `StepTimings`.
public protocol StepRecorder {
    /// Records that `step` took `nanoseconds`.
    mutating func record(_ step: Step, nanoseconds: UInt64)
    /// Records one measurement of `step` with what `measure` knows beside its time (CPU
    /// time, preemption, counted work). Recorders that only time keep `sample.nanoseconds`.
    mutating func record(_ step: Step, sample: StepSample)
    /// Adds `amount` to the count of `outcome`: what happened rather than how long it took,
    /// e.g. a lockout flow's `attempts`, `postponed` and `locked` (a "policy outcome").
    ///
    /// The runner adds a measured iteration's counts to its group whether the iteration failed
    /// or not (warm-up iterations are left out), and set-up's counts (making a client,
    /// connecting, `FlowClient.prepare`) always. Recorders that only time ignore counts.
    mutating func count(_ outcome: String, by amount: UInt64)
    /// Records one round trip of `step`: `sent` bytes out and `received` bytes back, counted
    /// as they cross the transport (whole frames, length headers included; for `handshake`,
    /// the TLS records). Called by connections, not by flows. Recorders that only time ignore it.
    mutating func transferred(_ step: Step, sent: Int, received: Int)
    /// Whether connections read the kernel's TCP counters around each round trip
    /// (`StepPackets`: two `getsockopt` calls per round trip, inside the step's time). Off
    /// unless a run asks for it (`report.packets`).
    var readsPackets: Bool { get }
    /// Records what TCP did for one round trip of `step` (`StepPackets`), when
    /// `readsPackets`. Called by connections, not by flows. Recorders that only time ignore it.
    mutating func packets(_ step: Step, _ packets: StepPackets)
    /// Whether `measure` reads the thread's CPU time and preemption around each step
    /// (`ThreadUsage`: about 1.5 µs of system calls, before and after the timed region, so
    /// outside the step's own time but inside the exchange's). Off unless a run asks for it
    /// (`report.stepUsage`): on, in-process x25519 ran at 78–83% of its primitive bound.
    var readsUsage: Bool { get }
    /// Runs `body` and records its duration under `step` if it returns normally. The default
    /// takes `StepSampling.sample` and records it; a recorder may wrap that, as the runner's
    /// does to make a step slower on purpose (`lab run --test-slowdown`, for the tests of
    /// `lab compare` and the gate), without the protocol knowing.
    mutating func measure<T>(_ step: Step, _ body: () throws -> T) rethrows -> T
}

extension StepRecorder {
    /// Keeps the time alone.
    @inlinable
    public mutating func record(_ step: Step, sample: StepSample) {
        self.record(step, nanoseconds: sample.nanoseconds)
    }

    /// Ignores the count: a recorder that only times.
    @inlinable
    public mutating func count(_ outcome: String, by amount: UInt64) {}

    /// Ignores the bytes: a recorder that only times.
    @inlinable
    public mutating func transferred(_ step: Step, sent: Int, received: Int) {}

    /// No packet reads.
    @inlinable
    public var readsPackets: Bool { false }

    /// Ignores the packets: a recorder that only times.
    @inlinable
    public mutating func packets(_ step: Step, _ packets: StepPackets) {}

    /// No usage reads.
    @inlinable
    public var readsUsage: Bool { false }

    /// One sample of `body` (`StepSampling.sample`), recorded under `step`.
    @inlinable
    public mutating func measure<T>(_ step: Step, _ body: () throws -> T) rethrows -> T {
        let (result, sample, _) = try StepSampling.sample(readsUsage: self.readsUsage, body)
        self.record(step, sample: sample)
        return result
    }

    /// Adds one to the count of `outcome`.
    @inlinable
    public mutating func count(_ outcome: String) {
        self.count(outcome, by: 1)
    }
}

/// The steps of one or more exchanges, in the order they ran, and the outcomes counted.
public struct StepTimings: StepRecorder, Sendable {
    /// Each recorded step's whole sample, in the order they ran.
    public private(set) var samples: [(step: Step, sample: StepSample)] = []
    /// Each recorded step and its duration in nanoseconds, in the order they ran.
    public var entries: [(step: Step, nanoseconds: UInt64)] { self.samples.map { ($0.step, $0.sample.nanoseconds) } }
    /// Each outcome counted, and its total.
    public private(set) var outcomes: [String: UInt64] = [:]
    /// Each step's bytes on the wire (`StepRecorder.transferred`).
    public private(set) var traffic: [Step: StepTraffic] = [:]

    /// Whether `measure` reads the thread's usage around each step (`StepRecorder.readsUsage`).
    public var readsUsage: Bool

    /// An empty record; `readsUsage`: read each step's CPU time and preemption.
    public init(readsUsage: Bool = false) {
        self.readsUsage = readsUsage
    }

    /// Appends one measurement.
    public mutating func record(_ step: Step, nanoseconds: UInt64) {
        self.record(step, sample: StepSample(nanoseconds: nanoseconds))
    }

    /// Appends one measurement with its whole sample.
    public mutating func record(_ step: Step, sample: StepSample) {
        self.samples.append((step, sample))
    }

    /// Adds `amount` to the count of `outcome`.
    public mutating func count(_ outcome: String, by amount: UInt64) {
        self.outcomes[outcome, default: 0] &+= amount
    }

    /// Adds one round trip of `step`'s bytes.
    public mutating func transferred(_ step: Step, sent: Int, received: Int) {
        self.traffic[step, default: StepTraffic()].add(
            StepTraffic(roundTrips: 1, sent: UInt64(max(0, sent)), received: UInt64(max(0, received)))
        )
    }

    /// The distinct steps recorded.
    public var steps: Set<Step> { Set(self.samples.map(\.step)) }

    /// The summed duration of every measurement of `step`, or nil if it never ran.
    public func total(_ step: Step) -> UInt64? {
        let matching = self.samples.filter { $0.step == step }
        return matching.isEmpty ? nil : matching.reduce(0) { $0 + $1.sample.nanoseconds }
    }
}

/// Discards everything: for callers that do not time.
public struct NoStepRecorder: StepRecorder {
    /// A recorder that records nothing.
    public init() {}
    /// Does nothing.
    @inlinable public mutating func record(_ step: Step, nanoseconds: UInt64) {}
    /// Does nothing.
    @inlinable public mutating func count(_ outcome: String, by amount: UInt64) {}
}

/// Test-only work added to a step (`lab run --test-slowdown`): rounds of xorshift64, which
/// the optimizer can neither drop (the result is kept) nor fold (each round depends on the
/// last).
public enum AddedWork {
    private static let sink = Atomic<UInt64>(0)

    /// Runs `rounds` rounds.
    @inline(never)
    public static func spin(_ rounds: Int) {
        var x = Self.sink.load(ordering: .relaxed) | 1
        for _ in 0..<rounds {
            x ^= x << 13
            x ^= x >> 7
            x ^= x << 17
        }
        Self.sink.store(x, ordering: .relaxed)
    }
}

/// A monotonic clock read in nanoseconds, cheap enough for the hot path.
public enum Stopwatch {
    /// Now, in nanoseconds since an arbitrary fixed point.
    @inlinable
    public static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
    }
}

/// One measurement of a step, which `StepRecorder.measure` records.
public enum StepSampling {
    /// Runs `body`, then `added` rounds of `AddedWork.spin` (test-only: 0 unless a recorder
    /// slows the step on purpose), and returns its result and its sample: the wall time of
    /// both, with the thread's CPU time over it and whether the thread was preempted
    /// meanwhile (`readsUsage`), and in a counted run the work callgrind counted
    /// (`WorkCounter`); and how long the added rounds took, so that a recorder can size the
    /// next amount by what a round really costs now.
    ///
    /// The readings bracket the timed region from outside, so they add nothing to its time;
    /// the counters' bracket holds the timed region and nothing else of the step's.
    @inlinable
    public static func sample<T>(
        readsUsage reads: Bool,
        adding added: Int = 0,
        _ body: () throws -> T
    ) rethrows -> (result: T, sample: StepSample, added: UInt64) {
        let usage = reads ? ThreadUsage.now() : nil
        let counted = WorkCounter.isActive ? WorkCounter.read() : nil
        let start = Stopwatch.now()
        let result = try body()
        // Where the added work begins: one more reading of the clock, in slowed steps only.
        let addedStart = added > 0 ? Stopwatch.now() : 0
        if added > 0 { AddedWork.spin(added) }
        let end = Stopwatch.now()
        let countedAfter = counted == nil ? nil : WorkCounter.read()
        let usageAfter = reads ? ThreadUsage.now() : nil
        var sample = StepSample(nanoseconds: end &- start, watched: false)
        if let usage, let usageAfter {
            sample.watched = true
            sample.cpuNanoseconds = usageAfter.cpuNanoseconds &- usage.cpuNanoseconds
            sample.preempted = ThreadUsage.disturbed(from: usage, to: usageAfter, wallNanoseconds: sample.nanoseconds)
        }
        if let counted, let countedAfter {
            sample.instructions = countedAfter.instructions &- counted.instructions
            sample.allocations = countedAfter.allocations &- counted.allocations
        }
        return (result, sample, added > 0 ? end &- addedStart : 0)
    }
}
