import ArgumentParser
import Foundation
import LabCore

#if canImport(Glibc)
import Glibc
#endif

/// `--replace`: what `--out` may do to a folder that holds an earlier run's files.
struct ReplaceOption: ParsableArguments {
    @Flag(
        help: """
            Write into an --out folder that holds an earlier run's files (or a comparison's, or a \
            check's) after removing them: only the files the lab wrote there, as its .lab-files \
            lists them. Without it such a folder is refused.
            """
    )
    var replace = false
}

/// The folder a command writes its files into, made ready before any work: made, written
/// to once (a probe), and holding no other run's files; and, once the files are written,
/// the list of them in `.lab-files`, by command, so that `--replace` removes them and
/// nothing else (a user's own files there stay).
struct OutputFolder {
    /// The list of the lab's files in a folder, beside them.
    static let manifestName = ".lab-files"

    /// What `.lab-files` holds: the files (names in the folder) each command wrote.
    struct Manifest: Codable {
        /// For whoever opens the file; not read.
        var note: String? =
            "The files crypto-lab's lab wrote in this folder, by command: --replace removes these and nothing else."
        var files: [String: [String]] = [:]
    }

    let url: URL
    /// `run`, `merge`, `compare`, `check`, `serve`: whose files this command's are.
    let command: String
    /// The lab's files already there that stay: another command's (a check beside its run).
    private var kept: [String: [String]]
    /// What the folder held once ready: none of it is this command's.
    private var present: Set<String>

    /// Makes `url` ready for `command`'s files. A folder holding an earlier run's files is
    /// refused unless `replace`, which removes them (the lab's only); `adding` (a check
    /// written into its run's folder) keeps the other commands' files and removes only
    /// `command`'s earlier ones. Throws a `ValidationError` (exit 1) in one sentence.
    init(_ url: URL, command: String, replace: Bool, adding: Bool = false) throws {
        self.url = url
        self.command = command
        if let reason = Self.makeFolder(url.path) {
            throw ValidationError("cannot write into \(url.path): \(reason)")
        }
        var files = Self.labFiles(in: url)
        let earlier = adding ? files.removeValue(forKey: command) ?? [] : files.values.flatMap { $0 }
        if !adding, !earlier.isEmpty, !replace {
            // The reports first, then the charts: "report.html, report.md, results.csv and 11 more".
            let sorted = earlier.sorted { ($0.hasSuffix(".svg") ? 1 : 0, $0) < ($1.hasSuffix(".svg") ? 1 : 0, $1) }
            let more = earlier.count > 3 ? " and \(earlier.count - 3) more" : ""
            let writers = files.keys.sorted().map { $0 == "earlier" ? "lab" : "`lab \($0)`" }
            throw ValidationError(
                "\(url.path) holds the files \(writers.joined(separator: " and ")) wrote there before "
                    + "(\(sorted.prefix(3).joined(separator: ", "))\(more)): pass --replace to remove them (those "
                    + "only, never a file of yours) and write the new ones, or choose another --out"
            )
        }
        for name in earlier + (adding ? [] : [Self.manifestName]) {
            let path = url.appendingPathComponent(name).path
            guard FileManager.default.fileExists(atPath: path) else { continue }
            do {
                try FileManager.default.removeItem(atPath: path)
            } catch {
                throw ValidationError("cannot remove \(path): \(FileReason.describe(error))")
            }
        }
        if let reason = Self.probe(url.path) { throw ValidationError("cannot write into \(url.path): \(reason)") }
        self.kept = adding ? files : [:]
        self.present = Self.entries(url)
    }

    /// Records `written`, and whatever else appeared in the folder since it was made ready
    /// (a messaging flow's store), as this command's files in `.lab-files`.
    func record(_ written: [URL]) throws {
        let prefix = self.url.standardizedFileURL.path + "/"
        let names = written.compactMap { file -> String? in
            let path = file.standardizedFileURL.path
            guard path.hasPrefix(prefix) else { return nil }
            return path.dropFirst(prefix.count).split(separator: "/").first.map(String.init)
        }
        let appeared = Self.entries(self.url).subtracting(self.present).subtracting([Self.manifestName])
        var manifest = Manifest(files: self.kept)
        manifest.files[self.command] = Set(names).union(appeared).sorted()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let target = self.url.appendingPathComponent(Self.manifestName)
        do {
            try encoder.encode(manifest).write(to: target, options: .atomic)
        } catch {
            throw LabError(.storage, "Cannot write \(target.path): \(FileReason.describe(error))")
        }
    }

    /// The names in `url` (none if it cannot be listed).
    private static func entries(_ url: URL) -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? [])
    }

    /// The lab's files in `url` by command: as `.lab-files` lists them (names of entries
    /// there, nothing outside the folder), or, in a folder written before the list, the
    /// names the lab's reports have and the charts its Markdown links.
    static func labFiles(in url: URL) -> [String: [String]] {
        let present = Self.entries(url)
        let listed = url.appendingPathComponent(Self.manifestName)
        if let data = try? Data(contentsOf: listed),
            let manifest = try? JSONDecoder().decode(Manifest.self, from: data)
        {
            return manifest.files.mapValues { names in
                names.filter { !$0.contains("/") && $0 != "." && $0 != ".." && present.contains($0) }
            }.filter { !$0.value.isEmpty }
        }
        var names = present.intersection(Self.reportNames)
        for page in names where page.hasSuffix(".md") {
            let text = (try? String(contentsOf: url.appendingPathComponent(page), encoding: .utf8)) ?? ""
            for match in text.matches(of: /\(([A-Za-z0-9._-]+\.svg)\)/) where present.contains(String(match.1)) {
                names.insert(String(match.1))
            }
        }
        return names.isEmpty ? [:] : ["earlier": names.sorted()]
    }

    /// The names the lab's reports had, charts aside, when it wrote no `.lab-files`: how a
    /// folder from then is recognised. Fixed: the reporters of today list what they write.
    static let reportNames: Set<String> = [
        "results.csv", "outcomes.csv", "timeseries.csv", "traffic.csv", "report.md", "report.html", "results.json",
        "junit.xml", "github-summary.md", "bmf.json", "hgrm", "comparison.md", "comparison.csv",
        "comparison-junit.xml", "check.md", "check.csv", "check-junit.xml", "messaging.sqlite",
        "messaging.sqlite-wal", "messaging.sqlite-shm",
    ]

    /// Makes the folder and the ones above it; nil once it exists, else why not, from the
    /// system's own answer: "/dev/null is not a folder", "read-only file system".
    static func makeFolder(_ path: String) -> String? {
        var made = ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            let parent = made.isEmpty ? (path.hasPrefix("/") ? "/" : ".") : made
            made = (made.isEmpty ? (path.hasPrefix("/") ? "/" : "") : made + "/") + component
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: made, isDirectory: &isDirectory) {
                if !isDirectory.boolValue { return "\(made) is a file, not a folder" }
                continue
            }
            guard mkdir(made, 0o777) != 0 else { continue }
            let code = errno
            // Linux answers "no such file" for a folder /proc or /sys cannot hold: the parent
            // exists, it makes no new entries.
            if code == ENOENT { return "\(parent) takes no new files or folders (its file system makes none)" }
            return FileReason.describe(errno: code)
        }
        return nil
    }

    /// Creates and removes a file in the folder; nil if it could, else why not.
    static func probe(_ path: String) -> String? {
        let file = path + "/.lab-probe-\(getpid())"
        let handle = open(file, O_CREAT | O_EXCL | O_WRONLY, 0o600)
        guard handle >= 0 else { return FileReason.describe(errno: errno) }
        close(handle)
        unlink(file)
        return nil
    }
}
