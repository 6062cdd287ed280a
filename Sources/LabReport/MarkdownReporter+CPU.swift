import LabCharts
import LabCore
public import LabResults

extension MarkdownReporter {
    /// The Summary's CPU rows: the lab's process per iteration and how busy its cores were,
    /// and a server elsewhere's per request.
    static func cpuRows(_ result: RunResult) -> [(String, String)] {
        guard let cpu = result.cpu else { return [] }
        var rows: [(String, String)] = []
        if let text = Self.processCPU(cpu) {
            rows.append((cpu.includesServer ? "CPU (clients and server)" : "CPU (clients)", text))
        }
        if let server = cpu.server, let text = Self.serverCPU(server) { rows.append(("CPU (server)", text)) }
        return rows
    }

    /// `412.5 µs per iteration (user 380.1, system 32.4), 96% of 2 cores ⚠️ saturated`.
    public static func processCPU(_ cpu: RunCPU) -> String? {
        guard cpu.iterations > 0 else { return nil }
        var text = Self.perUnit(cpu.process, over: cpu.iterations, "iteration")
        if let share = cpu.share, let cores = cpu.cores {
            text += ", \(Int((share * 100).rounded()))% of \(cores) cores"
            if let demand = cpu.demand, demand - share >= 0.005 {
                text += " (\(Int(((demand - share) * 100).rounded()))% more waiting for one)"
            }
        }
        if cpu.saturated { text += " ⚠️ saturated" }
        return text
    }

    /// `1,204.3 µs per request answered (user …, system …), 48% of 2 cores, over 1,020 requests …`.
    public static func serverCPU(_ server: RunCPU.Server) -> String? {
        guard server.requests > 0 else { return nil }
        var text = Self.perUnit(server.process, over: server.requests, "request answered")
        if let share = server.share { text += ", \(Int((share * 100).rounded()))% of \(server.cores) cores" }
        text += ", over \(Numbers.integer(server.requests)) requests from every client it served"
        return text
    }

    /// `412.5 µs per <unit> (user 380.1, system 32.4)`.
    private static func perUnit(_ cpu: ProcessCPU, over count: UInt64, _ unit: String) -> String {
        func micros(_ nanoseconds: UInt64) -> String {
            Numbers.fixed(Double(nanoseconds) / 1_000 / Double(count), 1, grouped: true)
        }
        return "\(micros(cpu.totalNanoseconds)) µs per \(unit) (user \(micros(cpu.userNanoseconds)), "
            + "system \(micros(cpu.systemNanoseconds)))"
    }
}
