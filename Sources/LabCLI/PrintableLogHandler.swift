import LabReport
import Logging

/// `lab serve --log-format text`'s handler: swift-log's stream handler, with the message and
/// every metadata value shown as `MarkdownReporter.printable` shows them. A log line can quote
/// what a client sent (a bad request, a name); its ESC or OSC must not reach the terminal or
/// the log file as a control (docs/hardening.md, "Text from a peer").
struct PrintableLogHandler: LogHandler {
    var inner: StreamLogHandler

    var logLevel: Logger.Level {
        get { self.inner.logLevel }
        set { self.inner.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { self.inner.metadata }
        set { self.inner.metadata = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { self.inner.metadataProvider }
        set { self.inner.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { self.inner[metadataKey: key] }
        set { self.inner[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        var shown = event
        shown.message = Logger.Message(stringLiteral: MarkdownReporter.printable(event.message.description))
        shown.metadata = event.metadata.map { $0.mapValues(Self.printable) }
        self.inner.log(event: shown)
    }

    /// A metadata value with its strings made printable.
    static func printable(_ value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        switch value {
        case .string(let text): .string(MarkdownReporter.printable(text))
        case .stringConvertible(let convertible): .string(MarkdownReporter.printable(convertible.description))
        case .array(let values): .array(values.map(Self.printable))
        case .dictionary(let values): .dictionary(values.mapValues(Self.printable))
        }
    }
}
