/// A small SVG document built from shapes; numbers are written with one decimal, text is escaped.
public struct SVG: Sendable {
    /// The canvas width in pixels.
    public var width: Double
    /// The canvas height in pixels.
    public var height: Double
    /// The elements, in drawing order.
    private var elements: [String] = []
    /// Whether `tip` draws anything: on for a chart inside report.html, whose script shows
    /// the tip of the point under the pointer; off for a chart file.
    public var tips = false
    /// What every `id` attribute starts with: empty, unless the page holds this chart twice
    /// (report.html's wide and narrow renderings), where ids must stay unique.
    public var idPrefix = ""

    /// A blank canvas.
    public init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }

    /// A blank canvas as wide as `frame`, its ids prefixed as `frame` says; the height is set
    /// once the chart knows it.
    public init(frame: Frame, height: Double = 0) {
        self.init(width: frame.width, height: height)
        self.idPrefix = frame.idPrefix
    }

    /// How text lines up with its anchor point.
    public enum Anchor: String, Sendable {
        /// The text begins at the point.
        case start
        /// The text is centred on the point.
        case middle
        /// The text ends at the point.
        case end
    }

    /// A point's value under the pointer (when `tips` is on): an invisible circle carrying
    /// `text` as `data-tip`.
    public mutating func tip(x: Double, y: Double, _ text: String) {
        guard self.tips else { return }
        self.elements.append(
            "<circle cx=\"\(n(x))\" cy=\"\(n(y))\" r=\"6\" fill=\"transparent\" data-tip=\"\(Self.escape(text))\"/>"
        )
    }

    /// A straight line.
    public mutating func line(
        _ x1: Double,
        _ y1: Double,
        _ x2: Double,
        _ y2: Double,
        stroke: String,
        width: Double = 1,
        dash: String? = nil
    ) {
        var element = "<line x1=\"\(n(x1))\" y1=\"\(n(y1))\" x2=\"\(n(x2))\" y2=\"\(n(y2))\""
        element += " stroke=\"\(stroke)\" stroke-width=\"\(n(width))\""
        if let dash { element += " stroke-dasharray=\"\(dash)\"" }
        self.elements.append(element + "/>")
    }

    /// A filled rectangle.
    public mutating func rect(x: Double, y: Double, width: Double, height: Double, fill: String) {
        self.elements.append(
            "<rect x=\"\(n(x))\" y=\"\(n(y))\" width=\"\(n(width))\" height=\"\(n(height))\" fill=\"\(fill)\"/>"
        )
    }

    /// A filled circle, with `attributes` (name, value) added to the element.
    public mutating func circle(
        x: Double,
        y: Double,
        radius: Double,
        fill: String,
        attributes: [(name: String, value: String)] = []
    ) {
        var element = "<circle cx=\"\(n(x))\" cy=\"\(n(y))\" r=\"\(n(radius))\" fill=\"\(fill)\""
        element += self.attributes(attributes)
        self.elements.append(element + "/>")
    }

    /// ` name="value"` for each attribute, escaped, `idPrefix` before an `id`'s value.
    private func attributes(_ attributes: [(name: String, value: String)]) -> String {
        attributes.map { name, value in
            " \(name)=\"\(Self.escape(name == "id" ? self.idPrefix + value : value))\""
        }.joined()
    }

    /// An open line through `points`, with `attributes` (name, value) added to the element.
    public mutating func polyline(
        _ points: [(x: Double, y: Double)],
        stroke: String,
        width: Double = 2,
        dash: String? = nil,
        attributes: [(name: String, value: String)] = []
    ) {
        let coordinates = points.map { "\(n($0.x)),\(n($0.y))" }.joined(separator: " ")
        var element = "<polyline points=\"\(coordinates)\" fill=\"none\" stroke=\"\(stroke)\""
        element += " stroke-width=\"\(n(width))\" stroke-linejoin=\"round\""
        if let dash { element += " stroke-dasharray=\"\(dash)\"" }
        element += self.attributes(attributes)
        self.elements.append(element + "/>")
    }

    /// A line of text; `rotate` turns it about its anchor point, in degrees; `cssClass` names
    /// its part of the chart (`title`) for the page's style and tests.
    public mutating func text(
        _ text: String,
        x: Double,
        y: Double,
        anchor: Anchor = .start,
        size: Double = 12,
        bold: Bool = false,
        fill: String = "#222",
        rotate: Double? = nil,
        cssClass: String? = nil
    ) {
        var element = "<text x=\"\(n(x))\" y=\"\(n(y))\" font-size=\"\(n(size))\" text-anchor=\"\(anchor.rawValue)\""
        element += " fill=\"\(fill)\""
        if let cssClass { element += " class=\"\(cssClass)\"" }
        if bold { element += " font-weight=\"bold\"" }
        if let rotate { element += " transform=\"rotate(\(n(rotate)) \(n(x)) \(n(y)))\"" }
        self.elements.append(element + ">\(Self.escape(text))</text>")
    }

    /// The document, with `title` as its accessible name.
    public func rendered(title: String) -> String {
        var lines = [
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(n(self.width))\" height=\"\(n(self.height))\""
                + " viewBox=\"0 0 \(n(self.width)) \(n(self.height))\" font-family=\"Helvetica, Arial, sans-serif\">",
            "<title>\(Self.escape(title))</title>",
            "<rect x=\"0\" y=\"0\" width=\"\(n(self.width))\" height=\"\(n(self.height))\" fill=\"#fff\"/>",
        ]
        lines += self.elements
        lines.append("</svg>")
        return lines.joined(separator: "\n") + "\n"
    }

    /// `text` with the five XML special characters escaped.
    public static func escape(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&apos;"
            default: result.append(character)
            }
        }
        return result
    }

    /// Distinct colours for series, in order (Tableau 10).
    public static let palette = [
        "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
    ]

    /// Series `index`'s colour: the palette's, round again after its last.
    public static func colour(_ index: Int) -> String { Self.palette[index % Self.palette.count] }

    /// `cx-x25519-swift-crypto`: lowercase ASCII letters, digits and single hyphens, from
    /// `parts`; `group` when nothing is left. For element ids and file names.
    public static func slug(_ parts: [String]) -> String {
        var result = ""
        for character in parts.joined(separator: "-").lowercased() {
            if character.isASCII && (character.isLetter || character.isNumber) {
                result.append(character)
            } else if !result.isEmpty && result.last != "-" {
                result.append("-")
            }
        }
        while result.last == "-" { result.removeLast() }
        return result.isEmpty ? "group" : result
    }
}

/// A coordinate with one decimal.
private func n(_ value: Double) -> String { Numbers.fixed(value, 1) }
