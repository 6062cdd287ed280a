public import Foundation
import LabCore
public import LabResults

/// Writes one kind of report about a run into a folder, e.g. `"csv"` → `results.csv`.
public protocol Reporter: Sendable {
    /// The name scenario files and `--format` use to select this reporter.
    static var name: String { get }
    /// A reporter configured by `options`.
    init(options: ReportOptions)
    /// Writes the report for `result` into `directory`, which exists, and returns the files written.
    func write(_ result: RunResult, to directory: URL) throws -> [URL]
}

extension Reporter {
    /// A reporter with the default options.
    public init() {
        self.init(options: ReportOptions())
    }
}

/// Settings every reporter receives; each uses the ones that concern it.
public struct ReportOptions: Sendable, Equatable {
    /// Whether reports that can hold charts (`markdown`) draw them as SVG files beside the report.
    public var charts: Bool

    /// Options; charts are on by default.
    public init(charts: Bool = true) {
        self.charts = charts
    }
}

/// The reporters a run may use, built once from a type list.
public struct ReporterRegistry: Sendable {
    /// The registered reporter types, in the order given.
    public let types: [any Reporter.Type]

    /// A registry of the given reporter types; names must be distinct.
    public init(_ types: [any Reporter.Type]) {
        PluginLookup.requireDistinct(types.map { $0.name }, kind: "reporter")
        self.types = types
    }

    /// The reports every run writes unless told otherwise: `csv`, `markdown`, `html`, `json`.
    /// The others are for other tools, on request.
    public static let standardFormats = ["csv", "markdown", "html", "json"]

    /// The registered names, in order.
    public var names: [String] { self.types.map { $0.name } }

    /// Makes the reporter called `name`.
    public func make(_ name: String, options: ReportOptions = ReportOptions()) throws -> any Reporter {
        let type = try PluginLookup.find(name, in: self.types, names: self.names, kind: "reporter", plural: "reporters")
        return type.init(options: options)
    }

    /// Creates `directory` and writes each report in `formats` (duplicates once) into it; returns the files written.
    ///
    /// Every name is checked before anything is written, so an unknown format leaves no partial reports.
    public func writeReports(
        _ result: RunResult,
        formats: [String],
        charts: Bool,
        to directory: URL
    ) throws -> [URL] {
        var seen: Set<String> = []
        let options = ReportOptions(charts: charts)
        let reporters = try formats.filter { seen.insert($0).inserted }.map { try self.make($0, options: options) }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw LabError(.storage, "Cannot create the report folder \(directory.path): \(FileReason.describe(error))")
        }
        return try reporters.flatMap { try $0.write(result, to: directory) }
    }
}

/// Writes `text` as UTF-8 to `url`, atomically, as a `LabError` on failure: every report but
/// the JSON ones (whose encoder escapes them), with each control character shown as its code
/// (`MarkdownReporter.printable`), so that no name or message from a peer acts on the
/// terminal or the viewer that shows the file (docs/hardening.md, "Text from a peer").
func writeText(_ text: String, to url: URL) throws {
    try writeData(Data(MarkdownReporter.printable(text).utf8), to: url)
}

/// Writes each `(name, text)` into `directory` (made if missing) with `writeText`; returns
/// the files' URLs, in order.
func writeTexts(_ files: [(name: String, text: String)], to directory: URL) throws -> [URL] {
    do {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    } catch {
        throw LabError(.storage, "Cannot create \(directory.path): \(FileReason.describe(error))")
    }
    return try files.map { name, text in
        let url = directory.appendingPathComponent(name)
        try writeText(text, to: url)
        return url
    }
}

/// Writes `data` to `url`, atomically, as a `LabError` on failure.
extension Reporter {
    /// Writes `text` as UTF-8 to the file `name` in `directory`, atomically, and returns it: a
    /// reporter of one file is `[try Self.writeFile(text, named: "x.tsv", in: directory)]`. The
    /// text is written as given; a reporter escapes what a peer or a server named in it.
    public static func writeFile(_ text: String, named name: String, in directory: URL) throws -> URL {
        let url = directory.appendingPathComponent(name)
        try writeData(Data(text.utf8), to: url)
        return url
    }
}

func writeData(_ data: Data, to url: URL) throws {
    do {
        try data.write(to: url, options: .atomic)
    } catch {
        throw LabError(.storage, "Cannot write \(url.path): \(FileReason.describe(error))")
    }
}
