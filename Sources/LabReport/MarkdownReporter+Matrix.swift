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
        lines.append("| Series | " + figures.xs.map(Self.cell).joined(separator: " | ") + " |")
        lines.append("|:--|" + String(repeating: "--:|", count: figures.xs.count))
        for series in figures.series {
            let cells = series.points.map { $0.value.map { Self.matrixValue($0, unit: figures.unit) } ?? "—" }
            lines.append("| \(Self.cell(series.label)) | " + cells.joined(separator: " | ") + " |")
        }
        return lines + [""]
    }
}
