import LabResults

extension MarkdownReporter {
    /// The Matrix section: each cell's metric, a row per series, a column per parameter value.
    static func matrix(_ result: RunResult, chart: String?) -> [String] {
        guard let figures = MatrixFigures.of(result) else { return [] }
        var lines = [
            "## Matrix", "",
            "\(Self.code(figures.metric)) (`report.matrixMetric`) for each combination, against \(Self.code(MatrixFigures.short(figures.parameter)));"
                + " every cell is a group of its own in the tables above.",
            "",
        ]
        if let chart {
            lines += [
                "![\(Self.cell("\(figures.metric) against \(MatrixFigures.short(figures.parameter))"))](\(chart))", "",
            ]
        }
        // Times in one unit for the table, named in its corner; other figures as the chart labels them.
        let values = figures.series.flatMap { $0.points.compactMap { $0.value } }
        let time = figures.unit == "ns" ? TimeUnit.of(values) : nil
        lines.append(
            "| \(time?.heading("Series") ?? "Series") | " + figures.xs.map(Self.cell).joined(separator: " | ") + " |"
        )
        lines.append("|:--|" + String(repeating: "--:|", count: figures.xs.count))
        for series in figures.series {
            let cells = series.points.map { point in
                point.value.map { time?.format($0) ?? Self.matrixValue($0, unit: figures.unit) } ?? "—"
            }
            lines.append("| \(Self.cell(series.label)) | " + cells.joined(separator: " | ") + " |")
        }
        return lines + [""]
    }
}
