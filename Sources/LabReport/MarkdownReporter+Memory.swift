import LabCharts
import LabCore
public import LabResults

extension MarkdownReporter {
    /// The Memory section: the heap before the clients, with all of them connected and at the
    /// end of the measured phase, and what that makes per client, per exchange and per server
    /// connection; nothing when the run did not measure its heap.
    static func memory(_ result: RunResult) -> [String] {
        guard let memory = result.memory else { return [] }
        var lines = [
            "## Memory", "",
            "This process's heap as \(Self.cell(memory.allocator)) counts it: live bytes (`stats.allocated`, after an"
                + " `epoch` refresh) and allocation requests (`nrequests`, small + large, all arenas).",
            "",
            "| | |", "|:--|--:|",
            "| Heap before the clients were prepared | \(Self.bytes(Double(memory.beforeClients.allocated))) |",
        ]
        if let ready = memory.clientsReady {
            lines.append("| Heap with every client connected and set up | \(Self.bytes(Double(ready.allocated))) |")
        }
        if let end = memory.measuredEnd {
            lines.append("| Heap at the end of the measured phase | \(Self.bytes(Double(end.allocated))) |")
        }
        if memory.clients > 0 {
            lines += Self.clientRows(memory)
        }
        if let server = memory.server {
            lines.append(
                "| **Server heap per connection** (its growth ÷ \(Numbers.integer(server.connections)) connections) | "
                    + "\(Self.bytes(server.heapPerConnection)) |"
            )
            lines.append(
                "| Server heap: before the clients → all connected | \(Self.bytes(Double(server.before.allocated)))"
                    + " → \(Self.bytes(Double(server.ready.allocated))) |"
            )
        }
        lines.append("")
        var notes: [String] = []
        if !memory.clientsWaited {
            notes.append(
                "The clients did not wait for each other once connected (only the idle model does), so the"
                    + " per-client figure includes what the first clients' iterations had allocated by then."
            )
        }
        if memory.clients > 0, result.metadata.serverSide == nil, memory.server == nil {
            notes.append(
                "The lab ran the server in this process: the per-client figure holds both ends of each connection."
            )
        }
        if let note = memory.serverNote { notes.append("Server heap: \(Self.cell(note)).") }
        for note in notes { lines += [note, ""] }
        return lines
    }

    /// The rows about the clients: per client and per exchange.
    private static func clientRows(_ memory: RunMemory) -> [String] {
        var lines: [String] = []
        let clients = "\(Numbers.integer(memory.clients)) client\(memory.clients == 1 ? "" : "s")"
        let exchanges = "\(Numbers.integer(memory.exchanges)) exchange\(memory.exchanges == 1 ? "" : "s")"
        if memory.firstClient != nil {
            let others = memory.clients - 1
            lines.append(
                "| **Heap per client** (growth from the first client ready to every client ready ÷ "
                    + "\(Numbers.integer(others)) other\(others == 1 ? "" : "s")) | \(Self.bytes(memory.heapPerClient)) |"
            )
            lines.append("| Set-up the first client paid once (its growth beyond the others') | "
                + "\(Self.bytes(memory.heapFixedCost)) |")
        } else {
            lines.append(
                "| **Heap per client** (growth to every client ready ÷ \(clients)) | \(Self.bytes(memory.heapPerClient)) |"
            )
        }
        lines.append(
            "| Allocations per exchange (measured phase ÷ \(exchanges)) | "
                + (memory.allocationsPerExchange.map { Numbers.fixed($0, 1, grouped: true) } ?? "—") + " |"
        )
        lines.append("| Heap growth per exchange (measured phase) | \(Self.bytes(memory.heapGrowthPerExchange)) |")
        return lines
    }

    /// One line for a terminal: `heap 5.1 KiB per client, 312.0 allocations and 40 B per exchange;
    /// server 9.2 KiB per connection`; nil when the run did not measure its heap.
    public static func memorySummary(_ result: RunResult) -> String? {
        guard let memory = result.memory else { return nil }
        // One client: no other to tell its own cost from the set-up it paid first.
        var line = memory.heapPerClient.map { "heap \(Self.bytes($0)) per client" } ?? "heap per client not measured (one client)"
        if let allocations = memory.allocationsPerExchange {
            line +=
                ", \(Numbers.fixed(allocations, 1, grouped: true)) allocations and"
                + " \(Self.bytes(memory.heapGrowthPerExchange)) per exchange"
        }
        if let server = memory.server {
            line +=
                "; server \(Self.bytes(server.heapPerConnection)) per connection (\(Numbers.integer(server.connections)))"
        } else if let note = memory.serverNote {
            line += "; server heap \(note)"
        }
        return line
    }

    /// `12.3 KiB`, `512 B`, `-1.5 MiB`; `—` for no value.
    static func bytes(_ value: Double?) -> String {
        guard let value, value.isFinite else { return "—" }
        let units = ["B", "KiB", "MiB", "GiB"]
        var scaled = value
        var unit = 0
        while abs(scaled) >= 1024, unit < units.count - 1 {
            scaled /= 1024
            unit += 1
        }
        return Numbers.fixed(scaled, unit == 0 ? 0 : 1) + " " + units[unit]
    }
}
