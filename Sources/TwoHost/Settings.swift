import Foundation

/// What a run needs, checked before anything is made: root, the tools, the lab binary, the
/// two scenarios and the baseline's port.
struct Settings: Sendable {
    /// The lab binary, absolute (a command entered into a host's mount namespace starts at its root).
    var lab: URL
    /// Where the reports go, absolute.
    var out: URL
    var keepLogs: Bool
    /// What the link is to do to packets (checked against the kernel by `TwoHostRun.probe`).
    var conditions: LinkConditions
    /// The losses a sweep runs at (`--sweep-loss`), in order; empty for one run.
    var sweepLosses: [Double]
    /// The delays (each end's) a sweep runs at (`--sweep-delay`), in order; empty for one run.
    var sweepDelays: [Double]
    /// Whether this is a sweep.
    var sweeps: Bool { !self.sweepLosses.isEmpty || !self.sweepDelays.isEmpty }
    /// `link-delay`, beside this tool: what holds packets where netem cannot delay them.
    var delayer: URL
    /// TLS handshakes per group at each sweep point (`--handshakes`), or nil for sweep-tls.json's.
    var handshakes: Int?
    /// cx exchanges per client at each sweep point and in its baseline (`--exchanges`), or nil
    /// for sweep.json's.
    var exchanges: Int?
    /// Whether a sweep runs its single-host baseline (not with `--no-baseline`).
    var baseline: Bool
    /// The `--set`s that run sweep.json and sweep-single-host.json with `--exchanges`.
    var exchangeSets: [String] { self.exchanges.map { ["load.iterations=\($0)"] } ?? [] }
    /// The repository: `Scenarios/two-host/*.json` and `scripts/two-host-net.sh`.
    var repository: URL
    /// The port single-host.json's static address names: the baseline's server listens there.
    var baselinePort: Int
    /// The port sweep-single-host.json names: a sweep's baseline server listens there.
    var sweepBaselinePort: Int

    var twoHostScenario: URL { self.repository.appendingPathComponent("Scenarios/two-host/two-host.json") }
    var sweepScenario: URL { self.repository.appendingPathComponent("Scenarios/two-host/sweep.json") }
    var singleHostScenario: URL { self.repository.appendingPathComponent("Scenarios/two-host/single-host.json") }
    var sweepTLSScenario: URL { self.repository.appendingPathComponent("Scenarios/two-host/sweep-tls.json") }
    var sweepSingleHostScenario: URL {
        self.repository.appendingPathComponent("Scenarios/two-host/sweep-single-host.json")
    }
    var script: URL { self.repository.appendingPathComponent("scripts/two-host-net.sh") }

    /// The programs a run calls, by name on PATH.
    static let tools = [
        "ip", "unshare", "nsenter", "mountpoint", "dbus-daemon", "dbus-send", "avahi-daemon", "timeout",
    ]

    init(_ options: TwoHost) throws {
        guard getuid() == 0 else { throw Failure("run me as root: I create network namespaces and mount tmpfs") }
        let environment = ProcessInfo.processInfo.environment
        func given(_ option: String?, _ variable: String) -> String? {
            option ?? environment[variable].flatMap { $0.isEmpty ? nil : $0 }
        }
        self.conditions = try LinkConditions(
            delay: given(options.delay, "TWO_HOST_DELAY"),
            jitter: given(options.jitter, "TWO_HOST_JITTER"),
            reorder: options.reorder,
            delayBy: given(options.delayBy, "TWO_HOST_DELAY_BY"),
            loss: given(options.loss, "TWO_HOST_LOSS"),
            rate: given(options.rate, "TWO_HOST_RATE"),
            mtu: given(options.mtu, "TWO_HOST_MTU")
        )
        self.sweepLosses = try options.sweepLoss.map(Self.losses) ?? []
        self.sweepDelays = try options.sweepDelay.map(Self.delays) ?? []
        if !self.sweepDelays.isEmpty {
            if self.conditions.delay != nil { throw Failure("--sweep-delay sets the delay of each run: give it without --delay") }
            if self.conditions.jitter != nil {
                throw Failure("--jitter needs one --delay: a sweep of delays runs without jitter")
            }
            let points = self.sweepDelays.count * max(self.sweepLosses.count, 1)
            guard points <= 24 else {
                throw Failure("--sweep-delay with --sweep-loss makes \(points) points: at most 24 (each takes up to a minute)")
            }
        }
        // Not `self.sweeps`: it reads properties not yet set.
        let sweeps = !self.sweepLosses.isEmpty || !self.sweepDelays.isEmpty
        if let handshakes = options.handshakes {
            guard sweeps else {
                throw Failure("--handshakes is for a sweep: give --sweep-loss or --sweep-delay too")
            }
            guard (1...1000).contains(handshakes) else { throw Failure("--handshakes: expected 1 to 1000, found \(handshakes)") }
        }
        self.handshakes = options.handshakes
        if let exchanges = options.exchanges {
            guard sweeps else {
                throw Failure("--exchanges is for a sweep: give --sweep-loss or --sweep-delay too")
            }
            guard (1...1000).contains(exchanges) else { throw Failure("--exchanges: expected 1 to 1000, found \(exchanges)") }
        }
        self.exchanges = options.exchanges
        guard !options.noBaseline || sweeps else {
            throw Failure("--no-baseline is for a sweep: give --sweep-loss or --sweep-delay too")
        }
        self.baseline = !options.noBaseline
        if !self.sweepLosses.isEmpty, self.conditions.loss != nil {
            throw Failure("--sweep-loss sets the loss of each run: give it without --loss")
        }
        let shaped = !self.conditions.isEmpty || !self.sweepLosses.isEmpty || !self.sweepDelays.isEmpty
        let missing = (Self.tools + (shaped ? ["tc"] : [])).filter { Self.which($0) == nil }
        guard missing.isEmpty else {
            throw Failure(
                "missing: \(missing.joined(separator: " ")) (Debian: iproute2, util-linux, dbus, avahi-daemon, coreutils)"
            )
        }
        self.keepLogs = options.keepLogs
        self.repository = try Self.findRepository(options.repository)
        let tool = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        self.lab = URL(
            fileURLWithPath: options.lab ?? tool.deletingLastPathComponent().appendingPathComponent("lab").path
        )
        .standardizedFileURL.resolvingSymlinksInPath()
        self.delayer = tool.deletingLastPathComponent().appendingPathComponent("link-delay")
        guard FileManager.default.isExecutableFile(atPath: self.lab.path) else {
            throw Failure("no lab binary at '\(self.lab.path)' (swift build --product lab, or --lab PATH)")
        }
        self.baselinePort = try Self.baselinePort(
            of: self.repository.appendingPathComponent("Scenarios/two-host/single-host.json")
        )
        self.sweepBaselinePort = try Self.baselinePort(
            of: self.repository.appendingPathComponent("Scenarios/two-host/sweep-single-host.json")
        )
        let out =
            options.out.map { URL(fileURLWithPath: $0) }
            ?? self.repository.appendingPathComponent("Reports/two-host/\(Self.timestamp())")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        self.out = out.standardizedFileURL.resolvingSymlinksInPath()
        guard FileManager.default.isReadableFile(atPath: self.twoHostScenario.path) else {
            throw Failure("missing scenario file \(self.twoHostScenario.path)")
        }
    }

    /// `0%,1%,5%`: at most 12 distinct losses, each as `--loss` takes it, in increasing order.
    static func losses(_ text: String) throws -> [Double] {
        let values = try text.split(separator: ",").map { try LinkConditions.share(String($0), option: "--sweep-loss") }
        guard !values.isEmpty, values.count <= 12, Set(values).count == values.count, values == values.sorted() else {
            throw Failure("--sweep-loss '\(text)': expected 1 to 12 distinct losses in increasing order, e.g. 0%,1%,5%")
        }
        return values
    }

    /// `0ms,15ms`: at most 8 distinct delays, each as `--delay` takes it, in increasing order.
    static func delays(_ text: String) throws -> [Double] {
        let values = try text.split(separator: ",").map {
            try LinkConditions.duration(String($0), option: "--sweep-delay")
        }
        guard !values.isEmpty, values.count <= 8, Set(values).count == values.count, values == values.sorted() else {
            throw Failure("--sweep-delay '\(text)': expected 1 to 8 distinct delays in increasing order, e.g. 0ms,15ms")
        }
        return values
    }

    /// The repository given, or the first folder holding `scripts/two-host-net.sh` among the
    /// current folder, this tool's folder and their parents.
    static func findRepository(_ given: String?) throws -> URL {
        if let given { return URL(fileURLWithPath: given).standardizedFileURL }
        let starts = [
            URL(fileURLWithPath: FileManager.default.currentDirectoryPath),
            URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent(),
        ]
        for start in starts {
            var folder = start.standardizedFileURL
            while folder.path != "/" {
                if FileManager.default.fileExists(atPath: folder.appendingPathComponent("scripts/two-host-net.sh").path)
                {
                    return folder
                }
                folder.deleteLastPathComponent()
            }
        }
        throw Failure("no repository (scripts/two-host-net.sh) above here or this tool: give --repository")
    }

    /// single-host.json's `server.address` port: it must be 127.0.0.1:PORT.
    static func baselinePort(of scenario: URL) throws -> Int {
        guard let data = FileManager.default.contents(atPath: scenario.path) else {
            throw Failure("missing scenario file \(scenario.path)")
        }
        let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        let address = (object?["server"] as? [String: Any])?["address"] as? String ?? ""
        let parts = address.split(separator: ":")
        guard parts.count == 2, parts[0] == "127.0.0.1", let port = Int(parts[1]), (1...65535).contains(port) else {
            throw Failure("\(scenario.path) has no server \"address\": \"127.0.0.1:PORT\"")
        }
        return port
    }

    /// `name`'s path on PATH, if it is there.
    static func which(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/sbin:/usr/bin:/sbin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    /// Now in UTC, as a folder name: 2026-11-25T041500Z.
    static func timestamp() -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HHmmss'Z'"
        return formatter.string(from: Date())
    }
}
