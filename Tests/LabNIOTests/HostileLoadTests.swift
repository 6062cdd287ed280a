import Foundation
import Histogram
import LabCore
import LabMessaging
import LabNIO
import LabRunner
import LabTesting
import LabWire
import NIOCore
import Synchronization
import Testing

/// Issue 8's hostile load, against `lab serve` in another process: 1,000 honest cx/1 clients
/// finish every exchange while 100 hostile connections send garbage, random lengths,
/// slow-loris trickles, half-open connections and floods of wrong passwords; the server's
/// peak memory grows by no more than its limits allow. `scripts/hostile-load.sh 10` runs it
/// ten times in a row (README, "Hardening").
@Suite(.serialized)
struct HostileLoadTests {
    static let maxFrameBytes = 65_536
    static let honestClients = 1_000
    static let iterations = 2
    /// The scrypt cost the server runs at: 2^14 × 8 × 128 bytes = 16 MiB per password check.
    static let scryptLogN = 14

    /// The hostile connections, 20 of each kind.
    enum Hostile: String, CaseIterable, Sendable {
        case garbage, randomLengths, slowLoris, halfOpen, wrongPasswords
    }

    /// What the hostile side saw, for the figures.
    final class Tally: Sendable {
        let attempts = Mutex<[Hostile: Int]>([:])
        let refusals = Mutex<[String: Int]>([:])

        func attempted(_ kind: Hostile) { self.attempts.withLock { $0[kind, default: 0] += 1 } }
        func refused(_ code: String) { self.refusals.withLock { $0[code, default: 0] += 1 } }
    }

    @Test("1,000 honest clients finish every exchange while 100 hostile connections attack lab serve")
    func honestClientsFinishUnderHostileLoad() async throws {
        let (server, address) = try await LabProcess.serve([
            "--suites", "x25519", "--max-frame-bytes", "\(Self.maxFrameBytes)", "--idle-timeout", "20 s",
            "--frame-timeout", "2 s", "--kdf", "scrypt", "--scrypt-log-n", "\(Self.scryptLogN)", "--log-level", "info",
        ])
        defer { server.terminate() }
        let port = address.port
        try await Self.register(port: port, username: "victim")

        let quiet = try await Self.honestRun(port: port)
        let peakQuiet = try Self.peakResident(server.pid)

        let done = TransportConformance.Counter()
        let tally = Tally()
        let attacked = try await withThrowingTaskGroup(of: RunResult?.self) { group in
            for (index, kind) in Hostile.allCases.flatMap({ Array(repeating: $0, count: 20) }).enumerated() {
                group.addTask {
                    var random = SplitMix64(state: UInt64(index) &* 7_919)
                    // Bounded in count, and over once the honest run is.
                    for _ in 0..<2_000 where done.count == 0 {
                        tally.attempted(kind)
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
        // Every kind of attack ran, and the server refused each the way it should.
        let attempts = tally.attempts.withLock { $0 }
        for kind in Hostile.allCases {
            #expect(attempts[kind, default: 0] >= 20, "\(kind) ran \(attempts[kind, default: 0]) times")
        }
        let log = server.errors
        for reason in ["frameTooLarge", "still arriving"] {
            #expect(log.contains(reason), "the server logged no '\(reason)' close")
        }
        let refusals = tally.refusals.withLock { $0 }
        #expect(refusals["badCredentials", default: 0] >= 1, "wrong passwords were refused: \(refusals)")
        #expect(refusals["ok", default: 0] == 0, "no wrong password was accepted")

        // Per-connection limits bound what 100 hostile connections can make the server hold:
        // a frame buffer each (the frame limit, and as much again for the buffer's growth),
        // and one scrypt check per password-check worker at a time; 32 MiB on top for
        // everything else.
        let workers = MessagingOptions.defaultKDFWorkers
        let bound = 100 * 2 * Self.maxFrameBytes + workers * (128 * 8 << Self.scryptLogN) + (32 << 20)
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
        print(
            """
            hostile load: honest exchange p99 \(p99(quiet)) quiet, \(p99(attacked)) under attack; \
            lab serve peak resident \(peakQuiet >> 20) MiB quiet, \(peakAttacked >> 20) MiB under attack \
            (bound +\(bound >> 20) MiB); attacks \(attempts.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", ")); \
            refusals \(refusals.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
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

    /// Registers `username` with a password nobody else knows.
    static func register(port: Int, username: String) async throws {
        let endpoint = try await TCPTransport(options: TransportOptions()).remote(host: "127.0.0.1", port: port)
        var none = NoStepRecorder()
        let connection = try await endpoint.connect(recorder: &none)
        var user = MessagingUser(username: username, password: "the victim's own password")
        _ = try await user.register(MessagingClient(connection: connection), recorder: &none).get()
        await connection.close()
    }

    /// The server process's peak resident memory (`VmHWM`), in bytes.
    static func peakResident(_ pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kib = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { throw LabError(.unsupported, "no VmHWM in /proc/\(pid)/status") }
        return kib << 10
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
            _ = try await Self.raw(port: port, hangUp: Bool.random(using: &random)) {
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
            _ = try await Self.raw(port: port, hangUp: Bool.random(using: &random)) { try await $0.write(frame) }
        case .slowLoris:
            // A byte every 100 ms, never idle, never a whole frame: the 2 s frame timeout ends it.
            _ = try await Self.raw(port: port) { outbound in
                var header = ByteBuffer()
                header.writeInteger(UInt32(1_000), endianness: .big)
                try await outbound.write(header)
                for _ in 0..<100 where done.count == 0 {
                    try await Task.sleep(for: .milliseconds(100))
                    do { try await outbound.write(ByteBuffer(bytes: [0x2A])) } catch { return }
                }
            }
        case .halfOpen:
            // Half a header, then silence: the peer that vanished without a word. The idle
            // timeout (20 s) ends it, unless the honest run is over first.
            _ = try await Self.raw(port: port, limit: .seconds(25)) { try await $0.write(ByteBuffer(bytes: [0, 0])) }
        case .wrongPasswords:
            let endpoint = try await TCPTransport(options: TransportOptions()).remote(host: "127.0.0.1", port: port)
            var none = NoStepRecorder()
            let connection = try await endpoint.connect(recorder: &none)
            let client = MessagingClient(connection: connection)
            // The registered victim (postponed, then locked), or a name that does not exist
            // (the server spends a decoy password check on it all the same).
            let name = Bool.random(using: &random) ? "victim" : "nobody\(UInt16.random(in: 0...999, using: &random))"
            var user = MessagingUser(username: name, password: "not the password \(random.next())")
            for _ in 0..<5 where done.count == 0 {
                do {
                    let captcha = try await user.solveCaptcha(client, recorder: &none)
                    switch try await user.login(client, captcha: captcha, recorder: &none) {
                    case .success: tally.refused("ok")
                    case .failure(let failure): tally.refused(failure.code.rawValue)
                    }
                } catch {
                    tally.refused("connection: \(error)")
                    break
                }
            }
            await connection.close()
        }
    }

    /// A raw connection's script; a connection the server ended under it is the expected end.
    static func raw(
        port: Int,
        limit: Duration = .seconds(10),
        hangUp: Bool = false,
        _ script: @escaping @Sendable (NIOAsyncChannelOutboundWriter<ByteBuffer>) async throws -> Void
    ) async throws -> RawPeer.Outcome? {
        do {
            return try await RawPeer.run(port: port, limit: limit, hangUp: hangUp, script)
        } catch let error as ChannelError where error == .ioOnClosedChannel || error == .alreadyClosed {
            return nil
        } catch is IOError {
            // Reset by the server mid-write.
            return nil
        }
    }
}
