import Foundation
import LabReport
import Logging
import Synchronization

/// `lab serve --log-format`.
enum LogFormat: String, CaseIterable, Sendable {
    case text, json
}

/// A log handler that writes one JSON object per line on stderr, for log collectors:
/// `{"time": "2026-11-25T05:00:00.123Z", "level": "info", "label": "lab.serve",
/// "message": "…", "metadata": {…}, "source": "LabTransports", "file": "…", "line": 42}`. The message
/// and the metadata's strings are shown as `MarkdownReporter.printable` shows them: a collector
/// that prints a line prints no control a client sent.
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    /// One writer for every handler: lines from several threads never interleave.
    private static let output = Mutex(())

    init(label: String, logLevel: Logger.Level) {
        self.label = label
        self.logLevel = logLevel
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { self.metadata[key] }
        set { self.metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = self.metadata
        if let provided = self.metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let own = event.metadata { merged.merge(own) { _, new in new } }
        var object: [String: Any] = [
            "time": Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true)) + "Z",
            "level": event.level.rawValue,
            "label": self.label,
            "message": MarkdownReporter.printable(event.message.description),
            "source": event.source,
            "file": event.file,
            "line": Int(event.line),
        ]
        if !merged.isEmpty { object["metadata"] = merged.mapValues(Self.json) }
        guard
            let data = try? JSONSerialization.data(
                withJSONObject: object,
                options: [.sortedKeys, .withoutEscapingSlashes]
            )
        else { return }
        Self.output.withLock { _ in
            FileHandle.standardError.write(data + Data("\n".utf8))
        }
    }

    /// A metadata value as JSON: strings, arrays and objects as they are.
    static func json(_ value: Logger.Metadata.Value) -> Any {
        switch value {
        case .string(let text): MarkdownReporter.printable(text)
        case .stringConvertible(let convertible): MarkdownReporter.printable(convertible.description)
        case .array(let values): values.map(Self.json)
        case .dictionary(let values): values.mapValues(Self.json)
        }
    }
}
