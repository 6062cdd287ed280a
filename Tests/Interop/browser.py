#!/usr/bin/env python3
"""Opens a page in headless Chromium (Debian's `chromium`) and reports what a person would see.

    browser.py report URL --screenshots DIR [--widths 1280,400]
        Loads URL, waits for it, and prints one JSON object: the console messages and uncaught
        exceptions, every network request the page made (its own URL aside), each table's cells
        (text and data-value) by its group, the comparisons' sentences, the time units each
        table names and writes, the characters that need an emoji font, and the screenshots it
        wrote (full page, one per width, and the first screen at the first width:
        report-WIDTH-top.png); and, per width, how the charts' text lies (`chartText`: every
        chart title that leaves its chart's box, every text drawn under 10 px, the smallest).

    browser.py watch URL --seconds N --selector CSS [--selector CSS…] [--texts CSS…]
        Loads URL and, once a second for N seconds, counts the elements each CSS selector
        matches, and reads the texts of those each --texts selector matches; prints the counts
        (a list per selector) and texts (a list of lists per --texts selector), with the
        console messages, exceptions and requests, as JSON.

It speaks the DevTools protocol over --remote-debugging-pipe (file descriptors 3 and 4,
messages ended by NUL), so it needs nothing beyond Python's standard library.
"""
import argparse
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


class Browser:
    def __init__(self):
        binary = shutil.which("chromium") or shutil.which("chromium-browser")
        if binary is None:
            sys.exit("chromium is not installed (apt-get install chromium)")
        self.profile = tempfile.mkdtemp(prefix="lab-chromium-")
        # Our ends are close-on-exec (os.pipe's default); the child's are moved to 3 and 4,
        # by way of new numbers in case either already is 3 or 4.
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()

        def child_fds():
            reading, writing = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(reading, 3)
            os.dup2(writing, 4)

        self.process = subprocess.Popen(
            [binary, "--headless=new", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
             "--no-first-run", "--no-default-browser-check", "--disable-extensions",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--hide-scrollbars", "--mute-audio", f"--user-data-dir={self.profile}", "about:blank"],
            close_fds=False, preexec_fn=child_fds,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.buffer = b""
        self.next_id = 0
        self.events = []
        self.session = None

    def close(self):
        try:
            self.call("Browser.close", session=False)
        except Exception:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(self.profile, ignore_errors=True)

    def read_message(self, deadline):
        while b"\0" not in self.buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("chromium did not answer in time")
            chunk = os.read(self.from_browser, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed its pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, params=None, session=True, timeout=60):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            answer = self.read_message(deadline)
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            self.events.append(answer)

    def wait_for(self, method, timeout=60):
        deadline = time.monotonic() + timeout
        for index, event in enumerate(self.events):
            if event.get("method") == method:
                return self.events.pop(index)
        while True:
            event = self.read_message(deadline)
            if event.get("method") == method:
                return event
            self.events.append(event)

    def drain(self, seconds):
        """Keeps reading events for `seconds`."""
        deadline = time.monotonic() + seconds
        import select
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            ready, _, _ = select.select([self.from_browser], [], [], left)
            if ready:
                chunk = os.read(self.from_browser, 1 << 20)
                if not chunk:
                    return
                self.buffer += chunk
                while b"\0" in self.buffer:
                    message, self.buffer = self.buffer.split(b"\0", 1)
                    self.events.append(json.loads(message))

    def open(self, url, width):
        target = self.call("Target.createTarget", {"url": "about:blank"}, session=False)
        attached = self.call("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}, session=False)
        self.session = attached["sessionId"]
        for domain in ("Page", "Runtime", "Network", "Log"):
            self.call(f"{domain}.enable")
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600})
        self.call("Page.navigate", {"url": url})
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"evaluation failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path, width):
        size = self.evaluate("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
        height = max(900, min(int(size[1]), 16000))
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})
        shot = self.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
        with open(path, "wb") as file:
            file.write(base64.b64decode(shot["data"]))
        return {"path": path, "width": width, "pageWidth": size[0], "height": height}

    def problems(self, own_url):
        console, exceptions, requests = [], [], []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.consoleAPICalled":
                console.append({"type": params.get("type"),
                                "text": " ".join(str(arg.get("value", arg.get("description", ""))) for arg in params.get("args", []))})
            elif method == "Log.entryAdded":
                entry = params.get("entry", {})
                console.append({"type": entry.get("level"), "text": entry.get("text"), "url": entry.get("url")})
            elif method == "Runtime.exceptionThrown":
                exceptions.append(params.get("exceptionDetails", {}).get("exception", {}).get("description")
                                  or params.get("exceptionDetails", {}).get("text"))
            elif method == "Network.requestWillBeSent":
                url = params.get("request", {}).get("url", "")
                if url != own_url:
                    requests.append(url)
        return console, exceptions, requests


TABLES = """
(() => {
  const cells = (row) => Array.from(row.cells).map((cell) => ({
    text: cell.textContent.trim(), value: cell.getAttribute('data-value') }));
  const table = (element) => ({
    kind: element.getAttribute('data-table'),
    headings: Array.from(element.querySelectorAll('thead th')).map((th) => th.textContent.trim()),
    rows: Array.from(element.tBodies[0] ? element.tBodies[0].rows : []).map((row) => ({
      step: row.getAttribute('data-step'), cells: cells(row) })) });
  return {
    title: document.title,
    groups: Array.from(document.querySelectorAll('[data-group]')).map((group) => ({
      group: group.getAttribute('data-group'),
      ownRate: (group.querySelector('[data-own-rate]') || {getAttribute: () => null}).getAttribute('data-own-rate'),
      table: table(group.querySelector('table')) })),
    comparisons: Array.from(document.querySelectorAll('.comparison')).map((pair) => ({
      baseline: pair.getAttribute('data-baseline'), candidate: pair.getAttribute('data-candidate'),
      sentence: (pair.querySelector('p.verdict') || {textContent: ''}).textContent,
      table: table(pair.querySelector('table')) })),
    thresholds: Array.from(document.querySelectorAll('table[data-table=thresholds] tbody tr')).map(cells),
    charts: document.querySelectorAll('.chart svg').length,
    passed: (document.querySelector('.banner') || {getAttribute: () => null}).getAttribute('data-passed'),
  };
})()
"""


# The units each table names and writes, and the characters that need an emoji font, as
# Chromium renders the page: a table's headings name its time unit (`p50 (ms)`), its cells
# after the first may write one after a number (`2.9 ms`).
TABLE_UNITS = r"""
(() => {
  const named = (text) => { const m = text.match(/\((ns|µs|ms|s)\)$/); return m ? m[1] : null; };
  const written = (text) => Array.from(text.matchAll(/\d\s?(ns|µs|us|ms|s)(?![A-Za-z\/])/g))
    .map((m) => (m[1] === 'us' ? 'µs' : m[1]));
  const emoji = (c) => { const p = c.codePointAt(0);
    return (p >= 0x2600 && p <= 0x27BF) || (p >= 0x2B00 && p <= 0x2BFF) || p === 0xFE0F || p >= 0x1F000; };
  return {
    tables: Array.from(document.querySelectorAll('table')).map((table) => {
      const headings = Array.from(table.querySelectorAll('thead th')).map((th) => th.innerText.trim());
      const cells = Array.from(table.querySelectorAll('tbody td:not(:first-child)')).map((td) => td.innerText.trim());
      return { kind: table.getAttribute('data-table'), headings: headings,
        named: Array.from(new Set(headings.map(named).filter((unit) => unit))),
        written: Array.from(new Set(cells.flatMap(written))) };
    }),
    emoji: Array.from(document.body.innerText).filter(emoji).map((c) => 'U+' + c.codePointAt(0).toString(16)),
  };
})()
"""


CHART_TEXT = """
(() => {
  // Folded charts are measured too: every <details> open while measuring, as before after.
  const folded = Array.from(document.querySelectorAll('details')).filter((details) => !details.open);
  folded.forEach((details) => { details.open = true; });
  const shown = Array.from(document.querySelectorAll('svg')).filter((svg) => {
    const box = svg.getBoundingClientRect();
    return box.width > 0 && box.height > 0 && svg.closest('.chart, .chart-narrow');
  });
  const name = (svg) => (svg.querySelector('title') || {textContent: ''}).textContent;
  const cut = [], outside = [], small = [];
  let smallest = null;
  shown.forEach((svg) => {
    const box = svg.getBoundingClientRect();
    const scale = svg.getScreenCTM().a;
    svg.querySelectorAll('text').forEach((text) => {
      const own = text.getBoundingClientRect();
      const inside = own.left >= box.left - 0.5 && own.right <= box.right + 0.5
        && own.top >= box.top - 0.5 && own.bottom <= box.bottom + 0.5;
      const entry = {chart: name(svg), text: text.textContent,
        box: [own.left - box.left, own.right - box.left, box.width].map((v) => Math.round(v * 10) / 10)};
      if (!inside) { (text.classList.contains('title') ? cut : outside).push(entry); }
      const size = parseFloat(getComputedStyle(text).fontSize) * scale;
      if (smallest === null || size < smallest) { smallest = size; }
      if (size < 10) { small.push(Object.assign(entry, {size: Math.round(size * 100) / 100})); }
    });
  });
  folded.forEach((details) => { details.open = false; });
  return {charts: shown.length, titles: document.querySelectorAll('svg text.title').length,
          cut: cut, outside: outside, small: small, smallest: smallest};
})()
"""


def report(arguments):
    browser = Browser()
    try:
        widths = [int(width) for width in arguments.widths.split(",")]
        os.makedirs(arguments.screenshots, exist_ok=True)
        browser.open(arguments.url, widths[0])
        browser.drain(0.5)
        page = browser.evaluate(TABLES)
        page["units"] = browser.evaluate(TABLE_UNITS)
        top = browser.call("Page.captureScreenshot", {"format": "png"})
        with open(os.path.join(arguments.screenshots, f"report-{widths[0]}-top.png"), "wb") as file:
            file.write(base64.b64decode(top["data"]))
        shots, chart_text = [], {}
        for width in widths:
            browser.call("Emulation.setDeviceMetricsOverride",
                         {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600})
            browser.drain(0.3)
            chart_text[str(width)] = browser.evaluate(CHART_TEXT)
            shots.append(browser.screenshot(os.path.join(arguments.screenshots, f"report-{width}.png"), width))
        console, exceptions, requests = browser.problems(arguments.url)
        print(json.dumps({"page": page, "console": console, "exceptions": exceptions,
                          "requests": requests, "screenshots": shots, "chartText": chart_text}))
    finally:
        browser.close()


def watch(arguments):
    browser = Browser()
    try:
        browser.open(arguments.url, 1280)
        counts = {selector: [] for selector in arguments.selector}
        texts = {selector: [] for selector in arguments.texts or []}
        for _ in range(arguments.seconds):
            browser.drain(1.0)
            for selector in arguments.selector:
                counts[selector].append(browser.evaluate(f"document.querySelectorAll({json.dumps(selector)}).length"))
            for selector in texts:
                texts[selector].append(browser.evaluate(
                    f"Array.from(document.querySelectorAll({json.dumps(selector)})).map((e) => e.textContent)"))
        console, exceptions, requests = browser.problems(arguments.url)
        print(json.dumps({"counts": counts, "texts": texts, "console": console, "exceptions": exceptions,
                          "requests": requests}))
    finally:
        browser.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    one = commands.add_parser("report")
    one.add_argument("url")
    one.add_argument("--screenshots", required=True)
    one.add_argument("--widths", default="1280,400")
    two = commands.add_parser("watch")
    two.add_argument("url")
    two.add_argument("--seconds", type=int, default=10)
    two.add_argument("--selector", action="append", required=True)
    two.add_argument("--texts", action="append")
    arguments = parser.parse_args()
    {"report": report, "watch": watch}[arguments.command](arguments)


if __name__ == "__main__":
    main()
