import Foundation
import Testing

/// Compares `text` with `Snapshots/<name>`. With `UPDATE_SNAPSHOTS=1` in the environment it
/// records `text` as the new snapshot and still fails (as swift-argument-parser's
/// `assertSnapshot` does), so a recording run can never pass by accident: review the diff,
/// then run again without the variable.
func expectSnapshot(
    _ text: String,
    named name: String,
    in folder: URL? = nil,
    recording: Bool = ProcessInfo.processInfo.environment["UPDATE_SNAPSHOTS"] == "1",
    filePath: String = #filePath,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let folder = folder ?? URL(fileURLWithPath: filePath).deletingLastPathComponent().appendingPathComponent("Snapshots")
    let url = folder.appendingPathComponent(name)
    if recording {
        let previous = try? String(contentsOf: url, encoding: .utf8)
        try Data(text.utf8).write(to: url)
        Issue.record(
            previous == text
                ? "\(name): UPDATE_SNAPSHOTS=1 recorded it (unchanged); run again without it to check"
                : "\(name): UPDATE_SNAPSHOTS=1 recorded a new snapshot at \(url.path); review it, then run again without it",
            sourceLocation: sourceLocation
        )
        return
    }
    guard let expected = try? String(contentsOf: url, encoding: .utf8) else {
        Issue.record(
            "No snapshot at \(url.path); run with UPDATE_SNAPSHOTS=1 to create it",
            sourceLocation: sourceLocation
        )
        return
    }
    guard text != expected else { return }
    let actualLines = text.components(separatedBy: "\n")
    let expectedLines = expected.components(separatedBy: "\n")
    let line =
        actualLines.indices.first { $0 >= expectedLines.count || actualLines[$0] != expectedLines[$0] }
        ?? actualLines.count
    let actualLine = line < actualLines.count ? actualLines[line] : "<end of text>"
    let expectedLine = line < expectedLines.count ? expectedLines[line] : "<end of snapshot>"
    Issue.record(
        """
        \(name) differs from its snapshot at line \(line + 1) (UPDATE_SNAPSHOTS=1 rewrites it):
          expected: \(expectedLine)
          actual:   \(actualLine)
        """,
        sourceLocation: sourceLocation
    )
}

/// A fresh, empty folder under the temporary directory, removed by the caller with `removeItem`.
func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("lab-report-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
