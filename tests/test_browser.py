"""The pages as readers see them: headless Chromium at a phone's 390 px, a desktop's 1400 px and a wide 1920 px.

Renders the demo report, a 16-rank report, an index with a failed and a missed-threshold
job, a compare and a history with a flagged change and a run not comparable with the one before, then reads a probe's measurements from the live DOM
(tests/browser.py): no sideways scrolling of the page, no word in a table cell split across lines
(a long row scrolls in its table's box), no prose cell squeezed to a word a line on a desktop, every
chart drawn with a size and seen whole within the screen, the roofline's labels present and apart, the
timeline within its stated size, nothing fetched; with a dark system theme, a dark page whose text and
chart labels keep 4.5:1 contrast, and the light theme's colours as they were.
Skips with the reason when Chromium is missing, except under CI=true (.ci/run installs it).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from pipeline.cli import main
from tests import browser
from tests.test_run_synth import write_job

pytestmark = pytest.mark.slow      # a headless browser per page and width: the slow tier (.ci/run)

REPO = Path(__file__).resolve().parents[1]
TIMELINE_MAX = (1016, 760)        # px at full size: 16 device groups at most (charts.PLOT_PX + margins)
# the phone drawing (phone_charts.py), 16 devices: legend's second line at 34, lanes from 46; NVTX range 16 + 12 + 8;
# a device 16 + (9 + 1) * 2 + (5 + 1) * 2 + 8 = 56; axis 42: 46 + 36 + 16 * 56 + 42 = 1020
PHONE_TIMELINE_MAX = (360, 1020)
# charts with a phone drawing, which shows on screens narrower than (_style.html.j2): where the desktop drawing's
# 13-px labels would be under 9 px (timeline, 1016 px) or 11.9 px (620 px: they span the screen under 600 px)
PHONE_BELOW = {"chart-timeline": 741, "chart-devices": 601, "chart-steps": 601, "chart-roofline": 601,
               "chart-history": 601, "chart-waterfall": 601}


def _job(folder: Path, name: str, trace: Path, **over) -> Path:
    over = {"workload": {"seq_len": 8192, "global_batch": 1}, **over}
    path = write_job(folder, trace, model={"preset": "llama-3-8b"}, name=name, **over)
    return path.rename(folder / f"{name}.yaml")


@pytest.fixture(scope="module")
def pages(synth_trace, tmp_path_factory) -> dict[str, Path]:
    browser.chromium()
    tmp = tmp_path_factory.mktemp("pages")
    small, _ = synth_trace(seed=4)
    other, _ = synth_trace(seed=5)
    big, _ = synth_trace(ranks=16, steps=4, kernels_per_step=40, seed=6)
    fast = {"gpu": "auto", "num_gpus": 2, "precision": "bf16", "peak_tflops": 50000}
    jobs = [_job(tmp, "a", small, hardware=fast), _job(tmp, "c-llama-3-8b-bf16-2xh100", other, hardware=fast),
            _job(tmp, "missed-threshold-llama-3-8b", small, hardware=fast, thresholds={"mfu_pct_wall_min": 99}),
            _job(tmp, "impossible", small),                    # MFU above 100 %: invalid
            _job(tmp, "wide", big, hardware={"gpu": "auto", "num_gpus": 16, "precision": "bf16"}),
            _job(tmp, "lost", tmp / "no-such-trace.sqlite")]
    out, hist = tmp / "reports", tmp / "history"
    for label in ("nightly-2026-11-v1", "nightly-2026-11-v2"):      # labels as CI writes them: one hyphenated word
        code = main(["run", *map(str, jobs), "--out", str(out), "--history", str(hist), "--label", label, "-j", "1"])
        assert code == 4                                        # the lost trace; the others have reports
    slower, _ = synth_trace(seed=4, step_ns=60_000_000)          # a's steps 20 % slower: run 3 is flagged
    (tmp / "v3").mkdir()
    assert main(["run", str(_job(tmp / "v3", "a", slower, hardware=fast)), "--out", str(tmp / "v3" / "reports"),
                 "--history", str(hist), "--label", "v3", "-j", "1"]) == 0
    (tmp / "v4").mkdir()                                         # a's global batch doubled: step time not comparable
    batch2 = _job(tmp / "v4", "a", slower, hardware=fast, workload={"seq_len": 8192, "global_batch": 2})
    assert main(["run", str(batch2), "--out", str(tmp / "v4" / "reports"), "--history", str(hist), "--label", "v4",
                 "-j", "1"]) == 0
    assert main(["compare", str(out / "a"), str(out / "c-llama-3-8b-bf16-2xh100"), "--max-regression", "5%", "--out", str(out / "compare")]) in (0, 1)
    assert main(["history", str(hist), "--out", str(out / "trend")]) == 0
    three = [str(out / name) for name in ("a", "c-llama-3-8b-bf16-2xh100", "missed-threshold-llama-3-8b")]
    assert main(["compare", *three, "--max-regression", "5%", "--out", str(out / "compare-3")]) in (0, 1)
    five = [*three, str(out / "impossible"), str(out / "wide")]          # two not comparable with the baseline
    assert main(["compare", *five, "--max-regression", "5%", "--out", str(out / "compare-5")]) in (0, 1)
    far = tmp / "LeiWang1999__memfusion_artifact__nightly_profiles_node17"       # a trace path with no hyphen
    far.mkdir()
    shutil.copyfile(small, far / "LeiWang1999__memfusion_artifact__report1.sqlite")
    assert main(["run", str(_job(tmp, "far", far / "LeiWang1999__memfusion_artifact__report1.sqlite", hardware=fast)),
                 "--out", str(tmp / "far-reports"), "-j", "1"]) == 0
    pr = tmp / "pull-request-4711-faster-attention-kernels" / "c-llama-3-8b-bf16-2xh100"   # one job's two runs
    shutil.copytree(out / "c-llama-3-8b-bf16-2xh100", pr)
    assert main(["compare", str(out / "c-llama-3-8b-bf16-2xh100"), str(pr), "--max-regression", "5%",
                 "--out", str(out / "compare-same")]) == 0
    shutil.copytree(REPO / "reports" / "demo", out / "demo")
    return {"demo": out / "demo" / "report.html", "wide": out / "wide" / "report.html",
            "index": out / "index.html", "compare": out / "compare" / "compare.html",
            "compare-same": out / "compare-same" / "compare.html", "compare-3": out / "compare-3" / "compare.html",
            "compare-5": out / "compare-5" / "compare.html", "far": tmp / "far-reports" / "far" / "report.html",
            "history": out / "trend" / "history.html", "impossible": out / "impossible" / "report.html"}


@pytest.mark.parametrize("width", [390, 768, 1024, 1280, 1400, 1920])
@pytest.mark.parametrize("page", ["demo", "wide", "index", "compare", "compare-3", "compare-5", "history"])
def test_page_in_a_real_browser(pages, page, width, tmp_path):
    found = browser.probe(pages[page], width, tmp_path)
    assert found["innerWidth"] == width                         # the frame really was a phone's width
    assert found["scrollWidth"] <= width, f"{page} scrolls sideways at {width} px: {found['scrollWidth']} px wide"
    assert found["refs"] == [] and found["resources"] == [] and not found["styleUrls"]      # nothing to fetch
    # a cell wraps between words only: a long row scrolls in its table's box instead ('16 × NVIDI|A H100' was
    # split at 1400 px by the page's overflow-wrap: break-word, which table cells inherited)
    # (and a job name is one word: 'multi-rank-|llama' was split at its hyphens in the index and the gate tables)
    assert found["brokenWords"] == [], f"{page} at {width} px splits words in table cells: {found['brokenWords'][:8]}"
    # prose is read without scrolling sideways: on a phone, a report's table of inputs and their sources shows
    # each row as a block (its third column was off the screen); on a wide screen the index, compare and history
    # pages use the width (history's flag column, the reason for the page, was cut off at 1920 px)
    # (compare: its gate tables stack on a phone too; a desktop: numeric headers wrap between words, so the
    # history table's flag column, cut off at 1400 px, and the index's thresholds at 1280 px fit)
    # (history and index: their tables stack on a phone too; a failed run's error was in the fifth of twelve
    # columns, its flag in the last, a failed job's reason in the index's second, all off a 390-px screen)
    # (at 768 and 1024 px, a tablet or half a desktop, history's and index's tables still scrolled sideways, their
    # flag, a failed run's error and the thresholds past the edge: between a phone and a desktop a row is a block)
    assert found["offscreenProse"] == [], f"{page} at {width} px hides prose past the edge: {found['offscreenProse']}"
    # (compare, 3 inputs: at 768 px the comparison scrolled, its third input past the edge, and a gate's result was
    # squeezed to a word a line beside the job's label: both tables are blocks there, up to the width they need)
    if page in ("history", "index") or page.startswith("compare"):
        assert found["scrollingBoxes"] == [], f"{page} at {width} px: tables read by scrolling: {found['scrollingBoxes']}"
    # (compare, 5 inputs, at 768 px: why an input is not comparable, 90 words, was in a block's 170-px column)
    # (demo: the counted-FLOPs operators' shapes, 22 words, were 92 px wide at 768 px and 170 at 1400, and at 390 px
    # at 441 to 533 px in a table 985 px wide; the roofline rows naming them were 404 px wide in a 358-px box)
    assert found["narrowProse"] == [], f"{page} at {width} px: long prose in a narrow column: {found['narrowProse']}"
    if width > 1100 or page.startswith("compare"):     # no prose cell squeezed to a word a line (history's flag was)
        assert found["squeezedCells"] == [], f"{page} at {width} px squeezes cells: {found['squeezedCells'][:4]}"
    # every chart is shown but one of the two drawings of a chart with a phone one: that on a narrow screen
    hidden = [s["cls"].split()[-1] for s in found["svgs"] if not s["shown"]]
    report = ["chart-timeline", "chart-devices", "chart-steps", "chart-roofline"]
    # (history's trend charts, and compare's waterfalls: at 390 px a waterfall's labels were 8.2 px, 13 scaled to
    # 390 / 620, when a compare page had only desktop drawings)
    own = [s["cls"].split()[-1] for s in found["svgs"] if s["cls"].endswith(("chart-history", "chart-waterfall"))]
    paired = {"demo": report, "wide": report, "history": own, "compare": own, "compare-3": own, "compare-5": own}
    if page in ("history", "compare-3", "compare-5"):
        assert len(own) >= 2
    if page == "compare":
        assert own == ["chart-waterfall"]
    assert hidden == [k if width < PHONE_BELOW[k] else f"{k}-phone" for k in paired.get(page, [])], hidden
    drawn = [s for s in found["svgs"] if s["shown"]]
    for svg in drawn:
        assert svg["box"]["w"] > 0 and svg["box"]["h"] > 0, f"{svg['cls']} has no size"
        # a chart is seen whole: within the screen, not read by scrolling its box (at 390 px the charts were held
        # at 460 px and the timeline at 720 px, cut at the screen's edge: the roofline's peak, the last steps), and
        # as large as the page allows (its labels too): its own size, else its box's width, on a phone the screen's
        left, right = svg["box"]["x"], svg["box"]["x"] + svg["box"]["w"]
        assert left >= -0.5 and right <= width + 0.5 and not svg["holderScrolls"], (
            f"{svg['cls']} on {page} at {width} px runs past the screen: {left:.0f} to {right:.0f} px")
        room = width if width < 600 else svg["holderWidth"]
        assert svg["box"]["w"] >= min(svg["viewWidth"], room) - 1, f"{svg['cls']} on {page} at {width} px is shrunk"
        assert svg["textsOutside"] == [], f"{svg['cls']} on {page} at {width} px cuts labels: {svg['textsOutside']}"
    # light theme as before dark mode came: the palette's ink on white, each chart mark in its own colour
    assert ("rgb(27, 31, 36)", "rgb(255, 255, 255)") in [(t["fg"], t["bg"]) for t in found["texts"]]
    assert all(browser.rgb(attr) == browser.rgb(shown) for attr, shown in found["inkAttr"])
    for mark in found["marks"]:
        for attr, shown in ((mark["fillAttr"], mark["fill"]), (mark["strokeAttr"], mark["stroke"])):
            if attr.startswith("#"):
                assert browser.rgb(attr) == browser.rgb(shown), f"{page}: a chart mark drawn {attr} shows {shown}"
    kinds = {(s["cls"].split() or [""])[-1]: s for s in drawn}
    if page in ("demo", "wide"):
        roof = kinds["chart-roofline" if width >= PHONE_BELOW["chart-roofline"] else "chart-roofline-phone"]
        assert len(roof["labels"]) >= 3                        # peak label and numbered operators
        boxes = [(b["x"], b["y"], b["x"] + b["w"], b["y"] + b["h"]) for b in roof["labels"]]
        clashes = [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:]
                   if a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5]
        assert clashes == [], f"roofline labels overlap on {page} at {width} px"
        kind, most = (("chart-timeline-phone", PHONE_TIMELINE_MAX) if width < PHONE_BELOW["chart-timeline"]
                      else ("chart-timeline", TIMELINE_MAX))
        line = kinds[kind]["box"]
        assert 0 < line["w"] <= most[0] and 0 < line["h"] <= most[1]
    if page == "history":
        assert len(found["svgs"]) >= 2
        assert "⚠ not comparable with run 3: step time (median) (model FLOPs per step: " in \
            pages[page].read_text(encoding="utf-8")            # the longest flag text, laid out as the others
    if page == "compare":       # an option's name is not split at its hyphens in the prose ('(--|strict would)')
        html = pages[page].read_text(encoding="utf-8")
        assert "--strict" in html and re.findall(r'(?<!class="nw">)--(?:strict|baseline|allow-incomparable)', html) == []
    if page == "wide":
        assert json.loads((pages["wide"].parent / "result.json").read_text())["timeline"]["devices_total"] == 16


@pytest.mark.parametrize("width", [390, 768, 1024, 1280])
def test_labels_of_one_jobs_runs_wrap(pages, width, tmp_path):
    """Runs of one job are headed by the job and where each came from ('job (folder/job)'); the gate tables kept
    that label on one line, as a job name: at 390 px each stacked row was as wide as the label and its verdict
    ran off the screen, and at 1280 px the label's column squeezed the verdict to a word a line."""
    html = pages["compare-same"].read_text(encoding="utf-8")
    label = "c-llama-3-8b-bf16-2xh100 (pull-request-4711-faster-attention-kernels/c-llama-3-8b-bf16-2xh100)"
    text = re.sub(r"<[^>]+>", "", html)     # its column's heading, its 2 gate rows and What changed's heading
    assert text.count(label) == 4 and f"What changed: {label} against" in text
    found = browser.probe(pages["compare-same"], width, tmp_path)
    assert found["scrollWidth"] <= width
    assert found["offscreenProse"] == [], f"verdicts past the edge at {width} px: {found['offscreenProse']}"
    assert found["brokenWords"] == [], f"words split at {width} px: {found['brokenWords'][:8]}"
    if width > 600:      # (at 768 px a gate's result was squeezed beside the label: a gate row is a block there)
        assert found["squeezedCells"] == [], f"cells squeezed at {width} px: {found['squeezedCells'][:4]}"


@pytest.mark.parametrize("page", ["demo", "far"])
def test_the_provenance_table_fits_a_phone(pages, page, tmp_path):
    """At 390 px the provenance table scrolled sideways when the trace's path had no hyphen to break at
    (.../LeiWang1999__memfusion_artifact__report1.sqlite), its hash off the screen: a path breaks anywhere,
    as a hash does."""
    found = browser.probe(pages[page], 390, tmp_path)
    assert "item" not in found["scrollingBoxes"], found["scrollingBoxes"]
    assert "LeiWang1999__memfusion_artifact__report1.sqlite" in pages["far"].read_text(encoding="utf-8")


@pytest.mark.parametrize("width, smallest", [       # by hand: the label size as drawn (font size × drawing's scale)
    (320, {"timeline": 13 * 320 / 360, "devices": 13 * 320 / 360, "steps": 13 * 320 / 360,       # 360 px in 320
           "roofline": 13 * 320 / 360}),
    (390, {"timeline": 13.0, "devices": 13.0, "steps": 13.0, "roofline": 13.0}),   # at 360 px; desktop's: 5.0, 8.2 px
    (600, {"timeline": 13.0, "devices": 13.0, "steps": 13.0, "roofline": 13.0}),
    (601, {"timeline": 13.0, "devices": 13 * (601 - 32) / 620, "steps": 13 * (601 - 32) / 620,   # 11.9 px
           "roofline": 13 * (601 - 32) / 620}),
    (740, {"timeline": 13.0, "devices": 13.0, "steps": 13.0, "roofline": 13.0}),
    (741, {"timeline": 13 * (741 - 32) / 1016, "devices": 13.0, "steps": 13.0,    # 1016 px in 741 - 2 * 16: 9.07 px
           "roofline": 13.0}),
    (1280, {"timeline": 13.0, "devices": 13.0, "steps": 13.0, "roofline": 13.0}),  # a 1068-px page: at own width
])
def test_one_drawing_of_each_chart_at_each_width_with_readable_labels(pages, width, smallest, tmp_path):
    """The report carries each chart twice, for a desktop and for a phone; the page shows
    exactly one of each at any width (the phone one below PHONE_BELOW), its labels at the size written here."""
    found = browser.probe(pages["demo"], width, tmp_path)
    for chart, size in smallest.items():
        pair = [s for s in found["svgs"] if s["cls"].split()[-1] in (f"chart-{chart}", f"chart-{chart}-phone")]
        assert len(pair) == 2
        [shown] = [s for s in pair if s["shown"]]
        phone = width < PHONE_BELOW[f"chart-{chart}"]
        assert shown["cls"].split()[-1] == f"chart-{chart}" + ("-phone" if phone else "")
        assert min(shown["fontPx"]) == pytest.approx(size, abs=0.05), chart
        assert min(shown["fontPx"]) >= (11 if phone else 9)


@pytest.mark.parametrize("width, smallest", [(320, 11 * 320 / 360), (390, 11.0), (601, 11 * (601 - 32) / 620),
                                             (1280, 11.0)])           # the run labels are 11 px, the rest 13
def test_one_drawing_of_each_history_chart_at_each_width(pages, width, smallest, tmp_path):
    """The history page's charts were 620 px: their run labels drew at 11 * 390 / 620 = 6.9 px on a phone."""
    found = browser.probe(pages["history"], width, tmp_path)
    desk = [s for s in found["svgs"] if s["cls"].split()[-1] == "chart-history"]
    phone = [s for s in found["svgs"] if s["cls"].split()[-1] == "chart-history-phone"]
    assert len(desk) == len(phone) >= 2
    shown = phone if width < PHONE_BELOW["chart-history"] else desk
    assert all(s["shown"] for s in shown) and not any(s["shown"] for s in desk + phone if s not in shown)
    assert min(min(s["fontPx"]) for s in shown) == pytest.approx(smallest, abs=0.05)


@pytest.mark.parametrize("width, smallest", [(320, 13 * 320 / 360), (390, 13.0), (601, 13 * (601 - 32) / 620),
                                             (1280, 13.0)])           # by hand: 13-px labels, at the drawing's scale
def test_one_drawing_of_each_waterfall_at_each_width(pages, width, smallest, tmp_path):
    """What changed's waterfall on the compare page was 620 px only: on a 390-px phone its labels were 8.2 px. Each
    input's waterfall has a phone drawing shown below 601 px, exactly one of the two shown at any width."""
    found = browser.probe(pages["compare-3"], width, tmp_path)
    desk = [s for s in found["svgs"] if s["cls"].split()[-1] == "chart-waterfall"]
    phone = [s for s in found["svgs"] if s["cls"].split()[-1] == "chart-waterfall-phone"]
    assert len(desk) == len(phone) == 2
    shown = phone if width < PHONE_BELOW["chart-waterfall"] else desk
    assert all(s["shown"] for s in shown) and not any(s["shown"] for s in desk + phone if s not in shown)
    assert min(min(s["fontPx"]) for s in shown) == pytest.approx(smallest, abs=0.05)
    assert all(s["textsOutside"] == [] for s in shown)


DIM_MARKS = {"#e4e4e4": "grid lines", "#c8c8c8": "idle time, faint on purpose as in the light theme",
             "#fff": "the hollow of an analytic-only marker (its dashed outline is checked)"}


@pytest.mark.parametrize("width", [390, 1400])
@pytest.mark.parametrize("page", ["demo", "wide", "index", "compare", "history", "impossible"])   # impossible: ⚠
def test_page_in_dark_mode(pages, page, width, tmp_path):
    """A dark system theme gets a dark page whose text, chart labels included, keeps 4.5:1 against what is behind
    it (WCAG 2.2 SC 1.4.3) and whose chart marks keep 3:1 (SC 1.4.11): the pages were light only, so dark-themed
    readers got a white page, and chart ink (presentation attributes) would have stayed dark on a dark page."""
    found = browser.probe(pages[page], width, tmp_path, dark=True)
    backgrounds = {t["bg"] for t in found["texts"]}
    assert "canvas" not in backgrounds, f"{page}: text on the browser's own canvas colour"
    page_bg = next(t["bg"] for t in found["texts"] if t["first"].startswith("h1:"))
    assert browser.luminance(page_bg) < 0.02, f"{page} stays light in dark mode: {page_bg}"
    low = [(t["first"], t["fg"], t["bg"], round(browser.contrast(t["fg"], t["bg"]), 2)) for t in found["texts"]
           if browser.contrast(t["fg"], t["bg"]) < 4.5]
    assert low == [], f"{page} at {width} px in dark mode: text under 4.5:1: {low}"
    if page in ("demo", "wide", "history", "impossible"):
        assert any(t["first"].startswith("text:") for t in found["texts"]), "no chart label was measured"
        dim = [(m[f"{k}Attr"], m[k], round(browser.contrast(m[k], m["bg"]), 2)) for m in found["marks"]
               for k in ("fill", "stroke") if m[f"{k}Attr"].startswith("#") and m[f"{k}Attr"] not in DIM_MARKS
               and browser.contrast(m[k], m["bg"]) < 3]
        assert dim == [], f"{page} at {width} px in dark mode: chart marks under 3:1: {dim}"
        # every chart colour has its dark counterpart (a colour new to charts.py and left out of the page's dark
        # rules would keep its light shade); the dashed outline's grey reads on both (5.3:1 on the dark page)
        same = {m[f"{k}Attr"] for m in found["marks"] for k in ("fill", "stroke") if m[f"{k}Attr"].startswith("#")
                and m[f"{k}Attr"] != "#888" and browser.rgb(m[f"{k}Attr"]) == browser.rgb(m[k])}
        assert same == set(), f"{page}: chart colours not recoloured for the dark theme: {sorted(same)}"
    assert found["refs"] == [] and found["resources"] == [] and not found["styleUrls"]      # still self-contained


def test_the_roofline_bound_is_read_on_a_phone(real_trace, tmp_path):
    """140 aten::linear ranges of a real 2-GPU H100 capture whose GPU work ends early: the whole region's row is
    bound 'mostly idle: kernels ran in 1 % of the wall (heuristic)', prose in the seventh column of a table that
    scrolled sideways at 390 px, off the screen. The roofline tables stack on a phone, a row a block."""
    browser.chromium()
    job = tmp_path / "linear.yaml"
    job.write_text(json.dumps({
        "name": "linear", "trace": str(real_trace("nsysai__h100_2gpu_1s.sqlite")),
        "region": {"name": "aten::linear", "match": "prefix"},
        "hardware": {"gpu": "h100-sxm", "num_gpus": 2, "precision": "bf16"},
        "model": {"flops_per_step": 1.0e+9}, "workload": {"mode": "inference", "global_batch": 1}}))
    assert main(["run", str(job), "--out", str(tmp_path / "r"), "-j", "1"]) == 0
    page = tmp_path / "r" / "linear" / "report.html"
    assert "mostly idle: kernels ran in 1 % of the wall (heuristic)" in page.read_text(encoding="utf-8")
    found = browser.probe(page, 390, tmp_path)
    assert found["offscreenProse"] == [], found["offscreenProse"]
    # (the counted-FLOPs operator table, also headed 'operator', scrolled at 390 px too: it stacks as the roofline's)
    assert "operator" not in found["scrollingBoxes"], found["scrollingBoxes"]


def test_why_a_run_is_not_comparable_is_read_on_a_phone(tmp_path):
    """The comparison table has a column per input: with a column not comparable with the baseline (another GPU
    type here), the reasons ('⚠ MFU (wall), ...: no (peak: ...; GPU type: ...)') and each figure's
    '⚠ not comparable' were in its third column, off a 390-px screen. The table stacks on a phone: a figure per
    block, each input's value labelled with the input."""
    from tests import fake_results as fake
    steps = [1.0, 1.01, 0.99, 1.02, 0.98, 1.0]
    docs = {"main": fake.result("step", steps),
            "pr": fake.result("step", steps, {"hardware.key": "a100-sxm-80gb", "hardware.peak_tflops": 312.0})}
    for name, doc in docs.items():
        (tmp_path / name / "step").mkdir(parents=True)
        (tmp_path / name / "step" / "result.json").write_text(json.dumps(doc))
    assert main(["compare", str(tmp_path / "main" / "step"), str(tmp_path / "pr" / "step"),
                 "--out", str(tmp_path / "c")]) == 0
    page = tmp_path / "c" / "compare.html"
    assert "GPU type: a100-sxm-80gb vs baseline h100-sxm" in page.read_text(encoding="utf-8")
    found = browser.probe(page, 390, tmp_path)
    assert found["offscreenProse"] == [], found["offscreenProse"]
    assert found["brokenWords"] == [] and found["scrollWidth"] <= 390


SHADED = "body *:not(.scroll, .scroll *, :has(.scroll)) { display: none !important; }\n" \
         ".scroll { height: 40px; overflow-y: hidden; } .scroll > table { visibility: hidden; }"


@pytest.mark.parametrize("dark", [False, True])
def test_a_table_read_by_scrolling_shows_it_scrolls(pages, dark, tmp_path):
    """At 390 px the report's numeric tables (occurrences, classes, top kernels, ...) scroll in their boxes, their
    later columns past the screen's edge with nothing showing that they go on (a phone hides its scroll bars).
    A box that scrolls is shaded on the side where more of its table lies, and only there; a box that does not
    scroll (the phone's stacked tables) is not. Measured on the screen's pixels: the page keeps only its table
    boxes, 40 px tall, their tables hidden, so a box's edges show the page's colour or the shade alone."""
    page = pages["demo"]
    for end in (False, True):                  # as opened, and each box scrolled to its table's end
        variant = page.with_name(f".shaded-{int(end)}-{int(dark)}-{page.name}")
        script = "<script>document.querySelectorAll('.scroll').forEach(function (b) { b.scrollLeft = b.scrollWidth; });</script>"
        variant.write_text(page.read_text(encoding="utf-8").replace(
            "</body>", f"<style>{SHADED}</style>{script if end else ''}</body>"), encoding="utf-8")
        try:
            found = browser.probe(variant, 390, tmp_path, dark=dark)
            # (the demo's 20 boxes, 40 px and a 12-px margin each, end near 1,050 px: all within the shot)
            browser.screenshot(variant, 390, tmp_path / "shot.png", tmp_path, height=1300, dark=dark)
        finally:
            variant.unlink()
        boxes = found["scrollBoxes"]
        assert sum(b["scrolls"] for b in boxes) >= 5 and not all(b["scrolls"] for b in boxes)
        width, height, rows = browser.pixels(tmp_path / "shot.png")
        background = rows[2][2]                                # the page's colour, top left
        for box in boxes:
            assert box["y"] + box["h"] < height
            def strip(first: int) -> float:                    # how far 3 px columns from `first` are from the page
                return max(abs(rows[y][x][i] - background[i]) for y in range(round(box["y"]) + 5, round(box["y"] + box["h"]) - 5)
                           for x in range(first, first + 3) for i in range(3))
            left, right = strip(round(box["x"]) + 1), strip(round(box["x"] + box["w"]) - 4)
            more_left, more_right = box["scrolls"] and end, box["scrolls"] and not end
            # (the counted FLOPs' kinds table was 369 px in a 358-px box: its last 11 px, under the page-coloured
            # cover of the table's end, showed no shade; a table that barely does not fit stacks on a phone instead)
            assert (left > 20, right > 20) == (more_left, more_right), (box, end, dark, left, right)
            assert (more_left or left <= 2) and (more_right or right <= 2), (box, end, dark, left, right)


@pytest.mark.parametrize("width", [360, 375, 390, 412, 430])
@pytest.mark.parametrize("page", ["compare-3", "compare-5", "compare-same"])
def test_compare_values_are_whole_on_phones(pages, page, width, tmp_path):
    """On a phone the comparison is a block a figure, each value after its input's label; with labels as long as
    CI's ('llama-3-8b-bf16-2xh100-baseline (reports/llama-3-8b-bf16-2xh100-baseline) (baseline): h100-sxm') the value
    was split at its hyphen at the line's end, at phone widths from 360 to 430 px."""
    found = browser.probe(pages[page], width, tmp_path)
    assert found["scrollWidth"] <= width
    assert found["brokenWords"] == [], f"{page} at {width} px splits words: {found['brokenWords'][:8]}"
