import Foundation
import LabCore

/// What tests read of a server process from /proc, and a bounded wait for a condition that
/// no event signals (a peer's socket state).
public enum ProcessFigures {
    /// The process's peak resident memory (`VmHWM`), in bytes.
    public static func peakResident(_ pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kib = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { throw LabError(.unsupported, "no VmHWM in /proc/\(pid)/status") }
        return kib << 10
    }

    /// Waits until `condition` holds, checking every 100 ms, for at most `limit`; whether it did.
    public static func until(_ limit: Duration, _ condition: () -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + limit
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            try await Task.sleep(for: .milliseconds(100))
        }
        return true
    }
}
