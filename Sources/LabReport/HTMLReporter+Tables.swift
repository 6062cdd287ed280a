import Foundation
import LabAnalysis
import LabCharts
import LabCore
import LabResults
import Plot

// report.html's tables: the in-run comparisons and each group's steps.
extension HTMLReporter {
    // MARK: Comparisons

    /// Each pair of groups that differ in one thing: the exchange in a sentence, then a row per
    /// shared step.
    static func comparisons(_ pairs: [InRunComparison.Pair]) -> Node<HTML.BodyContext> {
        .section(
            .id("comparisons"),
            .h2("Comparisons within the run"),
            .p(
                .text(
                    "Groups that differ in one thing, compared as lab compare compares runs: the p50 ratio, a two-sided"
                        + " Mann–Whitney U test over both histograms, and a verdict when p < \(InRunComparison.alpha) and the"
                        + " p50 moved beyond the noise floor (10%, 25% for a step under 100 µs). The ratio is the Hodges–Lehmann"
                        + " estimate (candidate ÷ baseline) with its 95% interval from the same test. The groups shared one"
                        + " process, so no common factor is taken out, and ops/s is not judged: it follows the flows' weights."
                )
            ),
            .unwrap(pairs.first?.basisNote) { note in
                .p(.class("basis"), .strong("What is judged. "), .text(MarkdownReporter.capitalized(note) + "."))
            },
            .ul(
                .class("verdicts"),
                .forEach(pairs) { pair in
                    .li(
                        .class("verdict \(Self.verdictClass(pair.whole?.row.cells[0].verdict))"),
                        .text(pair.sentence ?? "")
                    )
                }
            ),
            .forEach(pairs) { pair in
                .details(
                    .class("comparison"),
                    .attribute(named: "data-baseline", value: HTMLReporter.attributeValue(pair.baseline.description)),
                    .attribute(named: "data-candidate", value: HTMLReporter.attributeValue(pair.candidate.description)),
                    .summary(
                        .text("\(pair.candidateValue) against \(pair.baselineValue)"),
                        .span(.class("sub"), .text(" · \(pair.context) · differs in \(pair.dimension) · every step"))
                    ),
                    .unwrap(pair.sentence) { sentence in
                        .p(.class("verdict \(Self.verdictClass(pair.whole?.row.cells[0].verdict))"), .text(sentence))
                    },
                    .div(.class("scroll"), Self.comparisonTable(pair))
                )
            }
        )
    }

    static func verdictClass(_ verdict: Comparison.Verdict?) -> String {
        switch verdict {
        case .slower: "slower"
        case .faster: "faster"
        default: "same"
        }
    }

    private static func comparisonTable(_ pair: InRunComparison.Pair) -> Node<HTML.DetailsContext> {
        let rows = Array(zip(pair.comparison.rows, pair.estimates))
        let baselineUnit = ColumnUnit.time(rows.map(\.0.baseline.p50))
        return .table(
            .class("sortable"),
            .attribute(named: "data-table", value: "comparison"),
            .thead(
                .tr(
                    .th("Step"),
                    .th(.text("\(pair.baselineValue) p50 (\(baselineUnit.name))")),
                    .th(.text("\(pair.candidateValue) p50 (\(baselineUnit.name))")),
                    .th("p50 ratio"),
                    .th("Ratio (HL)"),
                    .th("95% CI"),
                    .th("p"),
                    .th("Verdict")
                )
            ),
            .tbody(
                .forEach(rows) { row, estimate in
                    let cell = row.cells[0]
                    return .tr(
                        .attribute(named: "data-step", value: HTMLReporter.attributeValue(row.step.name)),
                        .class(Self.verdictClass(cell.verdict)),
                        .td(.text(row.step.name)),
                        Self.numberCell(row.baseline.p50, baselineUnit),
                        Self.numberCell(cell.statistics?.p50, baselineUnit),
                        Self.numberCell(cell.p50Ratio, .ratio),
                        Self.numberCell(estimate?.ratio, .ratio),
                        .td(
                            .class("num"),
                            .text(
                                estimate.map {
                                    "\(InRunComparison.Pair.fixed($0.lower))–\(InRunComparison.Pair.fixed($0.upper))"
                                } ?? "–"
                            )
                        ),
                        Self.numberCell(cell.pValue, .pValue),
                        .td(
                            .text(
                                cell.moves.isEmpty
                                    ? cell.verdict.rawValue : "\(cell.verdict.rawValue): \(cell.movesText)"
                            )
                        )
                    )
                }
            )
        )
    }

    // MARK: Groups

    /// Each flow's groups: a line of what the group did, then a table of its steps.
    static func flows(_ result: RunResult) -> Node<HTML.BodyContext> {
        var flows: [String] = []
        for group in result.groups where !flows.contains(group.key.flow) { flows.append(group.key.flow) }
        return .section(
            .id("flows"),
            .h2("Steps"),
            .p(
                .text(
                    "Each table's times are in one unit, named in its headings. “own ops/s” is the group's rate at"
                        + " the run's concurrency: the mean number of exchanges under way (Little's law: busy time ÷"
                        + " measured time) ÷ the group's mean exchange time."
                        + " “ops/s” is the group's share of the run's throughput, which follows the weights. Click a heading to sort."
                )
            ),
            .forEach(flows) { flow in
                .group(
                    .h3(.text("Flow \(flow)")),
                    .forEach(result.groups.filter { $0.key.flow == flow }) { group in Self.groupTable(result, group) }
                )
            }
        )
    }

    /// The columns of a group's table: heading, how to read the figure, its unit's kind.
    private static var columns: [(name: String, figure: (StepStatistics) -> Double?, time: Bool)] {
        [
            ("Count", { Double($0.count) }, false), ("Errors", { Double($0.errors) }, false),
            ("Min", { $0.min }, true), ("p50", { $0.p50 }, true), ("p90", { $0.p90 }, true), ("p95", { $0.p95 }, true),
            ("p99", { $0.p99 }, true), ("p99.9", { $0.p999 }, true), ("Max", { $0.max }, true),
            ("Mean", { $0.mean }, true),
            ("ops/s", { $0.opsPerSecond }, false),
        ]
    }

    private static func groupTable(_ result: RunResult, _ group: GroupResult) -> Node<HTML.BodyContext> {
        let rows = result.rows(of: group)
        // One unit for the table's times, chosen as report.md chooses it for the same table.
        let time = ColumnUnit.time(rows.map(\.statistics.p50))
        let units = Self.columns.map { $0.time ? time : ColumnUnit.count }
        let label = MarkdownReporter.label(group.key) + (group.insecure ? " (insecure)" : "")
        let own = Self.ownRate(result, group)
        return .div(
            .class("group"),
            .attribute(named: "data-group", value: HTMLReporter.attributeValue(group.key.description)),
            .h4(.text(label)),
            .unwrap(own) { rate in
                .p(
                    .class("own"),
                    .text("own ops/s "),
                    .span(
                        .class("num"),
                        .attribute(named: "data-own-rate", value: "\(rate)"),
                        .text(Numbers.fixed(rate, 1, grouped: true))
                    )
                )
            },
            .div(
                .class("scroll"),
                .table(
                    .class("sortable steps"),
                    .attribute(named: "data-table", value: "steps"),
                    .thead(
                        .tr(
                            .th("Step"),
                            .forEach(Array(zip(Self.columns, units))) { column, unit in
                                .th(
                                    .attribute(named: "data-unit", value: unit.dataName),
                                    .text(column.time ? "\(column.name) (\(unit.name))" : column.name)
                                )
                            }
                        )
                    ),
                    .tbody(
                        .forEach(rows) { row in
                            .tr(
                                .attribute(named: "data-step", value: HTMLReporter.attributeValue(row.step.name)),
                                .td(.text(row.step.name)),
                                .forEach(Array(zip(Self.columns, units))) { column, unit in
                                    Self.numberCell(column.figure(row.statistics), unit)
                                }
                            )
                        }
                    )
                )
            )
        )
    }

    /// The group's rate at the run's concurrency (Little's law), nil without exchanges.
    static func ownRate(_ result: RunResult, _ group: GroupResult) -> Double? {
        guard let row = result.throughputRow(of: group), row.statistics.count > 0, row.statistics.mean > 0,
            result.measuredNanoseconds > 0
        else { return nil }
        // Busy time: every client group's exchanges, end to end.
        let busy = result.groups.filter { !$0.isServerSide }.reduce(0.0) { total, other in
            guard let statistics = result.throughputRow(of: other)?.statistics else { return total }
            return total + statistics.mean * Double(statistics.count)
        }
        let concurrency = busy / Double(result.measuredNanoseconds)
        return concurrency / (row.statistics.mean / 1e9)
    }

    /// A figure's cell: its number as `data-value` (in the data's own unit), shown in `unit`.
    static func numberCell(_ value: Double?, _ unit: ColumnUnit) -> Node<HTML.TableRowContext> {
        guard let value else { return .td(.class("num"), .text("–")) }
        return .td(.class("num"), .attribute(named: "data-value", value: "\(value)"), .text(unit.format(value)))
    }
}

/// How a column shows its numbers: its table's time unit, a count, a ratio, a p-value.
struct ColumnUnit {
    /// The heading's unit, e.g. `µs`; empty for counts.
    var name: String
    /// `ns`, `count`, `ratio` or `p`: what `data-value` holds.
    var dataName: String
    /// Nanoseconds in one unit, for times.
    var scale: Double
    var decimals: Int

    static let count = ColumnUnit(name: "", dataName: "count", scale: 1, decimals: -1)
    static let ratio = ColumnUnit(name: "", dataName: "ratio", scale: 1, decimals: 3)
    static let pValue = ColumnUnit(name: "", dataName: "p", scale: 1, decimals: -2)

    /// The unit of a table whose rows' typical times (their p50s) are `typical` (`TimeUnit.of`).
    static func time(_ typical: [Double]) -> ColumnUnit {
        let unit = TimeUnit.of(typical)
        return ColumnUnit(name: unit.name, dataName: "ns", scale: unit.nanoseconds, decimals: unit.decimals)
    }

    func format(_ value: Double) -> String {
        switch self.decimals {
        case -1: Numbers.fixed(value, value == value.rounded() ? 0 : 1, grouped: true)
        case -2: value < 0.0001 ? String(format: "%.1e", value) : Numbers.fixed(value, 4)
        default: Numbers.fixed(value / self.scale, self.decimals, grouped: true)
        }
    }
}
