public import LabCore

/// Where a run's CPU time went: the lab's own process while its clients ran, and a server
/// elsewhere's over the run, as it reported it (`serverStats`).
///
/// The lab's process is the load generator. When it also runs the server (`in-process`, or
/// a `tcp`/`tls` server it starts), its CPU is the clients' and the server's together, and
/// `includesServer` says so.
public struct RunCPU: Codable, Sendable, Equatable {
    /// The lab process's CPU time from the clients' start to the last one's end (every
    /// thread's: clients, event loops, an in-process server).
    public var process: ProcessCPU
    /// That phase's wall time.
    public var wallNanoseconds: UInt64
    /// The cores the process could run on; nil for shards merged (`lab merge`), whose
    /// processes may have shared a machine or not.
    public var cores: Int?
    /// Iterations the process ran in that phase, warm-up included.
    public var iterations: UInt64
    /// Whether the process ran the server too.
    public var includesServer: Bool
    /// Whether the process's demand (`demand`: CPU used and time its threads waited for a
    /// core) came to `saturation` of its cores or more: its clients then waited for a core,
    /// and the figures measure the generator as much as the server. Kept when shards merge:
    /// one saturated shard makes the merge so.
    public var saturated: Bool
    /// The server's, when it runs elsewhere and reports its CPU.
    public var server: Server?

    /// A server's CPU over the run: the difference of two `serverStats` answers.
    public struct Server: Codable, Sendable, Equatable {
        /// The server process's CPU time between the two answers.
        public var process: ProcessCPU
        /// Requests it answered meanwhile (error answers included, its `serverStats` left out),
        /// from every client it served.
        public var requests: UInt64
        /// The time between the answers, on the server's clock.
        public var wallNanoseconds: UInt64
        /// The server machine's cores.
        public var cores: Int

        /// A reading.
        public init(process: ProcessCPU, requests: UInt64, wallNanoseconds: UInt64, cores: Int) {
            self.process = process
            self.requests = requests
            self.wallNanoseconds = wallNanoseconds
            self.cores = cores
        }

        /// CPU microseconds per request answered; nil without requests.
        public var microsecondsPerRequest: Double? {
            self.requests > 0 ? Double(self.process.totalNanoseconds) / 1_000 / Double(self.requests) : nil
        }

        /// The server's CPU time over its wall time and cores (1: every core busy all along).
        public var share: Double? { RunCPU.share(self.process, self.wallNanoseconds, self.cores) }
    }

    /// A process that uses this share of its cores or more is saturated: 90%.
    public static let saturation = 0.9

    /// The block, `saturated` judged from the figures.
    public init(
        process: ProcessCPU,
        wallNanoseconds: UInt64,
        cores: Int?,
        iterations: UInt64,
        includesServer: Bool,
        server: Server? = nil
    ) {
        self.process = process
        self.wallNanoseconds = wallNanoseconds
        self.cores = cores
        self.iterations = iterations
        self.includesServer = includesServer
        self.server = server
        self.saturated = (RunCPU.demand(process, wallNanoseconds, cores) ?? 0) >= Self.saturation
    }

    /// The process's CPU microseconds per iteration; nil without iterations.
    public var microsecondsPerIteration: Double? {
        self.iterations > 0 ? Double(self.process.totalNanoseconds) / 1_000 / Double(self.iterations) : nil
    }

    /// The process's CPU time over its wall time and cores (1: every core busy all along).
    public var share: Double? { Self.share(self.process, self.wallNanoseconds, self.cores) }

    /// The process's CPU time and its threads' wait for a core, over its wall time and cores:
    /// what it would have used had every core been free when it wanted one. On its own
    /// machine a busy generator's share says it; beside other busy processes, its wait does.
    public var demand: Double? { Self.demand(self.process, self.wallNanoseconds, self.cores) }

    static func share(_ cpu: ProcessCPU, _ wall: UInt64, _ cores: Int?) -> Double? {
        guard let cores, cores > 0, wall > 0 else { return nil }
        return Double(cpu.totalNanoseconds) / (Double(wall) * Double(cores))
    }

    static func demand(_ cpu: ProcessCPU, _ wall: UInt64, _ cores: Int?) -> Double? {
        guard let cores, cores > 0, wall > 0 else { return nil }
        return Double(cpu.totalNanoseconds &+ (cpu.waitingNanoseconds ?? 0)) / (Double(wall) * Double(cores))
    }

    /// The warning a saturated generator earns, or nil.
    public var warning: String? {
        guard self.saturated else { return nil }
        guard self.cores != nil else {
            return "A shard's process was saturated while its clients ran: it had no core to spare, so the "
                + "latencies and rates measure the generator as much as the server. Run fewer clients per shard, "
                + "or more shards."
        }
        var used = self.share.map { "\(Int(($0 * 100).rounded()))% of its \(self.cores ?? 0) cores" } ?? "all its cores"
        if let wait = self.process.waitingNanoseconds, let cores = self.cores, self.wallNanoseconds > 0, wait > 0 {
            let share = Double(wait) / (Double(self.wallNanoseconds) * Double(cores))
            if share >= 0.005 {
                used += ", and its threads waited for one \(Int((share * 100).rounded()))% of the time more,"
            }
        }
        let what = self.includesServer ? "The lab's process (clients and the server it runs)" : "The load generator"
        return "\(what) used \(used) while the clients ran: it had no core to spare, so the latencies and rates "
            + "measure the generator as much as the server. Run fewer clients, or split them over processes or hosts "
            + "(lab run --shard K/N, then lab merge)."
    }

    /// Shards' blocks made one: CPU and iterations added, the longest wall time, cores unknown.
    public mutating func merge(_ other: RunCPU) {
        self.process = ProcessCPU(
            userNanoseconds: self.process.userNanoseconds &+ other.process.userNanoseconds,
            systemNanoseconds: self.process.systemNanoseconds &+ other.process.systemNanoseconds,
            waitingNanoseconds: self.process.waitingNanoseconds.flatMap { mine in
                other.process.waitingNanoseconds.map { mine &+ $0 }
            }
        )
        self.wallNanoseconds = max(self.wallNanoseconds, other.wallNanoseconds)
        self.cores = nil
        self.iterations &+= other.iterations
        self.includesServer = self.includesServer || other.includesServer
        self.saturated = self.saturated || other.saturated
        // Each shard saw the whole server: its own share of the server's work is not known.
        self.server = nil
    }
}
