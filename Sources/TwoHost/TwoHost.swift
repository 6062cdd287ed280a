import ArgumentParser
import CLabTwoHost
import Foundation
import UnixSignals

/// `two-host`: the two-host lab on one machine.
///
/// Host A (`lab serve`, advertised by DNS-SD) and host B (`lab run`, which discovers A) in two
/// network namespaces joined by a veth pair, each with its own D-Bus system bus and
/// avahi-daemon; then the same load on host B alone over loopback (the single-host baseline);
/// then `lab compare` of the two runs. `scripts/two-host-net.sh` makes and removes the
/// namespaces; this tool runs the lab in them and tears everything down on any exit.
@main
struct TwoHost: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "two-host",
        abstract: "Run the two-host lab on one machine (as root) and compare it with one host.",
        discussion: """
            Needs: ip and tc (iproute2), unshare, nsenter and mountpoint (util-linux), \
            dbus-daemon and dbus-send (dbus), avahi-daemon, timeout (coreutils); to shape the \
            link, ethtool, and where the kernel has no netem nft (nftables) for loss and \
            iptables with link-delay (built beside this tool) for delay. A condition this \
            machine cannot apply is refused before anything is made, naming what it lacks.
            Exit status: 0 success; 1 failure (the reason is on stderr); 2 bad usage; \
            128+N interrupted by signal N (130 SIGINT, 143 SIGTERM, 129 SIGHUP), 141 when \
            the reader of its output went away. Everything the run made is torn down first.
            """
    )

    @Option(help: "The lab binary (default: lab beside this tool).")
    var lab: String?

    @Option(help: "Where the reports go (default: Reports/two-host/<UTC timestamp> in the repository).")
    var out: String?

    @Flag(help: "Also keep the daemons' and lab's logs in <out>/logs (always kept on failure).")
    var keepLogs = false

    @Option(
        help: "Delay on each end, e.g. 20ms (a round trip meets it twice): netem, else link-delay (environment: TWO_HOST_DELAY)."
    )
    var delay: String?

    @Option(help: "Jitter of that delay, e.g. 5ms: each packet's delay uniform in delay ± jitter (environment: TWO_HOST_JITTER).")
    var jitter: String?

    @Flag(help: "Let jitter reorder packets, as netem's does (default: the link keeps their order).")
    var reorder = false

    @Option(
        help: ArgumentHelp(
            "What delays packets: netem, or queue (link-delay behind iptables' NFQUEUE); default netem where the kernel has it and order allows (environment: TWO_HOST_DELAY_BY).",
            valueName: "netem|queue"
        )
    )
    var delayBy: String?

    @Option(
        help: "Packets lost at random on each end, e.g. 5%: netem, else nftables (environment: TWO_HOST_LOSS)."
    )
    var loss: String?

    @Option(help: "Rate on each end, e.g. 100mbit: netem, else tbf (environment: TWO_HOST_RATE).")
    var rate: String?

    @Option(help: "Both ends' MTU in bytes, 576 to 9000 (environment: TWO_HOST_MTU).")
    var mtu: String?

    @Option(
        help: ArgumentHelp(
            """
            Sweep the loss: run Scenarios/two-host/sweep.json and sweep-tls.json once per loss, each on \
            a fresh link with the other conditions, then chart each suite's exchange and each TLS group's \
            handshake against it, e.g. 0%,1%,2%,5%,10%,15%,20%.
            """,
            valueName: "losses"
        )
    )
    var sweepLoss: String?

    @Option(
        help: ArgumentHelp(
            """
            Sweep the delay (each end's, so the RTT is twice it), alone or with --sweep-loss (every delay \
            at every loss), a fresh link per point, e.g. 0ms,15ms.
            """,
            valueName: "delays"
        )
    )
    var sweepDelay: String?

    @Option(help: "With --sweep-loss: TLS handshakes per group at each point, 1 to 1000 (default: sweep-tls.json's 300).")
    var handshakes: Int?

    @Option(help: "With a sweep: cx exchanges per client at each point and in the baseline, 1 to 1000 (default: sweep.json's 180).")
    var exchanges: Int?

    @Flag(help: "With a sweep: no single-host baseline (sweep.md then has no baseline section): a quicker look at the link alone.")
    var noBaseline = false

    @Option(help: "The repository: its Scenarios/two-host and scripts (default: found from here or from this tool).")
    var repository: String?

    /// Parses, then runs. A usage error exits 2, as documented, not ArgumentParser's 64.
    static func main() async {
        let command: TwoHost
        do {
            command = try Self.parse()
        } catch {
            guard Self.exitCode(for: error) == .validationFailure else { Self.exit(withError: error) }
            FileHandle.standardError.write(Data((Self.fullMessage(for: error) + "\n").utf8))
            Self.exit(withError: ExitCode(2))
        }
        Self.exit(withError: ExitCode(await command.perform()))
    }

    /// Runs the lab until its end, a failure, a signal or the reader's leaving, then tears
    /// down; returns the exit status.
    func perform() async -> Int32 {
        // A write to a reader that is gone must fail (and end the run with its teardown),
        // not kill the process.
        signal(SIGPIPE, SIG_IGN)
        // The link's holders outlive the script that starts them: they become this tool's
        // children, which it reaps at teardown (`TwoHostRun.reapHolders`).
        _ = c_lab_become_subreaper()
        let (readerGone, reportGone) = AsyncStream<Int32>.makeStream()
        let output = Output { reportGone.yield(SIGPIPE) }
        let settings: Settings
        do {
            settings = try Settings(self)
        } catch {
            output.error("\(error)")
            return 1
        }
        let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm, .sighup)
        let run = TwoHostRun(settings, output: output)
        let end = await withTaskGroup(of: RunEnd.self) { group in
            group.addTask {
                do {
                    if settings.sweeps { try await run.sweep() } else { try await run.perform() }
                    return .finished
                } catch {
                    return .failed("\(error)")
                }
            }
            group.addTask {
                for await signal in signals { return .interrupted(signal.rawValue) }
                return .cancelled
            }
            group.addTask {
                for await number in readerGone { return .interrupted(number) }
                return .cancelled
            }
            let first = await group.next() ?? .cancelled
            group.cancelAll()
            while await group.next() != nil {}
            return first
        }
        switch end {
        case .finished:
            await run.teardown(failed: false)
            return 0
        case .failed(let reason):
            output.error(reason)
            await run.teardown(failed: true)
            return 1
        case .interrupted(let number):
            let name = [SIGINT: "INT", SIGTERM: "TERM", SIGHUP: "HUP", SIGPIPE: "PIPE"][number] ?? "\(number)"
            output.note("interrupted by SIG\(name): tearing down")
            await run.teardown(failed: true)
            return 128 + number
        case .cancelled:
            await run.teardown(failed: true)
            return 1
        }
    }
}

/// How a run ended, before its teardown.
enum RunEnd: Sendable {
    case finished
    case failed(String)
    case interrupted(Int32)
    case cancelled
}
