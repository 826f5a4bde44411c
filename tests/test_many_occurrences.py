"""Issue #33: a result with thousands of occurrences is summarised on its pages, not printed row by row: the tables
with a row per occurrence list the first render.LISTED_ROWS and say how many are left out (result.json keeps
every one), and the step chart draws a bar per group of consecutive occurrences once they outnumber its marks."""

from __future__ import annotations

import copy
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from pipeline.report import charts, render

DEMO = json.loads((Path(__file__).resolve().parents[1] / "reports/demo/result.json").read_text())


def _many(n: int) -> dict:
    """The demo's result with its occurrences and step parts repeated to n rows, numbered 1..n, step i lasting
    (1 + i % 7) ms."""
    r = copy.deepcopy(DEMO)
    occ, parts = r["occurrences"], r["step_parts"]
    r["occurrences"] = [{**occ[i % len(occ)], "index": i + 1, "step_time_s": (1 + (i + 1) % 7) / 1e3}
                        for i in range(n)]
    r["step_parts"] = [{**parts[i % len(parts)], "occurrence": i + 1} for i in range(n)]
    return r


def test_the_pages_list_the_first_rows_and_say_how_many_are_left_out():
    n = 2500
    files = render.render_all(_many(n))
    md, html = files["report.md"], files["report.html"]
    listed = render.LISTED_ROWS
    assert listed == 100
    # the occurrence table's rows begin '| <index> | '; the step parts' '| <occurrence> | <step ms>'
    occurrence_rows = re.findall(r"^\| (\d+) \| all", md, re.M)
    assert occurrence_rows == [str(i) for i in range(1, listed + 1)]
    assert "The first 100 of 2,500 occurrences are listed (2,400 left out): result.json's `occurrences` holds " \
           "every one" in md
    assert "The first 100 of 2,500 rows are listed (2,400 left out): result.json's `step_parts` holds every one." in md
    assert "The first 100 of 2,500 occurrences are listed (2,400 left out): result.json's <code>occurrences</code>" \
        in html
    assert "result.json's <code>step_parts</code> holds every one." in html
    assert len(json.loads(files["result.json"])["occurrences"]) == n


def test_a_few_occurrences_are_all_listed_without_the_line():
    files = render.render_all(_many(render.LISTED_ROWS))
    for page in (files["report.md"], files["report.html"]):
        assert "occurrences are listed (" not in page and "rows are listed (" not in page
    assert len(re.findall(r"^\| (\d+) \| all", files["report.md"], re.M)) == render.LISTED_ROWS


def test_the_step_chart_draws_a_bar_per_group_of_consecutive_occurrences():
    """CHART_W 620 less 86 px of margins, 2 px per mark: 267 marks; 30,000 occurrences are 113 per bar (the last bar
    holds the 55 left; 266 bars), each bar from its group's shortest to its longest step, the median line as before."""
    r = _many(30_000)
    svg = ET.fromstring(charts.steps(r))
    bars = [b for b in svg.iter("line") if b.find("title") is not None]
    assert len(bars) == 266 and not list(svg.iter("circle"))
    assert bars[0].find("title").text == "occurrences 1–113: 1.000\u00a0ms to 7.000\u00a0ms"
    assert bars[-1].find("title").text == "occurrences 29946–30000: 1.000\u00a0ms to 7.000\u00a0ms"
    assert any(t.text == "occurrence, 113 per bar (shortest to longest)" for t in svg.iter("text"))
    few = ET.fromstring(charts.steps(_many(267)))
    assert len(list(few.iter("circle"))) == 267                  # as many as fit: one point each, as before
