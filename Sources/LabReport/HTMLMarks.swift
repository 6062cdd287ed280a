import Foundation

/// The marks the Markdown reports put before a verdict (✅ ❌ ⚠️ 🔴 🟢), drawn in a report's
/// HTML as small inline SVGs with a label: a browser without an emoji font (Debian's Chromium
/// with its default fonts) shows those characters as empty boxes. Markdown read on GitHub or
/// in a terminal keeps them.
enum HTMLMarks {
    /// Each mark: the characters the Markdown writes, its label, and the SVG's shapes
    /// (a 16 × 16 box).
    static let marks: [(text: String, label: String, shapes: String)] = [
        (
            "✅", "pass",
            "<circle cx=\"8\" cy=\"8\" r=\"7.5\" fill=\"#1a7f37\"/>"
                + "<path d=\"M4.4 8.3l2.4 2.4 4.8-5\" fill=\"none\" stroke=\"#fff\" stroke-width=\"2\"/>"
        ),
        (
            "❌", "fail",
            "<circle cx=\"8\" cy=\"8\" r=\"7.5\" fill=\"#c0262d\"/>"
                + "<path d=\"M5.2 5.2l5.6 5.6M10.8 5.2l-5.6 5.6\" stroke=\"#fff\" stroke-width=\"2\"/>"
        ),
        (
            "⚠️", "warning",
            "<path d=\"M8 1l7.5 13.5h-15z\" fill=\"#9a6700\"/>"
                + "<path d=\"M8 5.5v4.5M8 11.5v1.5\" stroke=\"#fff\" stroke-width=\"1.8\"/>"
        ),
        ("🔴", "worse", "<circle cx=\"8\" cy=\"8\" r=\"6.5\" fill=\"#c0262d\"/>"),
        ("🟢", "better", "<circle cx=\"8\" cy=\"8\" r=\"6.5\" fill=\"#1a7f37\"/>"),
    ]

    /// `html` with each mark in its text (never inside a tag, where it could be part of an
    /// attribute's value) drawn as an SVG; a warning sign without its emoji selector too.
    static func drawn(in html: String) -> String {
        guard html.unicodeScalars.contains(where: { (0x2600...0x27BF).contains($0.value) || $0.value >= 0x1F000 })
        else { return html }
        var out = ""
        var text = ""
        var inTag = false
        for character in html {
            if inTag {
                out.append(character)
                inTag = character != ">"
            } else if character == "<" {
                out += Self.replaced(text)
                text = ""
                out.append(character)
                inTag = true
            } else {
                text.append(character)
            }
        }
        return out + Self.replaced(text)
    }

    /// A run of text with its marks drawn.
    private static func replaced(_ text: String) -> String {
        var text = text
        for mark in Self.marks + [("⚠", "warning", Self.marks[2].shapes)] where text.contains(mark.text) {
            text = text.replacingOccurrences(of: mark.text, with: Self.svg(mark.label, mark.shapes))
        }
        return text
    }

    /// An inline SVG the height of the text, named for a screen reader (the words beside it
    /// say the same, so it adds nothing to the text a page's reader copies).
    private static func svg(_ label: String, _ shapes: String) -> String {
        "<svg class=\"mark\" viewBox=\"0 0 16 16\" width=\"16\" height=\"16\" role=\"img\" aria-label=\"\(label)\">"
            + "\(shapes)</svg>"
    }
}
