import Foundation
import LabKit
import LabLatencyTable

// `report-results RESULTS.json FOLDER`: the reports of a finished run (a results.json that
// `lab run` wrote, anywhere), written again by this package's reporter alone.
let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 2, let file = arguments.first, let folder = arguments.last else {
    FileHandle.standardError.write(Data("usage: report-results RESULTS.json FOLDER\n".utf8))
    exit(1)
}
do {
    let result = try RunResult.read(from: URL(fileURLWithPath: file))
    let written = try ReporterRegistry([LatencyTableReporter.self])
        .writeReports(result, formats: [LatencyTableReporter.name], charts: false, to: URL(fileURLWithPath: folder))
    print(written.map(\.path).joined(separator: "\n"))
} catch {
    FileHandle.standardError.write(Data("report-results: \(error)\n".utf8))
    exit(1)
}
