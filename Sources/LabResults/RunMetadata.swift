public import Foundation
import Histogram
import LabCore

/// The machine a run ran on.
public struct MachineInfo: Sendable, Codable, Equatable {
    /// The host name.
    public package(set) var hostname: String
    /// The CPU model, from `/proc/cpuinfo`.
    public package(set) var cpu: String
    /// Cores the process may use.
    public package(set) var cores: Int
    /// Physical memory in bytes.
    public package(set) var memoryBytes: UInt64
    /// The operating system, from `/etc/os-release`.
    public package(set) var os: String
    /// The kernel release.
    public package(set) var kernel: String

    /// Facts given directly.
    public init(hostname: String, cpu: String, cores: Int, memoryBytes: UInt64, os: String, kernel: String) {
        self.hostname = hostname
        self.cpu = cpu
        self.cores = cores
        self.memoryBytes = memoryBytes
        self.os = os
        self.kernel = kernel
    }

    /// This machine.
    public static func current() -> MachineInfo {
        let info = ProcessInfo.processInfo
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let cpu =
            cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .flatMap { $0.split(separator: ":", maxSplits: 1).last }
            .map { $0.trimmingCharacters(in: " ") } ?? "unknown"
        let release = (try? String(contentsOfFile: "/etc/os-release", encoding: .utf8)) ?? ""
        let os =
            release.split(separator: "\n").first { $0.hasPrefix("PRETTY_NAME=") }
            .map { $0.dropFirst("PRETTY_NAME=".count).trimmingCharacters(in: "\"") }
            ?? info.operatingSystemVersionString
        var names = utsname()
        uname(&names)
        let kernel = withUnsafeBytes(of: &names.release) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        return MachineInfo(
            hostname: info.hostName,
            cpu: cpu,
            cores: info.activeProcessorCount,
            memoryBytes: info.physicalMemory,
            os: os,
            kernel: kernel
        )
    }
}

/// A provider as it ran: its name and library version.
public struct ProviderInfo: Sendable, Codable, Equatable {
    /// The plugin name.
    public package(set) var name: String
    /// The library and version, e.g. `OpenSSL 3.0.17`.
    public package(set) var version: String

    /// A provider's facts.
    public init(name: String, version: String) {
        self.name = name
        self.version = version
    }
}

/// The lab that made a document: its version, the commit it was built from and the
/// toolchain (`LabBuild`, written at build time).
public struct LabInfo: Sendable, Codable, Equatable {
    /// The lab's version, e.g. `0.1.0`.
    public package(set) var version: String
    /// The git commit built, nil when built outside a git checkout.
    public package(set) var commit: String?
    /// Whether tracked files had changes not committed when it was built.
    public package(set) var dirty: Bool?
    /// The first line of the compiler's `--version`.
    public package(set) var toolchain: String?

    /// Facts given directly.
    public init(version: String, commit: String? = nil, dirty: Bool? = nil, toolchain: String? = nil) {
        self.version = version
        self.commit = commit
        self.dirty = dirty
        self.toolchain = toolchain
    }

    /// `0.1.0, commit 1a2b3c4d5e6f (with changes not committed), Swift version 6.3.1 (…)`.
    public var summary: String {
        var text = self.version
        if let commit = self.commit {
            text += ", commit \(commit.prefix(12))" + (self.dirty == true ? " (with changes not committed)" : "")
        }
        if let toolchain = self.toolchain { text += ", \(toolchain)" }
        return text
    }
}

/// Facts about a run that are not measurements.
public struct RunMetadata: Sendable, Codable, Equatable {
    /// The scenario's name.
    public package(set) var scenario: String
    /// The scenario's description.
    public package(set) var description: String
    /// The scenario file, if the run came from one.
    public package(set) var scenarioFile: String?
    /// When the run started.
    public package(set) var startedAt: Date
    /// `debug` or `release`.
    public package(set) var build: String
    /// Where it ran.
    public package(set) var machine: MachineInfo
    /// The providers used, with versions.
    public package(set) var providers: [ProviderInfo]
    /// The transport.
    public package(set) var transport: String
    /// The number of simulated clients.
    public package(set) var clients: Int
    /// The load, in words, e.g. `closed, 50 iterations per client (5 warm-up)`.
    public package(set) var load: String
    /// The process's command line.
    public package(set) var command: String
    /// How the server's own steps were obtained, when the server ran elsewhere: from its
    /// `serverStats` answer (then they are the report's `server` groups) or why not.
    public package(set) var serverSide: String?
    /// The server's machine, when it reported its own steps.
    public package(set) var serverMachine: MachineInfo?
    /// This run's slice of the client population (`2/4`), or nil for the whole.
    public package(set) var shard: String?
    /// The wall-clock start of the measured window (the first measured iteration's start), so
    /// `lab merge` can place shards' windows on one time line.
    public package(set) var measuredFrom: Date?
    /// What a counted run counted with (`WorkCounter.counterName`), or nil for a run that
    /// only timed.
    public package(set) var counter: String?
    /// For a counted run: how far its processes shifted their heaps before the run
    /// (`lab run --counted --layout N`, N × 16 bytes); nil for 0, and for a timed run.
    public package(set) var heapLayout: Int?
    /// Whether the interrupts each timed step took were counted (`ThreadUsage.countsInterrupts`:
    /// the kernel's tracepoints, readable as root), so that a sample that took one is marked
    /// preempted; nil in documents from before they were.
    public package(set) var interruptsCounted: Bool?
    /// The lab that ran it; nil in documents from before labs said.
    public package(set) var lab: LabInfo?
    /// The run's id (`lab run --run-id`, or one made for it): shards of one run share it, and
    /// `lab merge` refuses shards of different runs. Nil in older documents, and for a shard
    /// given none.
    public package(set) var runId: String?
    /// The user's labels (`lab run --tag key=value`), e.g. a branch or a pull request.
    public package(set) var tags: [String: String]?
    /// When the clients began (after keys, connections and set-up, and after `--start-at`'s
    /// hold), on the wall clock; for a merge, the earliest shard's.
    public package(set) var clientsStartedAt: Date?
    /// For a merge of shards: how far apart the shards' clients began (latest minus
    /// earliest `clientsStartedAt`), in seconds.
    public package(set) var shardStartSpread: Double?
    /// For a merge of shards: the shards given that did not finish (`ShardRecord.failure`),
    /// in the order given; nil when none failed. A merge with any is not the whole run.
    public package(set) var failedShards: [FailedShard]?
    /// For a merge of shards: each merged shard's measured window on the wall clock, in
    /// shard order.
    public package(set) var shardWindows: [ShardWindow]?
    /// For a merge of two or more shards: the length of the intersection of their measured
    /// windows ÷ the length of their union (`RunMerge.overlap`), 0 when they do not all meet.
    public package(set) var shardWindowOverlap: Double?

    /// Metadata given directly.
    public init(
        scenario: String,
        description: String = "",
        scenarioFile: String? = nil,
        startedAt: Date,
        build: String,
        machine: MachineInfo,
        providers: [ProviderInfo],
        transport: String,
        clients: Int,
        load: String,
        command: String,
        serverSide: String? = nil,
        serverMachine: MachineInfo? = nil,
        shard: String? = nil
    ) {
        self.scenario = scenario
        self.description = description
        self.scenarioFile = scenarioFile
        self.startedAt = startedAt
        self.build = build
        self.machine = machine
        self.providers = providers
        self.transport = transport
        self.clients = clients
        self.load = load
        self.command = command
        self.serverSide = serverSide
        self.serverMachine = serverMachine
        self.shard = shard
    }
}
