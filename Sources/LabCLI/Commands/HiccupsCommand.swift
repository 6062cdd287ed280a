import ArgumentParser
import Foundation
import LabCore
import LabResults
import LabScenario

/// `lab hiccups`: how often this machine stops a busy thread, and whether the guest sees it.
struct HiccupsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hiccups",
        abstract: "Measure how often this machine stops a busy thread for 5 µs or more, and what the guest saw of it.",
        discussion: """
            Runs a loop that only reads the clock and touches memory on --threads threads (one per \
            core, pinned, by default) and sorts every gap of 5 µs or more by what the guest's kernel \
            saw over it: a context switch, an interrupt, or nothing. Gaps nobody saw are the host's \
            (on a virtual machine) or the hardware's: a step's sample cannot be marked preempted for \
            them, so they set the tail of any step long enough to catch them. The last lines say from \
            which step length on a p99 and a p99.9 are such gaps rather than the step's work \
            (docs/performance.md, "Hiccups"). Interrupts are counted as root; otherwise their gaps \
            count as unseen.
            """
    )

    @Option(help: "Seconds to measure (at most 600).")
    var seconds = 5.0

    @Option(help: "Threads measured at once (default: one per core).")
    var threads: Int?

    @Flag(help: "Leave the threads where the scheduler puts them instead of pinning thread k to CPU k.")
    var unpinned = false

    @Option(
        name: .customLong("working-set"),
        help:
            "Memory each thread reads and writes at random between two readings of the clock (64 B to 1 GiB; e.g. 64KiB, 16MiB)."
    )
    var workingSet = "64KiB"

    @Flag(help: "Print the figures as JSON.")
    var json = false

    func validate() throws {
        guard self.seconds > 0, self.seconds <= 600 else {
            throw ValidationError("--seconds must be above 0 and at most 600")
        }
        if let threads = self.threads, !(1...256).contains(threads) {
            throw ValidationError("--threads must be from 1 to 256")
        }
        _ = try self.workingSetBytes()
    }

    private func workingSetBytes() throws -> UInt64 {
        let text = self.workingSet.trimmingCharacters(in: .whitespaces)
        let digits = text.prefix { $0.isNumber || $0 == "." }
        let unit = text.dropFirst(digits.count).trimmingCharacters(in: .whitespaces)
        guard let value = Double(digits), let scale = ByteSize.scale(of: unit), value * scale >= 64,
            value * scale <= 1_073_741_824
        else {
            throw ValidationError(
                "--working-set must be a size from 64 B to 1 GiB, a number with an optional unit ("
                    + ByteSize.units.map(\.name).joined(separator: ", ") + "), not '\(self.workingSet)'"
            )
        }
        return UInt64(value * scale)
    }

    func run() async throws {
        try await reportingErrors {
            let cores = ProcessInfo.processInfo.activeProcessorCount
            let threads = self.threads ?? cores
            let hiccups = try Hiccups.measure(
                threads: threads,
                seconds: self.seconds,
                pinned: !self.unpinned,
                workingSetBytes: try self.workingSetBytes()
            )
            if self.json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                print(String(decoding: try encoder.encode(hiccups), as: UTF8.self))
            } else {
                print(HiccupsText.render(hiccups, pinned: !self.unpinned, cores: cores), terminator: "")
            }
        }
    }
}

/// The text `lab hiccups` prints.
enum HiccupsText {
    static let labels: [Hiccups.Cause: String] = [
        .switched: "context switch",
        .interrupted: "interrupt",
        .unseen: "nothing (unseen)",
    ]

    static func render(_ hiccups: Hiccups, pinned: Bool, cores: Int) -> String {
        let seconds = Double(hiccups.nanoseconds) / 1e9
        var text = "Hiccups of \(hiccups.threads) busy thread\(hiccups.threads == 1 ? "" : "s")"
        text += pinned ? " (thread k pinned to CPU k of \(cores))" : " (unpinned, \(cores) cores)"
        text += String(format: ", %.1f s of running in all", seconds)
        text += ", \(Self.size(hiccups.workingSetBytes)) working set each"
        text +=
            hiccups.interruptsCounted
            ? "; interrupts counted.\n" : "; interrupts NOT counted (not root): theirs count as unseen.\n"
        text += String(
            format:
                "The loop read the clock every %.3f µs on average; a gap is a longer wait between two readings.\n\n",
            seconds * 1e6 / Double(max(1, hiccups.readings))
        )
        let headers = ["5–10 µs", "10–20", "20–50", "50–100", "0.1–1 ms", "≥ 1 ms"]
        text +=
            "| What the guest saw | " + headers.joined(separator: " | ")
            + " | per s (≥ 10 µs) | time lost | longest |\n"
        text += "|:--|" + String(repeating: "--:|", count: headers.count + 3) + "\n"
        for cause in Hiccups.Cause.allCases {
            let tally = hiccups[cause]
            let share = hiccups.nanoseconds == 0 ? 0 : Double(tally.nanoseconds) / Double(hiccups.nanoseconds) * 100
            text += "| \(labels[cause]!) | " + tally.counts.map { String($0) }.joined(separator: " | ")
            text += String(
                format: " | %.1f | %.3f%% | %.1f µs |\n",
                hiccups.rate(cause, atLeast: 10_000),
                share,
                Double(tally.longest) / 1e3
            )
        }
        text += "\n"
        for floor: UInt64 in [10_000, 50_000] {
            let rate = hiccups.rate(.unseen, atLeast: floor)
            text += String(
                format: "Unseen gaps of %d µs or more: %.1f per second of running.",
                Int(floor / 1_000),
                rate
            )
            if let p99 = hiccups.unseenTailLength(share: 0.01, atLeast: floor),
                let p999 = hiccups.unseenTailLength(share: 0.001, atLeast: floor)
            {
                text += " A step's p99.9 is such a gap, not the step's work, once the step runs "
                text +=
                    TimeSpan.format(nanoseconds: Double(p999)) + " or more; its p99 from "
                    + TimeSpan.format(nanoseconds: Double(p99)) + ".\n"
            } else {
                text += "\n"
            }
        }
        return text
    }

    /// `64 KiB`, `16 MiB`, or bytes when not a whole number of either.
    static func size(_ bytes: UInt64) -> String {
        if bytes >= 1_048_576, bytes % 1_048_576 == 0 { return "\(bytes / 1_048_576) MiB" }
        if bytes >= 1_024, bytes % 1_024 == 0 { return "\(bytes / 1_024) KiB" }
        return ByteSize.format(Double(bytes))
    }
}
