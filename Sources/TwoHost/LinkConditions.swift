import Foundation

/// What the link between the two hosts is to do to packets, on each end (so a round trip
/// meets each condition twice): one-way delay and its jitter, random loss, a rate and the
/// MTU. Parsed and checked before anything is made; `Kernel` says what can apply them.
struct LinkConditions: Sendable, Equatable, CustomStringConvertible {
    /// One-way delay on each end, in seconds.
    var delay: Double?
    /// Jitter of that delay, in seconds: each packet's delay uniform in `delay ± jitter`
    /// (needs `delay`, at most it).
    var jitter: Double?
    /// Whether jitter may reorder packets (a later packet with a shorter draw passes an
    /// earlier one, as netem's jitter does); by default the link keeps their order.
    var reorder = false
    /// What delays the packets, if asked (`--delay-by`); else `delayMechanism(on:)` chooses.
    var delayBy: DelayMechanism?
    /// The share of packets each end drops, from 0 to below 1.
    var loss: Double?
    /// The rate of each end, as tc writes it (`100mbit`).
    var rate: String?
    /// Both ends' MTU, in bytes.
    var mtu: Int?

    /// Whether any condition is asked for.
    var isEmpty: Bool { self == LinkConditions() }

    /// Whether the link drops packets on purpose: its runs' thresholds are then data.
    var losesPackets: Bool { (self.loss ?? 0) > 0 }

    /// Reads the options (a bad value is refused naming its option and what it expects).
    init(
        delay: String? = nil,
        jitter: String? = nil,
        reorder: Bool = false,
        delayBy: String? = nil,
        loss: String? = nil,
        rate: String? = nil,
        mtu: String? = nil
    ) throws {
        self.delay = try delay.map { try Self.duration($0, option: "--delay") }
        self.jitter = try jitter.map { try Self.duration($0, option: "--jitter") }
        self.reorder = reorder
        if let delayBy {
            guard let mechanism = DelayMechanism(rawValue: delayBy) else {
                throw Failure("--delay-by '\(delayBy)': expected netem or queue")
            }
            self.delayBy = mechanism
        }
        self.loss = try loss.map { try Self.share($0, option: "--loss") }
        self.rate = try rate.map { try Self.rate($0, option: "--rate") }
        self.mtu = try mtu.map { try Self.mtu($0, option: "--mtu") }
        if self.jitter != nil, self.delay == nil { throw Failure("--jitter needs --delay: it varies the delay") }
        if let jitter = self.jitter, let delay = self.delay, jitter > delay {
            throw Failure(
                "--jitter \(Self.milliseconds(jitter)) is more than --delay \(Self.milliseconds(delay)): a packet would leave before it arrived"
            )
        }
        if reorder, self.jitter == nil { throw Failure("--reorder needs --jitter: only jitter reorders packets") }
        if self.delayBy != nil, self.delay == nil { throw Failure("--delay-by needs --delay") }
    }

    /// No conditions.
    init() {}

    /// `20ms`, `1.5ms`, `200us`, `0.1s` in seconds, from 0 to 10 s.
    static func duration(_ text: String, option: String) throws -> Double {
        let units: [(String, Double)] = [("ms", 1e-3), ("us", 1e-6), ("µs", 1e-6), ("s", 1)]
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        for (unit, scale) in units where trimmed.hasSuffix(unit) {
            let number = trimmed.dropLast(unit.count).trimmingCharacters(in: .whitespaces)
            if let value = Double(number), value.isFinite, value >= 0, value * scale <= 10 { return value * scale }
            break
        }
        throw Failure("\(option) '\(text)': expected a duration from 0 to 10 s such as 20ms, 1.5ms, 200us or 0.1s")
    }

    /// `5%` (or `0.5%`) as 0.05: from 0 to below 100%.
    static func share(_ text: String, option: String) throws -> Double {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasSuffix("%"), let percent = Double(trimmed.dropLast().trimmingCharacters(in: .whitespaces)),
            percent.isFinite
        else { throw Failure("\(option) '\(text)': expected a percentage such as 5% or 0.5%") }
        guard percent >= 0, percent < 100 else {
            throw Failure("\(option) '\(text)': must be from 0% to below 100% (every packet lost is no link)")
        }
        return percent / 100
    }

    /// `100mbit`, `512kbit`, `1gbit`, `9600bit`, as tc takes it.
    static func rate(_ text: String, option: String) throws -> String {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        for unit in ["gbit", "mbit", "kbit", "bit"] where trimmed.hasSuffix(unit) {
            if let value = Double(trimmed.dropLast(unit.count)), value.isFinite, value > 0 { return trimmed }
            break
        }
        throw Failure("\(option) '\(text)': expected a rate such as 100mbit, 512kbit, 1gbit or 9600bit")
    }

    /// An MTU from 576 (IPv4's smallest a host must take) to 9000 bytes.
    static func mtu(_ text: String, option: String) throws -> Int {
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)), (576...9000).contains(value) else {
            throw Failure("\(option) '\(text)': expected an MTU in bytes from 576 to 9000")
        }
        return value
    }

    /// What delays the packets on `kernel`: the one asked for (`--delay-by`); else netem where
    /// the kernel has it, unless jitter must keep the packets' order (netem's jitter reorders
    /// them); else the queue (`link-delay` behind iptables' NFQUEUE). Nil when nothing here can.
    func delayMechanism(on kernel: Kernel) -> DelayMechanism? {
        guard self.delay != nil else { return nil }
        if let asked = self.delayBy { return kernel.can(asked) ? asked : nil }
        if kernel.netem, self.jitter == nil || self.reorder { return .netem }
        return kernel.nfqueue ? .queue : nil
    }

    /// The problems of applying these on `kernel`, naming each condition and what it lacks.
    func problems(on kernel: Kernel) -> [String] {
        var problems: [String] = []
        if let delay = self.delay, self.delayMechanism(on: kernel) == nil {
            let what = "--delay \(Self.milliseconds(delay))" + (self.jitter.map { " --jitter \(Self.milliseconds($0))" } ?? "")
            switch self.delayBy {
            case .netem?: problems.append("\(what) --delay-by netem needs tc's netem (sch_netem), which this kernel lacks")
            case .queue?:
                problems.append("\(what) --delay-by queue needs iptables' NFQUEUE target (Debian: iptables), which this machine lacks")
            case nil:
                problems.append(
                    "\(what) needs tc's netem (sch_netem)\(self.jitter != nil && !self.reorder ? " with --reorder" : "") or iptables' NFQUEUE target (Debian: iptables) for link-delay, and this machine has neither"
                )
            }
        }
        if self.loss != nil, !kernel.netem, !kernel.nftables {
            problems.append("--loss needs tc's netem (sch_netem) or nftables (nft), and this machine has neither")
        }
        if self.rate != nil, !kernel.netem, !kernel.tbf {
            problems.append("--rate needs tc's netem (sch_netem) or tbf (sch_tbf), and this kernel has neither")
        }
        if !self.isEmpty, !kernel.ethtool {
            problems.append(
                "shaping needs ethtool to turn segmentation offloads off (so that packets are real packets), and it is not installed"
            )
        }
        return problems
    }

    /// `20ms`, `0.2ms`.
    static func milliseconds(_ seconds: Double) -> String {
        let value = seconds * 1000
        return (value == value.rounded() ? String(Int(value)) : String(format: "%g", value)) + "ms"
    }

    /// The environment `two-host-net.sh up` reads them from (empty when not asked for).
    var environment: [String: String] {
        [
            "LINK_DELAY": self.delay.map(Self.milliseconds) ?? "",
            "LINK_JITTER": self.jitter.map(Self.milliseconds) ?? "",
            "LINK_LOSS": self.loss.map { String(format: "%g", $0 * 100) } ?? "",
            "LINK_RATE": self.rate ?? "",
            "LINK_MTU": self.mtu.map(String.init) ?? "",
            "LINK_DELAY_BY": self.delayBy?.rawValue ?? "",
            "LINK_REORDER": self.reorder ? "yes" : "",
        ]
    }

    /// These, with what delays them on `kernel` chosen (`delayMechanism(on:)`).
    func resolved(on kernel: Kernel?) -> LinkConditions {
        var resolved = self
        if let kernel, self.delay != nil { resolved.delayBy = self.delayMechanism(on: kernel) }
        return resolved
    }

    /// `delay 20ms jitter 2ms, loss 5%, rate 100mbit, mtu 1500`, or `none`.
    var description: String {
        var parts: [String] = []
        if let delay = self.delay {
            parts.append(
                "delay \(Self.milliseconds(delay))" + (self.jitter.map { " jitter \(Self.milliseconds($0))" } ?? "")
                    + (self.reorder ? " reordering" : "")
            )
        }
        if let loss = self.loss { parts.append("loss \(String(format: "%g", loss * 100))%") }
        if let rate = self.rate { parts.append("rate \(rate)") }
        if let mtu = self.mtu { parts.append("mtu \(mtu)") }
        return parts.isEmpty ? "none" : parts.joined(separator: ", ")
    }
}

/// What delays a link's packets: tc's netem on each end's egress, or `link-delay` holding
/// each packet arriving at each end, handed to it by iptables' NFQUEUE (kernels without netem).
enum DelayMechanism: String, Sendable, Equatable {
    case netem
    case queue
}

/// What this kernel and machine can shape a link with, probed in a namespace made for it
/// (`two-host-net.sh probe`) before anything of the run is made.
struct Kernel: Sendable, Equatable {
    /// `tc qdisc … netem` works: delay, jitter, loss, rate.
    var netem: Bool
    /// `tc qdisc … tbf` works: rate.
    var tbf: Bool
    /// `nft` is installed and makes tables in a namespace: loss by `numgen random`.
    var nftables: Bool
    /// `ethtool` is installed: offloads can be turned off.
    var ethtool: Bool
    /// `iptables` can send a namespace's arriving packets to NFQUEUE: `link-delay` can hold them.
    var nfqueue: Bool

    /// Whether `mechanism` works here.
    func can(_ mechanism: DelayMechanism) -> Bool { mechanism == .netem ? self.netem : self.nfqueue }

    /// Reads `probe`'s lines: `netem yes`, `tbf no`, …
    init(probe output: String) {
        var found: [String: Bool] = [:]
        for line in output.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2 { found[String(parts[0])] = parts[1] == "yes" }
        }
        self.netem = found["netem"] ?? false
        self.tbf = found["tbf"] ?? false
        self.nftables = found["nft"] ?? false
        self.ethtool = found["ethtool"] ?? false
        self.nfqueue = found["nfqueue"] ?? false
    }
}

/// The loss one direction of the link met: the packets one end's veth sent, and how many the
/// other end did not deliver (`two-host-net.sh counters`).
struct MeasuredLoss: Sendable, Equatable, CustomStringConvertible {
    /// `a→b` or `b→a`.
    var direction: String
    var sent: Int
    var delivered: Int
    /// Dropped on arrival by the link's own nftables rule (the loss where netem is missing).
    var dropped: Int = 0

    /// The share lost: what arrived at the far end and was dropped there, plus what the near
    /// end sent that never arrived, of what was sent. (The device's send count alone ran a few
    /// packets short of the far end's arrivals in every run, which hid a 1–2% loss.)
    var loss: Double {
        let arrived = self.dropped + self.delivered
        let base = max(self.sent, arrived)
        return base > 0 ? Double(self.dropped + max(0, self.sent - arrived)) / Double(base) : 0
    }

    /// `a→b: 10.1% of 3119 packets lost`.
    var description: String {
        "\(self.direction): \(String(format: "%.1f", self.loss * 100))% of \(self.sent) packets lost"
    }

    /// Both directions from `counters` lines (`counters SIDE SENT DROPPED DELIVERED`); none
    /// where a count is missing (no nftables).
    static func parse(_ output: String) -> [MeasuredLoss] {
        var sides: [String: (sent: Int, dropped: Int, delivered: Int)] = [:]
        for line in output.split(separator: "\n") {
            let parts = line.split(separator: " ").map(String.init)
            guard parts.count == 5, parts[0] == "counters", let sent = Int(parts[2]), let delivered = Int(parts[4])
            else { continue }
            sides[parts[1]] = (sent, Int(parts[3]) ?? 0, delivered)
        }
        guard let a = sides["a"], let b = sides["b"] else { return [] }
        return [
            MeasuredLoss(direction: "a→b", sent: a.sent, delivered: b.delivered, dropped: b.dropped),
            MeasuredLoss(direction: "b→a", sent: b.sent, delivered: a.delivered, dropped: a.dropped),
        ]
    }
}

/// What one end's `link-delay` did so far (`two-host-net.sh counters RUN WORK`): the packets
/// it held, how late after its due time it let them go (µs, by power-of-two bucket; the
/// largest exactly), and how many went after one that arrived later.
struct DelayerFigures: Sendable, Equatable, CustomStringConvertible {
    var side: String
    var held: Int
    var lateP50: Int
    var lateP99: Int
    var lateMax: Int
    var reordered: Int

    /// `a: 3,112 packets held, late by p50 ≤ 16 µs, p99 ≤ 64 µs, at most 210 µs; 0 reordered`.
    var description: String {
        "\(self.side): \(self.held) packets held, let go late by p50 ≤ \(self.lateP50) µs, p99 ≤ \(self.lateP99) µs, "
            + "at most \(self.lateMax) µs; \(self.reordered) reordered"
    }

    var json: [String: Any] {
        [
            "side": self.side, "held": self.held, "lateP50Microseconds": self.lateP50,
            "lateP99Microseconds": self.lateP99, "lateMaxMicroseconds": self.lateMax, "reordered": self.reordered,
        ]
    }

    /// The `delayer SIDE held N late-p50 US late-p99 US late-max US reordered N …` lines.
    static func parse(_ output: String) -> [DelayerFigures] {
        output.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ").map(String.init)
            guard parts.count >= 12, parts[0] == "delayer", parts[2] == "held" else { return nil }
            var values: [String: Int] = [:]
            for index in stride(from: 2, to: parts.count - 1, by: 2) { values[parts[index]] = Int(parts[index + 1]) }
            guard let held = values["held"], let p50 = values["late-p50"], let p99 = values["late-p99"],
                let largest = values["late-max"], let reordered = values["reordered"]
            else { return nil }
            return DelayerFigures(
                side: parts[1],
                held: held,
                lateP50: p50,
                lateP99: p99,
                lateMax: largest,
                reordered: reordered
            )
        }
    }
}

/// What the link's counters said after a run (`two-host-net.sh counters RUN WORK`): the loss
/// each way, each end's holder, and the segments each host's TCP queued out of order
/// (`TcpExt: TCPOFOQueue`, by side).
struct LinkFigures: Sendable, Equatable {
    var loss: [MeasuredLoss]
    var delayers: [DelayerFigures]
    var outOfOrder: [String: Int]

    init(_ output: String) {
        self.loss = MeasuredLoss.parse(output)
        self.delayers = DelayerFigures.parse(output)
        var outOfOrder: [String: Int] = [:]
        for line in output.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 4, parts[0] == "tcp", parts[2] == "ofo", let count = Int(parts[3]) {
                outOfOrder[String(parts[1])] = count
            }
        }
        self.outOfOrder = outOfOrder
    }
}
