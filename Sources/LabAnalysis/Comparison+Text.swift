import Foundation
import Histogram
import LabCharts
import LabCore
import LabResults

/// What a comparison concluded, asked of it and said in words.
extension Comparison {
    /// Whether candidate `index` shares no step with the baseline: no group matched, so
    /// nothing was compared.
    public func comparesNothing(candidate index: Int) -> Bool {
        self.rows.allSatisfy { $0.cells[index].verdict == .missing }
    }

    /// Whether nothing of candidate `index` could be judged: the machine changed.
    public func isUnjudged(candidate index: Int) -> Bool {
        self.machineChanged[index] != nil && !self.judgesDespiteMachineChange
    }

    /// Whether candidate `index` got slower: a step, or the run as a whole.
    public func isSlower(candidate index: Int) -> Bool {
        self.common[index].verdict == .slower || self.rows.contains { $0.cells[index].verdict == .slower }
    }
    /// `cx x25519 swift-crypto · sign`, or with fields `across`, only what both sides share:
    /// `cx x25519 · sign`.
    public func rowLabel(_ row: Row) -> String {
        let key = row.key
        guard !self.across.isEmpty else {
            return "\(key.flow) \(key.suite) \(key.provider) · \(row.step.name)"
        }
        var parts = [row.flowKind.isEmpty ? key.flow : row.flowKind]
        if !self.across.contains("suite"), key.suite != "-" { parts.append(key.suite) }
        if !self.across.contains("provider") { parts.append(key.provider) }
        if !self.across.contains("transport") { parts.append(key.transport) }
        return parts.joined(separator: " ") + " · \(row.step.name)"
    }

    /// The verdict of candidate `index` on `row` in words, the slower side first:
    /// `openssl ×1.77 slower than swift-crypto: cx x25519 · exchange.work (p50)`; nil when
    /// the row is not a change.
    public func sentence(_ row: Row, candidate index: Int) -> String? {
        let cell = row.cells[index]
        guard cell.verdict.isChange, let move = cell.leadingMove else { return nil }
        let candidateSlower = cell.verdict == .slower
        let (slower, faster) =
            candidateSlower
            ? (self.candidates[index].sentenceName, self.baseline.sentenceName)
            : (self.baseline.sentenceName, self.candidates[index].sentenceName)
        let ratio = cell.columnRatio(move.figure) ?? move.ratio
        // Times grow when slower, rates shrink.
        let factor = (move.figure == .ops) == candidateSlower ? 1 / ratio : ratio
        let measure = row.measure == .cpu ? ", CPU time" : ""
        var text = "\(slower) ×\(Numbers.fixed(factor, 2)) slower than \(faster): \(self.rowLabel(row)) (\(move.figure.rawValue)\(measure))"
        if abs(move.ratio - ratio) > 0.0005 {
            let relative = (move.figure == .ops) == candidateSlower ? 1 / move.ratio : move.ratio
            text += ", ×\(Numbers.fixed(relative, 2)) against the run's common factor"
        }
        return text
    }

    /// What candidate `index`'s run differs in from the baseline's besides the code:
    /// `transport: in-process vs tcp`; empty when alike. Any of these can explain a verdict.
    public func differences(candidate index: Int) -> [String] {
        let one = self.baseline.result.metadata
        let other = self.candidates[index].result.metadata
        var found: [String] = []
        func note(_ what: String, _ first: String, _ second: String) {
            if first != second { found.append("\(what): \(first) vs \(second)") }
        }
        note("scenario", one.scenario, other.scenario)
        note("transport", one.transport, other.transport)
        note("load model", String(one.load.prefix { $0 != "," }), String(other.load.prefix { $0 != "," }))
        note("clients", String(one.clients), String(other.clients))
        note("host", one.machine.hostname, other.machine.hostname)
        note("cores", String(one.machine.cores), String(other.machine.cores))
        note("build", one.build, other.build)
        return found
    }

    /// Per candidate, the rows it calls slower or faster.
    public func changes(candidate: Int) -> [Row] {
        self.rows.filter { $0.cells[candidate].verdict.isChange }
    }
}
