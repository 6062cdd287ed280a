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

    /// The room the legend takes across: its lines, and its longest label measured at its
    /// size (`Frame.textWidth`), and a margin; at least 120.
    public var width: Double {
        Swift.max(30 + (self.entries.map { Frame.textWidth($0.label, size: 12) }.max() ?? 0) + 16, 120)
    }

    /// The room the legend takes down: a pitch per entry.
    public var height: Double { Double(self.entries.count) * Self.pitch }

    /// The right end of a plot that leaves room for this legend on `frame`: beside the plot on
    /// a wide canvas, the right margin on a narrow one (the legend goes under the plot).
    public func plotRight(_ frame: Frame) -> Double {
        frame.isNarrow ? frame.width - Frame.margin : frame.width - self.width
    }

    /// The legend moved to its place on `frame`: right of a plot ending at `plotRight` and
    /// starting at `top` on a wide canvas; under the plot, from the left margin, its first
    /// line at `below`, on a narrow one.
    ///
    /// Under the plot, a label too long for the canvas keeps its leading ` · `-separated parts
    /// that fit (a group's label comes first, and names it alone): on a phone a group's
    /// `label · suite · provider · transport` ran past the chart's edge.
    public func placed(_ frame: Frame, plotRight: Double, top: Double, below: Double) -> Legend {
        var legend = self
        (legend.x, legend.y) = frame.isNarrow ? (Frame.margin, below) : (plotRight + 16, top)
        guard frame.isNarrow else { return legend }
        let room = frame.width - legend.x - 30 - Frame.margin
        for index in legend.entries.indices {
            var parts = legend.entries[index].label.split(separator: " · ", omittingEmptySubsequences: false).map(String.init)
            while parts.count > 1, Frame.textWidth(parts.joined(separator: " · "), size: 12) > room {
                parts.removeLast()
            }
            legend.entries[index].label = parts.joined(separator: " · ")
        }
        return legend
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
