/// A chart's legend: one entry under another, each a short line in its colour and dash and
/// its label beside it, drawn from a given point (usually right of the plot).
public struct Legend: Sendable {
    /// One line of the legend.
    public struct Entry: Sendable, Equatable {
        /// The line's colour.
        public var colour: String
        /// The line's dash pattern (`stroke-dasharray`), nil for a solid line.
        public var dash: String?
        /// The text beside it.
        public var label: String

        /// An entry: a line in `colour`, solid unless `dash` is given, and `label`.
        public init(colour: String, dash: String? = nil, label: String) {
            self.colour = colour
            self.dash = dash
            self.label = label
        }
    }

    /// The space from one entry to the next, in pixels.
    public static let pitch = 20.0

    /// The entries, top to bottom.
    public var entries: [Entry]
    /// The left end of the entries' lines.
    public var x: Double
    /// The height of the first entry's line.
    public var y: Double
    /// The lines' stroke width.
    public var lineWidth: Double

    /// A legend of `entries` whose first line starts at (`x`, `y`).
    public init(_ entries: [Entry], x: Double, y: Double, lineWidth: Double = 2) {
        self.entries = entries
        self.x = x
        self.y = y
        self.lineWidth = lineWidth
    }

    /// A legend of `labels` in the palette's colours, in order (`SVG.colour`), solid lines.
    public init(coloured labels: [String], x: Double, y: Double, lineWidth: Double = 2) {
        let entries = labels.enumerated().map { Entry(colour: SVG.colour($0), label: $1) }
        self.init(entries, x: x, y: y, lineWidth: lineWidth)
    }

    /// The room to leave for the legend right of a plot, estimated from its labels: 7 pixels
    /// a character of the longest, and 70 more; at least 120.
    public var width: Double {
        Swift.max(Double(self.entries.map(\.label.count).max() ?? 0) * 7 + 70, 120)
    }

    /// Every entry.
    public func draw(into svg: inout SVG) {
        for index in self.entries.indices { self.draw(index, into: &svg) }
    }

    /// Entry `index` alone (for charts that draw each series' entry after its lines).
    public func draw(_ index: Int, into svg: inout SVG) {
        let entry = self.entries[index]
        let y = self.y + Double(index) * Self.pitch
        svg.line(self.x, y, self.x + 24, y, stroke: entry.colour, width: self.lineWidth, dash: entry.dash)
        svg.text(entry.label, x: self.x + 30, y: y + 4, size: 12)
    }
}
