import Foundation
import Histogram
import LabCore
import LabMessaging
import LabResults
import LabRunner
import LabTestSupport
import LabTransports
import LabWire
import NIOCore
import Synchronization
import Testing

/// Issue 8's hostile load, against `lab serve` in another process: 1,000 honest cx/1 clients
/// finish every exchange while 100 hostile connections send garbage, random lengths,
/// slow-loris trickles, half-open connections and floods of wrong passwords; the server ends
/// each hostile connection for the reason its bytes call for, the seed policy postpones and
/// then locks the attacked account, and the server's peak memory grows by no more than the
/// measured growth and a stated margin. `scripts/hostile-load.sh 10` runs it ten times in a
/// row (docs/hardening.md).
@Suite(.tier(.hostileLoad), .serialized)
struct HostileLoadTests {
    static let maxFrameBytes = 65_536
    static let honestClients = 1_000
    static let iterations = 2
    /// The scrypt cost the server runs at: 2^14 × 8 × 128 bytes = 16 MiB per password check.
    static let scryptLogN = 14
    /// The seed policy's postponement, short enough that the victim is locked within the run.
    static let postponeFor = "1 s"
    /// The idle timeout: what ends a half-open connection.
    static let idleTimeout = "20 s"

    /// The hostile connections, 20 of each kind.
    enum Hostile: String, CaseIterable, Sendable {
        case garbage, randomLengths, slowLoris, halfOpen, wrongPasswords
    }

    /// A raw hostile connection, by its local port (the server's log names the peer by it),
    /// and the close reasons (fragments of the server's log line) its bytes allow.
    struct Ending: Sendable {
        var kind: Hostile
        var port: Int
        var expected: [String]
    }

    /// What the hostile side did and saw. An attack counts once its connection is up.
    final class Tally: Sendable {
        let connected = Mutex<[Hostile: Int]>([:])
        let endings = Mutex<[Ending]>([])
        /// Login answers by target (`victim`, `unknown`) and code (`ok` for a success).
        let answers = Mutex<[String: [String: Int]]>([:])

        func connected(_ kind: Hostile, port: Int, expected: [String]) {
            self.connected.withLock { $0[kind, default: 0] += 1 }
            if !expected.isEmpty { self.endings.withLock { $0.append(Ending(kind: kind, port: port, expected: expected)) } }
        }
        func answered(_ target: String, _ code: String) {
            self.answers.withLock { $0[target, default: [:]][code, default: 0] += 1 }
        }
        var victimLocked: Bool { self.answers.withLock { $0["victim"]?["locked", default: 0] ?? 0 > 0 } }
    }

    @Test("1,000 honest clients finish every exchange while 100 hostile connections attack lab serve")
    func honestClientsFinishUnderHostileLoad() async throws {
        let (server, address) = try await LabProcess.serve([
            "--suites", "x25519", "--max-frame-bytes", "\(Self.maxFrameBytes)", "--idle-timeout", Self.idleTimeout,
            "--frame-timeout", "2 s", "--kdf", "scrypt", "--scrypt-log-n", "\(Self.scryptLogN)",
            "--policy", "seed", "--postpone-for", Self.postponeFor, "--log-level", "info",
        ])
        defer { server.terminate() }
        do {
            try await Self.runUnderAttack(server, port: address.port)
        } catch {
            // What the server saw when a client failed: its log says why it closed (twice on
            // 2026-11-24 an attacker's msg/1 connection, once in CI a connection of the test's
            // own, closed before the answer).
            Issue.record("\(error); the server's log ends: \(server.errors.suffix(3_000))")
        }
    }

    /// The quiet run, the run under attack, and what both must show.
    static func runUnderAttack(_ server: ServerProcess, port: Int) async throws {
        try await Self.register(port: port, username: "victim")

        let quiet = try await Self.honestRun(port: port)
        let peakQuiet = try Self.peakResident(server.pid)

        let done = TransportConformance.Counter()
        let tally = Tally()
        let attacked = try await withThrowingTaskGroup(of: RunResult?.self) { group in
            for (index, kind) in Hostile.allCases.flatMap({ Array(repeating: $0, count: 20) }).enumerated() {
                group.addTask {
                    var random = SplitMix64(state: UInt64(index) &* 7_919)
                    // Bounded in count, and over once the honest run is. Any failure to connect
                    // or talk (other than the server ending a raw connection) fails the test.
                    for _ in 0..<2_000 where done.count == 0 {
                        try await Self.attack(kind, port: port, random: &random, tally: tally, done: done)
                    }
                    return nil
                }
            }
            group.addTask {
                defer { done.increment() }
                return try await Self.honestRun(port: port)
            }
            var honest: RunResult? = nil
            for try await result in group where result != nil { honest = result }
            return honest!
        }
        let peakAttacked = try Self.peakResident(server.pid)

        for (label, result) in [("quiet", quiet), ("under attack", attacked)] {
            #expect(
                result.errorCount == 0,
                "\(label): errors \(result.groups.map(\.errors)); server log: \(server.errors.suffix(2_000))"
            )
            #expect(result.completedIterations == Self.honestClients * Self.iterations, "\(label)")
        }
        // Every kind of attack got through to the server, at least once per attacker.
        let connected = tally.connected.withLock { $0 }
        for kind in Hostile.allCases {
            #expect(connected[kind, default: 0] >= 20, "\(kind) connected \(connected[kind, default: 0]) times")
        }
        // Each raw hostile connection was ended by the server, for a reason its bytes allow:
        // its line in the server's log (awaited, all of them) names the reason.
        let endings = tally.endings.withLock { $0 }
        try? await server.errors(described: "a close line for each hostile connection", timeout: .seconds(15)) {
            Self.unexplained(endings, lines: Self.closeLines($0)).isEmpty
        }
        let unexplained = Self.unexplained(endings, lines: Self.closeLines(server.errors))
        #expect(unexplained.isEmpty, "\(unexplained.count) hostile connections: \(unexplained.prefix(5))")

        // The seed policy on the attacked account: the third counted failure postpones it (its
        // badCredentials answer says until when: exactly one does), and once the postponement
        // is over the fifth locks it (answered badCredentials; every attempt after it is
        // locked): five badCredentials in all; no wrong password ever logs in. (Whether an attempt also
        // meets the postponement itself depends on how long queued checks take.) Names that
        // do not exist go through the same answers (issue 37, break 8), never a success.
        let answers = tally.answers.withLock { $0 }
        let victim = answers["victim", default: [:]]
        #expect(victim["badCredentials", default: 0] == 5, "five counted failures, then locked: \(victim)")
        #expect(victim["postponing", default: 0] == 1, "the victim was not postponed once: \(victim)")
        #expect(victim["locked", default: 0] >= 1, "the victim was never locked: \(victim)")
        #expect(victim["ok", default: 0] == 0 && answers["unknown"]?["ok"] == nil, "a wrong password logged in: \(answers)")
        #expect(
            Set(answers["unknown", default: [:]].keys).isSubset(of: ["badCredentials", "postponing", "postponed", "locked"]),
            "unknown names: \(answers["unknown"] ?? [:])"
        )
        #expect(answers["unknown", default: [:]]["badCredentials", default: 0] >= 1, "no unknown name was tried")
        // What the password checks cost, from the server's own recording (serverStats): a login
        // ran the KDF for each counted failure of the victim and for each unknown name (the
        // decoy check, so that a name's existence does not show in the time), and for no
        // postponed or locked attempt.
        let checks = try await Self.loginKDFRuns(port: port)
        let expectedChecks = victim["badCredentials", default: 0] + answers["unknown", default: [:]]["badCredentials", default: 0]
        #expect(checks == expectedChecks, "login KDF runs \(checks); victim \(victim), unknown \(answers["unknown"] ?? [:])")

        // Peak resident memory: measured growth under attack 19–24 MiB (ten runs, 2026-11-22,
        // throttle policy), bounded at 32 MiB: the largest seen plus a third.
        let bound = 32 << 20
        #expect(
            peakAttacked <= peakQuiet + bound,
            "peak resident \(peakAttacked >> 20) MiB under attack, \(peakQuiet >> 20) MiB quiet; bound +\(bound >> 20) MiB"
        )
        // Still serving.
        let after = try await Self.honestRun(port: port, clients: 4)
        #expect(after.errorCount == 0 && after.completedIterations == 4 * Self.iterations)

        let p99 = { (result: RunResult) -> String in
            let histogram = result.groups.first { !$0.isServerSide }?.steps[.exchange]
            return histogram.map { String(format: "%.1f ms", Double($0.valueAtPercentile(99)) / 1e6) } ?? "?"
        }
        let reasons = Dictionary(grouping: tally.endings.withLock { $0 }, by: \.kind).mapValues(\.count)
        print(
            """
            hostile load: honest exchange p99 \(p99(quiet)) quiet, \(p99(attacked)) under attack; \
            lab serve peak resident \(peakQuiet >> 20) MiB quiet, \(peakAttacked >> 20) MiB under attack \
            (bound +\(bound >> 20) MiB); connected \(connected.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", ")); \
            raw endings checked \(reasons.values.reduce(0, +)); \
            victim \(victim.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")); \
            unknown \((answers["unknown"] ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
            """
        )
    }

    /// `clients` honest x25519 clients against the server, `iterations` exchanges each.
    static func honestRun(port: Int, clients: Int = Self.honestClients) async throws -> RunResult {
        try await TestPlan.run(
            """
            {
              "name": "honest",
              "server": { "transport": "tcp", "address": "127.0.0.1:\(port)", "maxFrameBytes": \(Self.maxFrameBytes) },
              "clients": { "count": \(clients) },
              "load": { "iterations": \(Self.iterations), "deadline": "180 s" },
              "flows": [ { "flow": "cx", "suite": "x25519" } ]
            }
            """
        )
    }

    /// How many password checks (`kdf` samples) the server recorded for `login` answers.
    static func loginKDFRuns(port: Int) async throws -> Int {
        let endpoint = try await TCPTransport(options: TransportOptions()).remote(host: "127.0.0.1", port: port)
        var none = NoStepRecorder()
        let connection = try await endpoint.connect(recorder: &none)
        let stats = try ServerStatsMessage.decodeAnswer(
            try await connection.request(try ServerStatsMessage.request(group: MsgOp.login.rawValue), recorder: &none)
        )
        await connection.close()
        let login = stats.groups.first { $0.name == MsgOp.login.rawValue }
        let kdf = login?.steps.first { $0.step == Step.kdf.name }
        return Int(kdf?.histogram.counts.reduce(0) { $0 + $1.count } ?? 0)
    }

    /// Registers `username` with a password nobody else knows.
    static func register(port: Int, username: String) async throws {
        let endpoint = try await TCPTransport(options: TransportOptions()).remote(host: "127.0.0.1", port: port)
        var none = NoStepRecorder()
        let connection = try await endpoint.connect(recorder: &none)
        var user = MessagingUser(username: username, password: "the victim's own password")
        _ = try await user.register(MessagingClient(connection: connection), recorder: &none).get()
        await connection.close()
    }

    static func peakResident(_ pid: Int32) throws -> Int { try ProcessFigures.peakResident(pid) }

    /// The server's log lines for connections it ended (honest clients end their own, which
    /// is logged below the `info` level).
    static func closeLines(_ log: String) -> [Substring] {
        log.split(separator: "\n").filter { $0.contains("closing the connection") || $0.contains("the connection failed") }
    }

    /// The peer's port a server log line names, nil for `peer=?`.
    static func port(of line: Substring) -> Int? {
        guard let range = line.range(of: "peer=127.0.0.1:") else { return nil }
        return Int(line[range.upperBound...].prefix { $0.isNumber })
    }

    /// The endings that no close line explains. A line names its connection by the peer's
    /// port, except when the peer was gone before the server could ask for its address
    /// (NIO then has none: `peer=?`, about one in ten garbage connections that hang up at
    /// once). Each line explains one ending whose expected reasons it holds: one with the
    /// same port, or any ending if it has none.
    ///
    /// Ports are reused over a run (tens of thousands of connections on some 28,000 ephemeral
    /// ports), so a port's lines may be two connections', and one line may fit either: taking
    /// the first that fits blamed a reused port's `frameTooLarge` on the wrong connection
    /// once (2026-11-27). The endings and lines are paired as a maximum matching instead
    /// (augmenting paths), so an ending is unexplained only if no pairing explains it.
    static func unexplained(_ endings: [Ending], lines: [Substring]) -> [String] {
        // The lines that can explain an ending: each line with a port, and the anonymous lines
        // grouped by the reasons they hold (interchangeable within a group: one node with a
        // capacity). Node n holds `capacity[n]` endings at most; `holders[n]`, those it holds.
        var portNodes: [Int: [Int]] = [:]
        var reasons: [[String]] = []
        var capacity: [Int] = []
        var anonymous: [[String]: Int] = [:]
        let fragments = Array(Set(endings.flatMap(\.expected))).sorted()
        for line in lines {
            let held = fragments.filter { line.contains($0) }
            if let port = Self.port(of: line) {
                portNodes[port, default: []].append(reasons.count)
                reasons.append(held)
                capacity.append(1)
            } else if let node = anonymous[held] {
                capacity[node] += 1
            } else {
                anonymous[held] = reasons.count
                reasons.append(held)
                capacity.append(1)
            }
        }
        // What each ending may take: its port's lines that fit, then anonymous groups that fit.
        let candidates: [[Int]] = endings.map { ending in
            let fits = { (node: Int) in reasons[node].contains { ending.expected.contains($0) } }
            return (portNodes[ending.port] ?? []).filter(fits) + anonymous.values.sorted().filter(fits)
        }
        var holders = [[Int]](repeating: [], count: reasons.count)
        // Kuhn's augmenting path from `ending`, without recursion (a path may be long): frames
        // alternate between an ending trying its nodes and a full node trying to move one of
        // its holders elsewhere.
        enum Frame {
            case ending(Int, next: Int)
            case node(Int, next: Int)
        }
        func augment(_ ending: Int) -> Bool {
            var visited = Set<Int>()
            var stack: [Frame] = [.ending(ending, next: 0)]
            while let top = stack.last {
                switch top {
                case .ending(let index, let next):
                    guard next < candidates[index].count else {
                        stack.removeLast()
                        continue
                    }
                    stack[stack.count - 1] = .ending(index, next: next + 1)
                    let node = candidates[index][next]
                    guard visited.insert(node).inserted else { continue }
                    guard holders[node].count >= capacity[node] else {
                        // A free place: each ending on the path moves to the node after it.
                        var previous: Int?
                        for frame in stack + [.node(node, next: 0)] {
                            switch frame {
                            case .ending(let moving, _): previous = moving
                            case .node(let target, _):
                                guard let moving = previous else { continue }
                                holders[target].append(moving)
                            }
                        }
                        // ... and leaves the node it held (the node frame before it).
                        for (position, frame) in stack.enumerated() {
                            guard case .node(let left, _) = frame, position + 1 < stack.count,
                                case .ending(let moving, _) = stack[position + 1],
                                let place = holders[left].firstIndex(of: moving)
                            else { continue }
                            holders[left].remove(at: place)
                        }
                        return true
                    }
                    stack.append(.node(node, next: 0))
                case .node(let node, let next):
                    guard next < holders[node].count else {
                        stack.removeLast()
                        continue
                    }
                    stack[stack.count - 1] = .node(node, next: next + 1)
                    stack.append(.ending(holders[node][next], next: 0))
                }
            }
            return false
        }
        var unexplained: [String] = []
        for index in endings.indices where !augment(index) {
            let ending = endings[index]
            let logged = lines.filter { Self.port(of: $0) == ending.port }
            unexplained.append(
                "\(ending.kind) from port \(ending.port): expected \(ending.expected), "
                    + (logged.isEmpty ? "no line" : "logged \(logged.prefix(3))\(logged.count > 3 ? " and \(logged.count - 3) more" : "")")
            )
        }
        return unexplained
    }

    /// The close reasons (fragments of the server's log line) that a raw connection sending
    /// `bytes`, then hanging up or waiting, allows: decided by the frame header in them.
    static func expectedCloses(_ bytes: [UInt8], hangUp: Bool) -> [String] {
        // A frame begun and never finished: the peer leaves (truncated), or trickles on past
        // the frame timeout, or stays silent past the idle timeout.
        let unfinished = hangUp ? ["reason=truncatedFrame"] : ["reason=truncatedFrame", "still arriving", "(idle timeout)"]
        guard bytes.count >= 4 else { return unfinished }
        let length = bytes.prefix(4).reduce(0) { $0 << 8 | Int($1) }
        if length == 0 { return ["reason=emptyFrame"] }
        if length > Self.maxFrameBytes { return ["reason=frameTooLarge"] }
        // A whole frame of garbage: answered with an error, then closed (or the answer meets
        // the peer already gone).
        if bytes.count - 4 >= length { return ["after an error answer"] + (hangUp ? ["the connection failed"] : []) }
        return unfinished
    }

    /// One round of `kind` against the server.
    static func attack(
        _ kind: Hostile,
        port: Int,
        random: inout SplitMix64,
        tally: Tally,
        done: TransportConformance.Counter
    ) async throws {
        switch kind {
        case .garbage:
            let bytes = (0..<Int.random(in: 1...512, using: &random)).map { _ in
                UInt8.random(in: 0...255, using: &random)
            }
            let hangUp = Bool.random(using: &random)
            try await Self.raw(kind, port: port, hangUp: hangUp, expected: Self.expectedCloses(bytes, hangUp: hangUp), tally) {
                try await $0.write(ByteBuffer(bytes: bytes))
            }
        case .randomLengths:
            let lengths: [UInt32] = [0, 1, UInt32(Self.maxFrameBytes), UInt32(Self.maxFrameBytes + 1), .max]
            let length =
                Bool.random(using: &random)
                ? lengths.randomElement(using: &random)! : UInt32.random(in: 0...(1 << 20), using: &random)
            var buffer = ByteBuffer()
            buffer.writeInteger(length, endianness: .big)
            buffer.writeBytes((0..<min(Int(length), 4_096)).map { _ in UInt8.random(in: 0...255, using: &random) })
            let frame = buffer
            let hangUp = Bool.random(using: &random)
            let expected = Self.expectedCloses(Array(frame.readableBytesView), hangUp: hangUp)
            try await Self.raw(kind, port: port, hangUp: hangUp, expected: expected, tally) { try await $0.write(frame) }
        case .slowLoris:
            // A byte every 100 ms, never idle, never a whole frame: the 2 s frame timeout ends it
            // (the trickle goes on until it does, at most 10 s).
            try await Self.raw(kind, port: port, expected: ["still arriving"], tally) { outbound in
                var header = ByteBuffer()
                header.writeInteger(UInt32(1_000), endianness: .big)
                try await outbound.write(header)
                for _ in 0..<100 {
                    try await Task.sleep(for: .milliseconds(100))
                    do { try await outbound.write(ByteBuffer(bytes: [0x2A])) } catch { return }
                }
            }
        case .halfOpen:
            // Half a header, then silence: the peer that vanished without a word. The idle
            // timeout (20 s) ends it; the peer waits 25 s for that.
            try await Self.raw(kind, port: port, limit: .seconds(25), expected: ["(idle timeout)"], tally) {
                try await $0.write(ByteBuffer(bytes: [0, 0]))
            }
        case .wrongPasswords:
            let endpoint = try await TCPTransport(options: TransportOptions()).remote(host: "127.0.0.1", port: port)
            var none = NoStepRecorder()
            let connection = try await endpoint.connect(recorder: &none)
            tally.connected(kind, port: 0, expected: [])
            let client = MessagingClient(connection: connection)
            // The registered victim, or a name that does not exist.
            let target = Bool.random(using: &random) ? "victim" : "unknown"
            let name = target == "victim" ? "victim" : "nobody\(UInt16.random(in: 0...999, using: &random))"
            var user = MessagingUser(username: name, password: "not the password \(random.next())")
            // Five tries, over once the honest run is, except that the victim's attackers go on
            // (at most 20 tries) until they have seen the account locked.
            for attempt in 0..<20 {
                let underWay = attempt < 5 && done.count == 0
                let victimNotLocked = target == "victim" && !tally.victimLocked
                guard underWay || victimNotLocked else { break }
                let captcha = try await user.solveCaptcha(client, recorder: &none)
                switch try await user.login(client, captcha: captcha, recorder: &none) {
                case .success: tally.answered(target, "ok")
                case .failure(let failure):
                    tally.answered(target, failure.code.rawValue)
                    // The failure that starts a postponement says until when.
                    if failure.code == .badCredentials, failure.until != nil { tally.answered(target, "postponing") }
                    // Postponed: try again once the postponement is over, as the server said.
                    if failure.code == .postponed, let until = failure.until {
                        let wait = min(max(until.timeIntervalSinceNow, 0), 2)
                        try await Task.sleep(for: .milliseconds(Int(wait * 1_000) + 10))
                    }
                }
            }
            await connection.close()
        }
    }

    /// A raw connection of `kind`, counted once it is up, with the close reasons the server
    /// may log for it. The server ending it under the peer's feet is the expected end.
    static func raw(
        _ kind: Hostile,
        port: Int,
        limit: Duration = .seconds(10),
        hangUp: Bool = false,
        expected: [String],
        _ tally: Tally,
        _ script: @escaping @Sendable (NIOAsyncChannelOutboundWriter<ByteBuffer>) async throws -> Void
    ) async throws {
        let up = Mutex(false)
        do {
            _ = try await RawPeer.run(
                port: port,
                limit: limit,
                hangUp: hangUp,
                connected: { port in
                    up.withLock { $0 = true }
                    tally.connected(kind, port: port, expected: expected)
                },
                script
            )
        } catch let error as ChannelError where error == .ioOnClosedChannel || error == .alreadyClosed {
            // Closed by the server while the script still wrote; failing to connect is a failure.
            guard up.withLock({ $0 }) else { throw error }
        } catch let error as IOError {
            // Reset by the server mid-write; failing to connect is a failure.
            guard up.withLock({ $0 }) else { throw error }
        }
    }
}

/// How the hostile-load test pairs the server's close lines with its connections, on lines
/// made by hand: the reused port and the anonymous peer that taking the first fitting line
/// got wrong.
@Suite(.tier(.unit)) struct HostileLoadPairingTests {
    typealias Ending = HostileLoadTests.Ending
    static let waiting = ["reason=truncatedFrame", "still arriving", "(idle timeout)"]

    @Test("A reused port's two lines go to the connections they fit, whatever their order")
    func reusedPort() {
        let endings = [
            Ending(kind: .garbage, port: 40_001, expected: Self.waiting),
            Ending(kind: .randomLengths, port: 40_001, expected: ["reason=truncatedFrame"]),
        ]
        let lines: [Substring] = [
            "closing the connection: reason=truncatedFrame peer=127.0.0.1:40001",
            "closing the connection: a frame still arriving peer=127.0.0.1:40001",
        ]
        #expect(HostileLoadTests.unexplained(endings, lines: lines).isEmpty)
        #expect(HostileLoadTests.unexplained(endings.reversed(), lines: lines.reversed()).isEmpty)
        // One line for two connections: one is unexplained, named with what its port logged.
        let missing = HostileLoadTests.unexplained(endings, lines: [lines[0]])
        #expect(missing.count == 1 && missing[0].contains("port 40001"), "\(missing)")
    }

    @Test("Anonymous lines go to the connections they fit; a port's line never to another port")
    func anonymousLines() {
        let endings = [
            Ending(kind: .slowLoris, port: 40_002, expected: Self.waiting),
            Ending(kind: .garbage, port: 40_003, expected: ["reason=truncatedFrame"]),
            Ending(kind: .randomLengths, port: 40_004, expected: ["reason=frameTooLarge"]),
        ]
        let lines: [Substring] = [
            "closing the connection: reason=truncatedFrame peer=?",
            "closing the connection: a frame still arriving peer=?",
            "closing the connection: reason=frameTooLarge peer=127.0.0.1:40004",
        ]
        #expect(HostileLoadTests.unexplained(endings, lines: lines).isEmpty)
        // The frameTooLarge line belongs to port 40004: another port's ending cannot take it.
        let moved = HostileLoadTests.unexplained(
            [Ending(kind: .randomLengths, port: 40_005, expected: ["reason=frameTooLarge"])],
            lines: [lines[2]]
        )
        #expect(moved.count == 1 && moved[0].contains("no line"), "\(moved)")
    }

    @Test("A long chain of reassignments is found: each ending moves once to free the next")
    func longChain() {
        // Ending k fits the lines of reasons k and k+1; greedily each takes reason k, leaving
        // the last ending, which fits only the first reason, nothing: every other ending must
        // move one place along.
        let count = 400
        let reasons = (0..<count).map { "reason=r\($0)." }
        var endings = (0..<count - 1).map {
            Ending(kind: .garbage, port: 50_000, expected: [reasons[$0], reasons[$0 + 1]])
        }
        endings.append(Ending(kind: .garbage, port: 50_000, expected: [reasons[0]]))
        let lines = reasons.map { Substring("closing the connection: \($0) peer=127.0.0.1:50000") }
        #expect(HostileLoadTests.unexplained(endings, lines: lines).isEmpty)
    }
}
