import Foundation
import LabTestSupport
import Testing

/// `--out` as a user reuses it: a folder that holds another run is refused before any work
/// unless `--replace`, which removes the lab's files only; a folder the reports cannot go to
/// is refused before any work too, in one plain sentence.
@Suite(.tier(.integration)) struct CLIFolderTests {
    /// A small run of one or two groups, `first` and `second`: a latency chart each.
    static func scenario(named name: String, groups: [String], in folder: URL) throws -> URL {
        let flows = groups.map { #"{ "flow": "cx", "suite": "x25519", "name": "\#($0)" }"# }.joined(separator: ", ")
        let file = folder.appendingPathComponent("\(name).json")
        try #"""
        { "name": "\#(name)", "clients": { "count": 1 }, "load": { "iterations": 10 }, "flows": [ \#(flows) ] }
        """#.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    /// Each name in `folder` with its bytes.
    static func contents(_ folder: URL) throws -> [String: Data] {
        var contents: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            contents[name] = try Data(contentsOf: folder.appendingPathComponent(name))
        }
        return contents
    }

    @Test("lab run --out into an earlier run's folder: refused untouched; --replace removes its files, not mine")
    func runRefusesThenReplaces() async throws {
        let folder = try CLITests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("out")
        let two = try Self.scenario(named: "two", groups: ["first", "second"], in: folder)
        let one = try Self.scenario(named: "one", groups: ["first"], in: folder)
        let first = try await CLITests.lab(["run", two.path, "--out", out.path, "--quiet"])
        try #require(first.status == 0, "\(first.errors)")
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("latency-second.svg").path))
        try Data("my notes\n".utf8).write(to: out.appendingPathComponent("notes.txt"))
        let before = try Self.contents(out)

        let refused = try await CLITests.lab(["run", one.path, "--out", out.path])
        #expect(refused.status == 1, "\(refused.errors)")
        let said = "\(out.path) holds the files `lab run` wrote there before"
        #expect(refused.errors.contains(said), "\(refused.errors)")
        #expect(refused.errors.contains("pass --replace"), "\(refused.errors)")
        // Before any work: no progress line, and every file as it was.
        #expect(!refused.errors.contains("progress:"), "\(refused.errors)")
        #expect(try Self.contents(out) == before)

        let replaced = try await CLITests.lab(["run", one.path, "--out", out.path, "--quiet", "--replace"])
        #expect(replaced.status == 0, "\(replaced.errors)")
        let after = try Self.contents(out)
        // The earlier run's chart of a group this run does not have is gone; my file stays.
        #expect(after["latency-second.svg"] == nil, "\(after.keys.sorted())")
        #expect(after["latency-first.svg"] != nil, "\(after.keys.sorted())")
        #expect(after["notes.txt"] == Data("my notes\n".utf8))
        let results = String(decoding: after["results.json"] ?? Data(), as: UTF8.self)
        #expect(results.contains(#""scenario" : "one""#), "this run's results.json")
        let listed = String(decoding: after[".lab-files"] ?? Data(), as: UTF8.self)
        #expect(listed.contains("\"latency-first.svg\"") && !listed.contains("notes.txt"), "\(listed)")
    }

    @Test("A folder from before .lab-files: refused; --replace removes the reports and the charts they link, not mine")
    func folderFromBeforeTheList() async throws {
        let folder = try CLITests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let files = [
            "results.json": "{}", "report.md": "# old\n![latency](latency-old.svg)\n",
            "latency-old.svg": "<svg/>", "mine.svg": "<svg/>",
        ]
        for (name, text) in files { try Data(text.utf8).write(to: out.appendingPathComponent(name)) }
        let one = try Self.scenario(named: "one", groups: ["first"], in: folder)
        let refused = try await CLITests.lab(["run", one.path, "--out", out.path, "--quiet"])
        #expect(refused.status == 1 && refused.errors.contains("pass --replace"), "\(refused.errors)")
        let replaced = try await CLITests.lab(["run", one.path, "--out", out.path, "--quiet", "--replace"])
        #expect(replaced.status == 0, "\(replaced.errors)")
        let after = try Self.contents(out)
        #expect(after["latency-old.svg"] == nil && after["mine.svg"] != nil, "\(after.keys.sorted())")
        #expect(after["latency-first.svg"] != nil, "\(after.keys.sorted())")
    }

    @Test("lab compare and lab merge --out into a run's folder: refused, nothing touched; --replace writes anew")
    func compareRefusesThenReplaces() async throws {
        let folder = try CLITests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = folder.appendingPathComponent("run")
        let other = folder.appendingPathComponent("other")
        let one = try Self.scenario(named: "one", groups: ["first"], in: folder)
        for out in [run, other] {
            let made = try await CLITests.lab(["run", one.path, "--out", out.path, "--quiet"])
            try #require(made.status == 0, "\(made.errors)")
        }
        let before = try Self.contents(other)
        let refused = try await CLITests.lab(["compare", run.path, other.path, "--out", other.path, "--quiet"])
        #expect(refused.status == 1, "\(refused.errors)")
        #expect(refused.errors.contains("pass --replace"), "\(refused.errors)")
        #expect(try Self.contents(other) == before)
        let merge = try await CLITests.lab(["merge", run.path, "--out", other.path, "--quiet"])
        #expect(merge.status == 1 && merge.errors.contains("pass --replace"), "\(merge.errors)")
        #expect(try Self.contents(other) == before)
        let replaced = try await CLITests.lab([
            "compare", run.path, other.path, "--out", other.path, "--quiet", "--replace",
        ])
        #expect(replaced.status == 0, "\(replaced.errors)")
        let after = try Self.contents(other)
        #expect(after["comparison.md"] != nil && after["results.json"] == nil, "\(after.keys.sorted())")
    }

    @Test("An --out the reports cannot go to: exit 1 before any work, one sentence with the path and the reason")
    func unwritableOut() async throws {
        let folder = try CLITests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let one = try Self.scenario(named: "one", groups: ["first"], in: folder)
        for (out, reason) in [
            ("/proc/x", "cannot write into /proc/x: /proc takes no new files or folders"),
            ("/dev/null/x", "cannot write into /dev/null/x: /dev/null is a file, not a folder"),
        ] {
            let refused = try await CLITests.lab(["run", one.path, "--out", out])
            #expect(refused.status == 1, "\(out): \(refused.errors)")
            #expect(refused.errors.hasPrefix("error: " + reason), "\(out): \(refused.errors)")
            #expect(refused.errors.split(separator: "\n").count == 1, "one line: \(refused.errors)")
            #expect(!refused.errors.contains("progress:"), "before any work: \(refused.errors)")
            for dump in ["NSCocoaErrorDomain", "UserInfo", "cause:"] {
                #expect(!refused.errors.contains(dump), "\(out): \(refused.errors)")
            }
        }
    }
}
