import Histogram
import LabCore
import LabResults

/// One line of a report: a group's step and its figures.
struct ReportRow {
    /// The group the row belongs to.
    var group: GroupResult
    /// The step.
    var step: Step
    /// The step's figures.
    var statistics: StepStatistics
}

extension RunResult {
    /// The rows every tabular report shows: groups in order, each group's steps in report order.
    ///
    /// A group that measured nothing (every iteration failed before a step finished) still gets one
    /// `exchange` row with a count of zero, so its errors are not lost from the tables.
    func rows(of group: GroupResult) -> [ReportRow] {
        let rows = group.orderedSteps.compactMap { entry in
            self.statistics(group, entry.step).map { ReportRow(group: group, step: entry.step, statistics: $0) }
        }
        guard rows.isEmpty else { return rows }
        let empty = StepStatistics(Histogram<UInt64>(), errors: group.errorCount, window: self.measuredNanoseconds)
        return [ReportRow(group: group, step: .exchange, statistics: empty)]
    }

    /// Every row of every group.
    var rows: [ReportRow] { self.groups.flatMap { self.rows(of: $0) } }

    /// The figures throughput is read from: the group's `exchange` step, or its last step if it has none.
    func throughputRow(of group: GroupResult) -> ReportRow? {
        let rows = self.rows(of: group)
        return rows.first { $0.step == .exchange } ?? rows.last
    }
}
