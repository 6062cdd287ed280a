import Foundation
import LabTestSupport
import Testing

/// The snapshot helper itself: a recording run writes the file and fails, so that
/// `UPDATE_SNAPSHOTS=1` can never turn a changed report into a green run.
@Suite(.tier(.unit)) struct SnapshotHelperTests {
    @Test("recording writes the snapshot and records an issue, even when nothing changed")
    func recordingFails() throws {
        let folder = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("report.md")
        try Data("old\n".utf8).write(to: file)
        withKnownIssue("a recording run must fail") {
            try expectSnapshot("new\n", named: "report.md", in: folder, recording: true)
        }
        #expect(try String(contentsOf: file, encoding: .utf8) == "new\n")
        withKnownIssue("a recording run must fail, unchanged too") {
            try expectSnapshot("new\n", named: "report.md", in: folder, recording: true)
        }
    }

    @Test("a text that differs from its snapshot fails, and the file is left as it was")
    func mismatchFails() throws {
        let folder = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("report.md")
        try Data("one\ntwo\n".utf8).write(to: file)
        withKnownIssue("differs at line 2") {
            try expectSnapshot("one\nthree\n", named: "report.md", in: folder, recording: false)
        }
        #expect(try String(contentsOf: file, encoding: .utf8) == "one\ntwo\n")
        withKnownIssue("no snapshot file") {
            try expectSnapshot("one\n", named: "missing.md", in: folder, recording: false)
        }
        // The same text passes.
        try expectSnapshot("one\ntwo\n", named: "report.md", in: folder, recording: false)
    }
}
