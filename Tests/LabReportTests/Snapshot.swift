import Foundation
import Testing

/// Compares `text` with `Snapshots/<name>`; with `UPDATE_SNAPSHOTS=1` in the environment, rewrites the file instead.
func expectSnapshot(
    _ text: String,
    named name: String,
    filePath: String = #filePath,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let url = URL(fileURLWithPath: filePath).deletingLastPathComponent().appendingPathComponent("Snapshots/\(name)")
    if ProcessInfo.processInfo.environment["UPDATE_SNAPSHOTS"] == "1" {
        try Data(text.utf8).write(to: url)
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
