"""Open a rendered page in headless Chromium and read what a small probe script measured.

No new dependency: a copy of the page gets a probe <script> appended and is shown in an
<iframe> exactly `width` px wide (headless Chromium will not open a window narrower than
500 px, so a phone's 390 px needs the frame); the wrapper page copies the probe's findings
(JSON) out of the frame, and `chromium --dump-dom` prints them after the load event.
Screenshots are for looking at by hand (`screenshot`), never committed.
"""

from __future__ import annotations

import json
from html import unescape as html_unescape
import os
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path
from typing import Any

import pytest

PROBE = """<script>(function () {
  var box = function (e) { var b = e.getBoundingClientRect(); return {x: b.left, y: b.top, w: b.width, h: b.height}; };
  var svgs = Array.prototype.slice.call(document.querySelectorAll("body svg")).map(function (s) {
    var b = s.getBoundingClientRect(), holder = s.parentElement;
    var scale = s.viewBox.baseVal && s.viewBox.baseVal.width ? b.width / s.viewBox.baseVal.width : 0;
    return {cls: s.getAttribute("class") || "", box: box(s), bytes: s.outerHTML.length,
            shown: getComputedStyle(s).display !== "none",
            fontPx: Array.prototype.slice.call(s.querySelectorAll("text")).map(function (t) {   // as drawn on screen
              return parseFloat(getComputedStyle(t).fontSize) * scale; }),
            viewWidth: s.viewBox.baseVal ? s.viewBox.baseVal.width : 0, holderWidth: holder.clientWidth,
            holderScrolls: holder.scrollWidth > holder.clientWidth + 1,     // a chart read by scrolling its box
            textsOutside: Array.prototype.slice.call(s.querySelectorAll("text")).filter(function (t) {
              var r = t.getBoundingClientRect();   // a label running past the chart's edge is cut there
              return r.width > 0 && (r.left < b.left - 0.5 || r.right > b.right + 0.5); }).map(function (t) {
              return t.textContent.slice(0, 40); }),
            labels: Array.prototype.slice.call(s.querySelectorAll("text.lbl")).map(box)};
  });
  var colour = function (e) {      // what a reader sees: text colour (an SVG text's fill) on its background
    var css = getComputedStyle(e), fg = e instanceof SVGElement ? css.fill : css.color, up = e, bg = "canvas";
    while (up && up.nodeType === 1) {
      var c = getComputedStyle(up).backgroundColor;
      if (c && c !== "transparent" && !/rgba\\(.*, 0\\)$/.test(c)) { bg = c; break; }
      up = up.parentElement;
    }
    return [fg, bg];
  };
  var texts = {};
  document.querySelectorAll("body *").forEach(function (e) {
    if (e.closest("title, script, style, #mfu-probe")) return;
    var own = Array.prototype.some.call(e.childNodes, function (n) { return n.nodeType === 3 && n.data.trim(); });
    var r = e.getBoundingClientRect();
    if (!own || r.width === 0 || r.height === 0) return;
    var c = colour(e), key = e.tagName + " " + c.join(" on ");
    if (!(key in texts))
      texts[key] = {fg: c[0], bg: c[1], first: e.tagName.toLowerCase() + ": " + e.textContent.trim().slice(0, 40)};
  });
  var marks = {};   // chart marks: the colour they are drawn with (presentation attribute) and the colour shown
  var shapes = document.querySelectorAll("svg.chart rect, svg.chart circle, svg.chart line, svg.chart polyline");
  shapes.forEach(function (e) {
    var css = getComputedStyle(e), m = [e.getAttribute("fill") || "", css.fill, e.getAttribute("stroke") || "",
                                        css.stroke];
    marks[m.join("|")] = {fillAttr: m[0], fill: m[1], strokeAttr: m[2], stroke: m[3], bg: colour(e)[1]};
  });
  var refs = [];
  document.querySelectorAll("[src], link[href], use[href], image, object, iframe, embed").forEach(function (e) {
    refs.push(e.outerHTML.slice(0, 120)); });
  document.querySelectorAll("[style]").forEach(function (e) {
    if (/url\\(/.test(e.getAttribute("style"))) refs.push(e.outerHTML.slice(0, 120)); });
  var broken = [];     // table-cell words split across lines: letters or digits on both sides of a line break
  document.querySelectorAll("th, td").forEach(function (cell) {
    var walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT), node, m, re = /[A-Za-z0-9]+/g;
    while ((node = walk.nextNode())) {
      var css = getComputedStyle(node.parentElement);
      if (css.overflowWrap === "anywhere" || css.wordBreak === "break-all") continue;   // allowed on purpose (hashes)
      while ((m = re.exec(node.data))) {
        var r = document.createRange(); r.setStart(node, m.index); r.setEnd(node, m.index + m[0].length);
        var tops = {};
        Array.prototype.forEach.call(r.getClientRects(), function (b) { if (b.width > 0) tops[Math.round(b.top)] = 1; });
        if (Object.keys(tops).length > 1) broken.push(m[0]);
      }
    }
    var token = cell.textContent.trim();   // a cell of one token (a job name): not split at a hyphen either
    if (token && !/\\s/.test(token)) {
      var lines = [], texts = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT), t;
      while ((t = texts.nextNode())) {
        if (getComputedStyle(t.parentElement).overflowWrap === "anywhere") continue;   // allowed on purpose
        var whole = document.createRange(); whole.selectNodeContents(t);
        Array.prototype.forEach.call(whole.getClientRects(), function (b) {
          if (b.width > 0 && !lines.some(function (y) { return Math.abs(y - b.top) < 4; })) lines.push(b.top); });
      }
      if (lines.length > 1) broken.push(token);
    }
  });
  var squeezed = [];   // prose cells squeezed to a word or two per line: more than 3 lines, under 3 words a line
  document.querySelectorAll("td").forEach(function (cell) {
    var words = cell.textContent.trim().split(/\\s+/).filter(Boolean).length;
    var r = document.createRange(); r.selectNodeContents(cell);
    var tops = [];
    Array.prototype.forEach.call(r.getClientRects(), function (b) {
      if (b.width > 0 && !tops.some(function (t) { return Math.abs(t - b.top) < 6; })) tops.push(b.top); });
    if (tops.length > 3 && words / tops.length < 3) squeezed.push(cell.textContent.trim().slice(0, 40));
  });
  var offscreen = [];  // prose cells (8 words or more) reaching past the right edge of the window: read by scrolling
  document.querySelectorAll("td").forEach(function (cell) {
    var words = cell.textContent.trim().split(/\\s+/).filter(Boolean).length;
    if (words >= 8 && cell.getBoundingClientRect().right > window.innerWidth + 1) offscreen.push(cell.textContent.trim().slice(0, 40));
  });
  var narrow = [];     // long prose cells (20 words or more) in a column under 16 em wide: read a few words a line
  document.querySelectorAll("td").forEach(function (cell) {
    var words = cell.textContent.trim().split(/\\s+/).filter(Boolean).length, w = cell.getBoundingClientRect().width;
    if (words >= 20 && w > 0 && w < 16 * parseFloat(getComputedStyle(cell).fontSize))
      narrow.push(cell.textContent.trim().slice(0, 40));
  });
  var scrolling = [];  // table boxes read by scrolling sideways, each by its first cell ('item', 'operator')
  document.querySelectorAll("div.scroll").forEach(function (box) {
    if (box.scrollWidth > box.clientWidth + 1) {
      var first = box.querySelector("th, td");
      scrolling.push(first ? first.textContent.trim().slice(0, 40) : "");
    }
  });
  var boxes = Array.prototype.map.call(document.querySelectorAll("div.scroll"), function (b) {   // where each table box is
    var r = box(b); r.scrolls = b.scrollWidth > b.clientWidth + 1; return r; });
  var out = {innerWidth: window.innerWidth, scrollingBoxes: scrolling, scrollBoxes: boxes, texts: Object.values(texts), marks: Object.values(marks),
             inkAttr: Array.prototype.slice.call(document.querySelectorAll("svg.chart")).map(function (s) {
               return [s.getAttribute("fill"), getComputedStyle(s).fill]; }),
             brokenWords: broken, squeezedCells: squeezed, offscreenProse: offscreen, narrowProse: narrow,
             scrollWidth: document.documentElement.scrollWidth,
             bodyScrollWidth: document.body.scrollWidth, svgs: svgs, refs: refs,
             resources: performance.getEntriesByType("resource").map(function (r) { return r.name; }),
             styleUrls: Array.prototype.slice.call(document.querySelectorAll("style")).some(function (s) {
               return /url\\(|@import/.test(s.textContent); })};
  var pre = document.createElement("pre"); pre.id = "mfu-probe"; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();</script>"""

WRAPPER = """<!DOCTYPE html><html><body style="margin:0"><iframe src="{src}" width="{width}" height="{height}"
style="border:0;display:block" onload="var p = this.contentDocument.getElementById('mfu-probe');
document.getElementById('out').textContent = p ? p.textContent : 'no probe';"></iframe>
<pre id="out"></pre></body></html>"""
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
         "--allow-file-access-from-files"]     # lets the wrapper read its frame


def chromium() -> str:
    """The browser, or a skip with the reason (a failure under CI=true, where .ci/run installs it)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if os.environ.get("CI") == "true":
        pytest.fail("chromium is not installed: .ci/run installs the Debian package `chromium`")
    pytest.skip("headless Chromium not found (Debian package `chromium`); the browser checks need it")


def _run(args: list[str], profile: Path) -> str:
    done = subprocess.run([chromium(), *FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=120, check=False)
    return done.stdout


def _framed(page: Path, width: int, height: int, probe: bool) -> tuple[Path, Path]:
    """The page copy (with the probe) and its wrapper, both beside the page so relative links hold."""
    copy = page.with_name(f".probe-{width}-{page.name}")
    html = page.read_text(encoding="utf-8")
    copy.write_text(html.replace("</body>", PROBE + "</body>") if probe else html, encoding="utf-8")
    wrapper = page.with_name(f".frame-{width}-{page.name}")
    wrapper.write_text(WRAPPER.format(src=copy.name, width=width, height=height), encoding="utf-8")
    return copy, wrapper


def scheme(dark: bool) -> str:
    """The flag that makes the pages see a dark (or light) system theme: `prefers-color-scheme` (Blink's enum:
    0 dark, 1 light), set either way so the machine's own setting never decides."""
    return f"--blink-settings=preferredColorScheme={0 if dark else 1}"


def probe(page: Path, width: int, tmp: Path, dark: bool = False) -> dict[str, Any]:
    """Findings of the probe for `page` in a frame `width` px wide, with a light or a dark system theme."""
    copy, wrapper = _framed(page, width, 2000, probe=True)
    try:
        dom = _run([scheme(dark), f"--window-size={max(width, 500)},2000", "--dump-dom", wrapper.resolve().as_uri()],
                   tmp / f"profile-{width}")
    finally:
        copy.unlink()
        wrapper.unlink()
    found = re.search(r'<pre id="out">(\{.*?)</pre>', dom, re.S)
    assert found, f"the probe did not report for {page.name} at {width} px:\n{dom[-2000:]}"
    return json.loads(html_unescape(found.group(1)))


def screenshot(page: Path, width: int, png: Path, tmp: Path, height: int = 2400, dark: bool = False) -> None:
    """A PNG of the page in a frame `width` px wide, to look at by hand."""
    copy, wrapper = _framed(page, width, height, probe=False)
    try:
        _run([scheme(dark), f"--window-size={max(width, 500)},{height}", f"--screenshot={png}",
              wrapper.resolve().as_uri()],
             tmp / f"shot-{width}")
    finally:
        copy.unlink()
        wrapper.unlink()


def pixels(png: Path) -> tuple[int, int, list[list[tuple[int, int, int]]]]:
    """Width, height and rows of (r, g, b) of a screenshot: Chromium writes 8-bit RGB(A) PNGs, not interlaced
    (PNG specification, 'Filtering': each row's filter undone from the row before)."""
    data, pos, idat = png.read_bytes(), 8, b""
    while pos < len(data):
        size, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + size]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
            n = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + size
    raw, stride, rows, prev = zlib.decompress(idat), width * n, [], bytearray(width * n)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a, b, c = (line[i - n] if i >= n else 0), prev[i], (prev[i - n] if i >= n else 0)
            p = a + b - c
            line[i] = (line[i] + (0, a, b, (a + b) // 2, a if abs(p - a) <= min(abs(p - b), abs(p - c))
                                  else b if abs(p - b) <= abs(p - c) else c)[kind]) & 255
        rows.append([tuple(line[x * n:x * n + 3]) for x in range(width)])
        prev = line
    return width, height, rows


def rgb(css: str) -> tuple[float, float, float, float]:
    """A computed colour ('rgb(1, 2, 3)', 'rgba(1, 2, 3, 0.5)') or a presentation attribute ('#abc', '#aabbcc')."""
    if css.startswith("#"):
        h = css[1:] if len(css) == 7 else "".join(c * 2 for c in css[1:])
        return (int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16), 1.0)
    parts = [float(v) for v in re.findall(r"[\d.]+", css)]
    return (parts[0], parts[1], parts[2], parts[3] if len(parts) > 3 else 1.0)


def luminance(css: str) -> float:
    """Relative luminance, WCAG 2.2 (Understanding SC 1.4.3, 'relative luminance')."""
    lin = [v / 255 / 12.92 if v / 255 <= 0.04045 else ((v / 255 + 0.055) / 1.055) ** 2.4 for v in rgb(css)[:3]]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(fg: str, bg: str) -> float:
    """Contrast ratio (L1 + 0.05) / (L2 + 0.05), WCAG 2.2; a translucent foreground is blended over bg first."""
    f, b = rgb(fg), rgb(bg)
    mixed = "rgb(" + ", ".join(str(f[3] * f[i] + (1 - f[3]) * b[i]) for i in range(3)) + ")"
    hi, lo = sorted((luminance(mixed), luminance(bg)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)
