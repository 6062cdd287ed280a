/// A chart's canvas at a given width, and what follows from the width: whether the legend
/// fits right of the plot or goes under it, how many ticks an axis has room for, and where a
/// line of text must break to stay inside the canvas.
///
/// Charts are drawn at `wide` for report files and wide pages, and at `narrow` for a phone's
/// width (report.html carries both and shows the one that fits): the narrow one is drawn at
/// about the size it is shown, so its text stays as large as it is written (11 px and up)
/// rather than being scaled down with a wide canvas.
public struct Frame: Sendable, Equatable {
    /// The width of a chart file, and of a chart on a wide page.
    public static let wide = 960.0
    /// The width of a chart on a page about 400 px wide.
    public static let narrow = 380.0
    /// The space between the canvas's edge and its text.
    public static let margin = 14.0

    /// The canvas's width.
    public var width: Double
    /// What the chart's element ids start with (`SVG.idPrefix`).
    public var idPrefix: String

    /// A canvas `width` wide, its ids prefixed with `idPrefix`.
    public init(width: Double = Frame.wide, idPrefix: String = "") {
        self.width = width
        self.idPrefix = idPrefix
    }

    /// A narrow canvas, its ids prefixed `narrow-` (to sit beside the wide one on a page).
    public static let phone = Frame(width: Frame.narrow, idPrefix: "narrow-")

    /// Whether the canvas is too narrow for a legend beside the plot: the legend goes under it.
    public var isNarrow: Bool { self.width < 600 }

    /// The room for text from the left margin to the right one.
    public var textWidth: Double { self.width - 2 * Self.margin }

    /// How many divisions an axis across the plot has room for: `wide` on a wide canvas, fewer
    /// (at least 3) on a narrow one, so that tick labels keep apart.
    public func divisions(_ wide: Double) -> Double {
        self.isNarrow ? Swift.max(3, (wide / 2).rounded(.down)) : wide
    }

    /// The width `text` takes at `size` pixels, from the widths of the glyphs of DejaVu Sans
    /// (what Linux draws for Helvetica and Arial when it has neither; wider than both) rounded
    /// up by class, so that text measured to fit does fit.
    public static func textWidth(_ text: String, size: Double, bold: Bool = false) -> Double {
        var ems = 0.0
        for character in text {
            ems += Self.glyphWidth(character)
        }
        return ems * size * (bold ? 1.12 : 1)
    }

    /// A glyph's advance, in ems, rounded up.
    private static func glyphWidth(_ character: Character) -> Double {
        switch character {
        case "i", "j", "l", "I", ".", ",", ":", ";", "'", "|", " ", "·": 0.34
        case "f", "t", "r", "(", ")", "[", "]", "-", "/", "{", "}", "\"", "!": 0.42
        case "m", "w", "M", "W", "%", "@", "—": 1.0
        case "+", "=", "<", ">", "×", "÷", "≤", "≥", "~", "→", "↑", "↓": 0.84
        case "0"..."9", "#", "$", "?", "_", "*", "µ", "–": 0.64
        default:
            if character.isUppercase { 0.8 } else if character.isASCII { 0.64 } else { 0.8 }
        }
    }

    /// `text` broken at spaces into lines at most `width` wide at `size` (a word longer than
    /// the width stays whole on a line of its own).
    public static func wrap(_ text: String, width: Double, size: Double, bold: Bool = false) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: true) {
            let candidate = line.isEmpty ? String(word) : line + " " + word
            if line.isEmpty || Self.textWidth(candidate, size: size, bold: bold) <= width {
                line = candidate
            } else {
                lines.append(line)
                line = String(word)
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }
}

extension SVG {
    /// The space from one line of a title to the next.
    static let titleLeading = 19.0
    /// The space from one line of a subtitle to the next.
    static let subtitleLeading = 15.0

    /// A chart's heading at the top of the canvas: `title` in bold, broken into lines that fit
    /// between the margins, and `subtitle`, if any, under it in a smaller type, also broken.
    /// Each line is a `text` of class `title`. Returns the height below the heading's last line.
    public mutating func heading(_ title: String, subtitle: String? = nil, frame: Frame) -> Double {
        var y = 8.0
        for line in Frame.wrap(title, width: frame.textWidth, size: 15, bold: true) {
            y += Self.titleLeading
            self.text(line, x: Frame.margin, y: y, size: 15, bold: true, cssClass: "title")
        }
        for line in subtitle.map({ Frame.wrap($0, width: frame.textWidth, size: 12) }) ?? [] {
            y += Self.subtitleLeading
            self.text(line, x: Frame.margin, y: y, size: 12, fill: "#555", cssClass: "title")
        }
        return y + 8
    }

    /// `text` broken into lines no wider than `width` at `size`, the first line's baseline at
    /// `y`, each next line `leading` lower. Returns the baseline of the last line.
    @discardableResult
    public mutating func paragraph(
        _ text: String,
        x: Double,
        y: Double,
        width: Double,
        size: Double = 12,
        leading: Double = 15,
        fill: String = "#222"
    ) -> Double {
        var baseline = y - leading
        for line in Frame.wrap(text, width: width, size: size) {
            baseline += leading
            self.text(line, x: x, y: baseline, size: size, fill: fill)
        }
        return baseline
    }
}

/// A chart that can be drawn on canvases of different widths (`Frame`).
public protocol Chart {
    /// The canvas it is drawn on.
    var frame: Frame { get set }
    /// The SVG document.
    func render() -> String
}

extension Chart {
    /// The SVG document drawn on `frame`.
    public func render(on frame: Frame) -> String {
        var chart = self
        chart.frame = frame
        return chart.render()
    }
}
