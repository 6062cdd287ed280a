import Plot

/// The style and script report.html carries inline: no file or network access when opened.
enum HTMLAssets {
    /// A page's head: UTF-8, the width of the screen, `title`, no icon to fetch, `css`.
    static func head(title: String, css: String = HTMLAssets.css) -> Node<HTML.DocumentContext> {
        .head(
            .meta(.charset(.utf8)),
            .meta(.name("viewport"), .content("width=device-width, initial-scale=1")),
            // The title element only: Plot writes `.title`'s `<meta>` copies unescaped.
            .element(named: "title", text: title),
            .raw("<link rel=\"icon\" href=\"data:,\">"),
            .style(css)
        )
    }

    /// Readable at 1280 px and at a phone's width (tables scroll sideways in their box; charts
    /// take the content's width, drawn wide, or narrow up to 720 px so that their text keeps
    /// its size), and printable (no scroll boxes, sections kept whole).
    static let css = """
        :root { --fg: #1d232a; --muted: #5b6570; --line: #d8dde3; --pass: #1a7f37; --fail: #c0262d; --warn: #9a6700; --bg2: #f5f7f9; }
        * { box-sizing: border-box; }
        body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); }
        main { max-width: 1240px; margin: 0 auto; padding: 16px 20px 48px; }
        h1 { font-size: 1.6em; margin: 0.4em 0 0.2em; } h2 { font-size: 1.3em; margin-top: 1.6em; border-bottom: 1px solid var(--line); }
        h3 { font-size: 1.1em; margin-bottom: 0.3em; } h4 { margin: 1em 0 0.2em; }
        .sub, .description, .note, figcaption, .own { color: var(--muted); }
        .banner { padding: 8px 12px; border-radius: 6px; font-weight: 600; }
        .banner.pass { background: #dafbe1; color: var(--pass); } .banner.fail { background: #ffebe9; color: var(--fail); }
        .banner.warn { background: #fff8c5; color: var(--warn); }
        .verdict.slower, .verdict.faster { color: #0b3d91; font-weight: 600; }
        .scroll { overflow-x: auto; max-width: 100%; }
        ul.verdicts { padding-left: 1.2em; } ul.verdicts li { margin: 2px 0; }
        details.comparison { margin: 6px 0; } details.comparison > summary { cursor: pointer; font-weight: 600; }
        table { border-collapse: collapse; margin: 6px 0 12px; font-size: 0.92em; }
        th, td { padding: 4px 8px; border-bottom: 1px solid var(--line); text-align: left; white-space: nowrap; }
        th { background: var(--bg2); position: sticky; top: 0; }
        table.sortable th { cursor: pointer; } th[aria-sort="ascending"]::after { content: " ▲"; } th[aria-sort="descending"]::after { content: " ▼"; }
        td.num { text-align: right; font-variant-numeric: tabular-nums; }
        tr.fail td { color: var(--fail); } tr.slower td:last-child, tr.faster td:last-child { color: #0b3d91; font-weight: 600; }
        svg.mark { width: 1em; height: 1em; vertical-align: -0.15em; }
        figure { margin: 16px 0; } .chart svg, .chart-narrow svg { width: 100%; height: auto; display: block; }
        .chart-narrow { display: none; }
        @media (max-width: 720px) { .chart.wide { display: none; } .chart-narrow { display: block; } }
        pre { background: var(--bg2); padding: 10px; overflow-x: auto; }
        #tip { position: fixed; pointer-events: none; background: #1d232a; color: #fff; padding: 3px 7px; border-radius: 4px; font-size: 12px; display: none; }
        @media (max-width: 600px) { main { padding: 8px 10px 32px; } body { font-size: 14px; } th, td { padding: 3px 5px; } }
        @media print { .scroll { overflow: visible; } th { position: static; } section, figure, table { break-inside: avoid; } #tip { display: none; } }
        """

    /// Sorting by a clicked heading (by `data-value` when the cells have one), and the value
    /// under the pointer for chart elements that carry a `<title>`.
    static let script = """
        (function () {
          document.querySelectorAll("table.sortable").forEach(function (table) {
            table.querySelectorAll("thead th").forEach(function (th, column) {
              th.addEventListener("click", function () {
                var body = table.tBodies[0]; if (!body) { return; }
                var ascending = th.getAttribute("aria-sort") !== "ascending";
                table.querySelectorAll("thead th").forEach(function (other) { other.removeAttribute("aria-sort"); });
                th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
                var key = function (row) {
                  var cell = row.cells[column]; if (!cell) { return ""; }
                  var value = cell.getAttribute("data-value");
                  return value !== null && value !== "" ? parseFloat(value) : cell.textContent.trim();
                };
                Array.prototype.slice.call(body.rows).sort(function (a, b) {
                  var x = key(a), y = key(b);
                  var order = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
                  return ascending ? order : -order;
                }).forEach(function (row) { body.appendChild(row); });
              });
            });
          });
          // A printed report shows what the folded parts hold.
          window.addEventListener("beforeprint", function () {
            document.querySelectorAll("details").forEach(function (details) { details.open = true; });
          });
          var tip = document.createElement("div"); tip.id = "tip"; document.body.appendChild(tip);
          document.querySelectorAll(".chart svg, .chart-narrow svg").forEach(function (svg) {
            svg.addEventListener("pointermove", function (event) {
              var target = event.target.closest ? event.target.closest("[data-tip]") : null;
              if (!target) { tip.style.display = "none"; return; }
              tip.textContent = target.getAttribute("data-tip");
              tip.style.left = (event.clientX + 12) + "px"; tip.style.top = (event.clientY + 12) + "px";
              tip.style.display = "block";
            });
            svg.addEventListener("pointerleave", function () { tip.style.display = "none"; });
          });
        })();
        """
}
