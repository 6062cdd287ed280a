import Foundation
import Plot

/// The page `lab run --live` serves at `/`: the run second by second as it goes, from the
/// server-sent events at `/events` (one a second: each group's exchanges, errors, p50 and p99
/// of the exchanges that started in that second). Self-contained like report.html; it draws
/// its charts itself, a `g.second` per second received, at the width of its box (their text
/// is never scaled down), on round ticks along both axes and on scales that only grow; it says
/// when the reports are being written, and, once they are, that the run has ended and where
/// they are.
public enum LivePage {
    /// The page for a run of `scenario`.
    public static func html(scenario: String, description: String) -> String {
        let page = HTML(
            .lang(.english),
            HTMLAssets.head(title: "\(scenario) — live — crypto-lab", css: HTMLAssets.css + Self.css),
            .body(
                .main(
                    .header(
                        .h1(.text(scenario), .span(.class("sub"), .text(" — live"))),
                        .unwrap(HTMLReporter.nonEmpty(description)) { .p(.class("description"), .text($0)) }
                    ),
                    .p(.id("status"), .class("banner warn"), .text("Waiting for the first second…")),
                    .div(
                        .class("scroll"),
                        .table(
                            .id("groups"),
                            .thead(
                                .tr(
                                    .th("Group"),
                                    .th("exchanges/s"),
                                    .th("p50"),
                                    .th("p99"),
                                    .th("errors/s"),
                                    .th("exchanges so far")
                                )
                            ),
                            .tbody()
                        )
                    ),
                    .h2("Exchange latency, second by second"),
                    .p(
                        .class("note"),
                        .text(
                            "p50 solid, p99 dashed, log scale; each point is the exchanges that started in that second."
                        )
                    ),
                    .div(.class("chart"), .id("latency")),
                    .h2("Exchanges per second"),
                    .div(.class("chart"), .id("rate"))
                ),
                .script(.raw(Self.script))
            )
        )
        return page.render() + "\n"
    }

    static let css = """
        .chart svg { display: block; max-width: 100%; }
        .legend span { margin-right: 14px; display: inline-block; max-width: 100%; overflow-wrap: anywhere; }
        .legend i { display: inline-block; width: 12px; height: 12px; margin-right: 4px; vertical-align: -1px; border-radius: 2px; }
        """

    /// Keeps every second received and redraws both charts and the table from them.
    static let script = """
        (function () {
          var colours = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"];
          var seconds = [], keys = [], totals = {};
          var status = document.getElementById("status");
          function time(ns) {
            if (ns === null || ns === undefined) { return "–"; }
            if (ns >= 1e9) { return parseFloat((ns / 1e9).toFixed(2)) + " s"; }
            if (ns >= 1e6) { return parseFloat((ns / 1e6).toFixed(2)) + " ms"; }
            if (ns >= 1e3) { return parseFloat((ns / 1e3).toFixed(1)) + " µs"; }
            return ns.toFixed(0) + " ns";
          }
          function el(name, attributes, parent) {
            var node = document.createElementNS("http://www.w3.org/2000/svg", name);
            for (var key in attributes) { node.setAttribute(key, attributes[key]); }
            if (parent) { parent.appendChild(node); }
            return node;
          }
          // Round values (1, 2 and 5 times a power of ten): the least at or above v, the most at or under it.
          function niceUp(v) {
            var d = Math.pow(10, Math.floor(Math.log10(v)));
            return [1, 2, 5, 10].map(function (f) { return f * d; }).find(function (n) { return n >= v * (1 - 1e-9); });
          }
          function niceDown(v) {
            var d = Math.pow(10, Math.floor(Math.log10(v)));
            return [5, 2, 1].map(function (f) { return f * d; }).find(function (n) { return n <= v * (1 + 1e-9); });
          }
          // Ticks from lo to hi: every round step of at most `count` on a linear axis (from 0, up
          // to the first at or above hi);
          // on a log one, each 1, 2, 5 × 10^k between (the powers of ten around them when those are too many).
          function ticks(lo, hi, logarithmic, count) {
            var out = [];
            if (!logarithmic) {
              var step = niceUp(hi / count);
              for (var i = 0; i === 0 || out[i - 1] < hi * (1 - 1e-9); i++) { out.push(i * step); }
              return out;
            }
            for (var v = lo; v <= hi * (1 + 1e-9); v = niceUp(v * 1.000001)) { out.push(v); }
            if (out.length <= count + 2) { return out; }
            // Too many: the powers of ten, from the one at or under lo to the one at or over hi.
            out = [];
            for (var k = Math.floor(Math.log10(lo) + 1e-9); k <= Math.ceil(Math.log10(hi) - 1e-9); k++) { out.push(Math.pow(10, k)); }
            return out;
          }
          function chart(id, value, logarithmic, label) {
            var box = document.getElementById(id);
            // Drawn at the box's own width, so that the text keeps its size on a phone.
            var width = Math.max(box.clientWidth || 900, 280), narrow = width < 600;
            var height = narrow ? 220 : 260, left = 66, right = 24, top = 10, bottom = 34;
            var svg = el("svg", { viewBox: "0 0 " + width + " " + height, width: width, height: height, role: "img" });
            var values = [];
            seconds.forEach(function (second) { second.groups.forEach(function (group) {
              value(group).forEach(function (v) { if (v !== null && v > 0) { values.push(v); } });
            }); });
            var last = seconds.length ? seconds[seconds.length - 1].index : 0, first = seconds.length ? seconds[0].index : 0;
            // The scale holds every second so far: it grows with the run, never shrinks back.
            var lo = logarithmic ? 1 : 0, hi = 10;
            if (values.length) {
              var low = Math.min.apply(null, values), high = Math.max.apply(null, values);
              lo = logarithmic ? niceDown(low) : 0;
              hi = logarithmic ? niceUp(high) : high;
              if (logarithmic && hi <= lo) { hi = niceUp(lo * 1.000001); }
            }
            var marks = ticks(lo, hi, logarithmic, narrow ? 4 : 5);
            // The axis runs from its first tick to its last: its ends are labelled.
            lo = marks[0]; hi = marks[marks.length - 1];
            var tLo = logarithmic ? Math.log10(lo) : lo, tHi = logarithmic ? Math.log10(hi) : hi;
            var x = function (i) { return left + (last > first ? (i - first) / (last - first) : 0.5) * (width - left - right); };
            var y = function (v) { var t = logarithmic ? Math.log10(v) : v; return top + (1 - (t - tLo) / (tHi - tLo || 1)) * (height - top - bottom); };
            el("line", { x1: left, y1: height - bottom, x2: width - right, y2: height - bottom, stroke: "#888" }, svg);
            marks.forEach(function (v) {
              el("line", { x1: left, y1: y(v), x2: width - right, y2: y(v), stroke: "#e3e3e3" }, svg);
              el("text", { "class": "tick value", x: left - 6, y: y(v) + 4, "text-anchor": "end", "font-size": 11, fill: "#555" }, svg).textContent = label(v);
            });
            // The time axis: a mark every round number of seconds, across the whole span.
            var unit = seconds.length ? seconds[0].width / 1e9 : 1;
            var span = Math.max(last - first, 1) * unit, step = niceUp(span / (narrow ? 4 : 8));
            for (var t = Math.ceil(first * unit / step) * step; t <= last * unit + 1e-9; t += step) {
              var at = x(t / unit);
              el("line", { x1: at, y1: height - bottom, x2: at, y2: height - bottom + 4, stroke: "#888" }, svg);
              el("text", { "class": "tick time", x: at, y: height - bottom + 16, "text-anchor": "middle", "font-size": 11, fill: "#555" }, svg).textContent =
                (Math.round(t * 1000) / 1000) + " s";
            }
            el("text", { x: width - right, y: height - 2, "text-anchor": "end", "font-size": 11, fill: "#555" }, svg).textContent = "seconds of the run";
            keys.forEach(function (key, k) {
              [0, 1].forEach(function (series) {
                var points = [];
                seconds.forEach(function (second) {
                  var group = second.groups[k]; if (!group) { return; }
                  var v = value(group)[series];
                  if (v !== null && v !== undefined && v > 0) { points.push(x(second.index).toFixed(1) + "," + y(v).toFixed(1)); }
                });
                if (points.length > 1) {
                  el("polyline", { points: points.join(" "), fill: "none", stroke: colours[k % colours.length], "stroke-width": 2,
                    "stroke-dasharray": series === 1 ? "5 4" : "none" }, svg);
                }
              });
            });
            seconds.forEach(function (second) {
              var g = el("g", { "class": "second", "data-index": second.index }, svg);
              second.groups.forEach(function (group, k) {
                value(group).forEach(function (v, series) {
                  if (v === null || v === undefined || v <= 0) { return; }
                  var point = el("circle", { cx: x(second.index), cy: y(v), r: 3, fill: colours[k % colours.length] }, g);
                  el("title", {}, point).textContent = keys[k] + ", second " + second.index + ": " + label(v);
                });
              });
            });
            box.replaceChildren(svg);
            var legend = document.createElement("p"); legend.className = "legend";
            keys.forEach(function (key, k) {
              var item = document.createElement("span"), swatch = document.createElement("i");
              swatch.style.background = colours[k % colours.length]; item.appendChild(swatch);
              item.appendChild(document.createTextNode(key)); legend.appendChild(item);
            });
            box.appendChild(legend);
          }
          function draw() {
            var latest = seconds[seconds.length - 1], width = latest.width / 1e9;
            var body = document.querySelector("#groups tbody"); body.replaceChildren();
            latest.groups.forEach(function (group, k) {
              var row = body.insertRow();
              [keys[k], (group.exchanges / width).toFixed(1), time(group.p50), time(group.p99),
                (group.errors / width).toFixed(1), String(totals[k] || 0)].forEach(function (text) {
                row.insertCell().textContent = text;
              });
            });
            chart("latency", function (group) { return [group.p50, group.p99]; }, true, time);
            chart("rate", function (group) { return [group.exchanges / width, null]; }, false, function (v) { return parseFloat(v.toFixed(2)) + "/s"; });
          }
          var source = new EventSource("events");
          source.onmessage = function (message) {
            var second = JSON.parse(message.data);
            if (second.state === "writing") { status.textContent = "Measured: writing the reports…"; return; }
            if (!keys.length) { keys = second.groups.map(function (group) { return group.key; }); }
            second.groups.forEach(function (group, k) { totals[k] = (totals[k] || 0) + group.exchanges; });
            seconds.push(second);
            status.textContent = "Running: second " + second.index + ", " + second.exchanges + " exchanges in it, " + second.errors + " failed.";
            draw();
          };
          source.addEventListener("end", function (message) {
            var end = JSON.parse(message.data);
            status.className = "banner pass ended";
            status.textContent = "The run has ended" + (end.reports ? ": its reports are in " + end.reports : ".");
            source.close();
          });
          source.onerror = function () {
            if (!status.classList.contains("ended")) { status.textContent = "The live view is gone: the run has ended or its lab stopped."; }
            source.close();
          };
        })();
        """
}
