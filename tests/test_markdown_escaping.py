"""Text from traces and job files cannot inject HTML into report.md or break its tables."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pipeline.cli import main
from pipeline.report import mdsafe
from pipeline.report.render import render_all
from pipeline.trace.synth import SynthSpec, generate

HOSTILE = "st<img src=x onerror=alert(1)>|ep`\\"


def test_plain_text_is_escaped():
    assert mdsafe.plain("a<b>&c|d`e\\f\ng") == "a&lt;b&gt;&amp;c\\|d\\`e\\\\f g"


def test_code_spans_outlast_backticks_and_keep_pipes_out_of_tables():
    assert mdsafe.code("void k<float>") == "`void k<float>`"
    assert mdsafe.code("a``b|c\nd") == "```a``b\\|c d```"
    assert mdsafe.code("`x") == "`` `x ``"
    assert mdsafe.code("fwd|bwd", in_table=False) == "`fwd|bwd`"      # GitHub would show the backslash there


def test_a_struck_figure_is_escaped_inside_its_strikethrough_and_no_figure_is_not_struck():
    assert mdsafe.struck("1~2|3") == "~~1\\~2\\|3~~"
    assert mdsafe.struck("—") == "—" and mdsafe.struck("5 %", False) == "5 %"


def unescaped_pipes(line: str) -> int:
    """Cell separators of a GFM table row: pipes not preceded by a backslash (code spans included)."""
    return len(re.findall(r"(?<!\\)\|", line))


def tables_after_text(text: str) -> list[str]:
    """Lines of text a table follows with no blank line between: GitHub starts the table anyway, stricter
    Markdown (CommonMark without tables' interruption, Python-Markdown) reads the rows as the paragraph's text."""
    lines = text.splitlines()
    return [before for before, line in zip(lines, lines[1:])
            if line.startswith("|") and before.strip() and not before.startswith("|")]


def strip_code_spans(text: str) -> str:
    return re.sub(r"(`+)(?:(?!\1).)+?\1", "", text)


def test_report_md_of_a_hostile_trace_and_job(tmp_path: Path, capsys):
    trace = tmp_path / "t.sqlite"
    generate(SynthSpec(region=HOSTILE), trace)
    job = {"name": "hostile", "description": "<script>alert(1)</script> | pipes",
           "trace": str(trace), "region": {"name": HOSTILE},
           "hardware": {"num_gpus": 2, "precision": "bf16"}, "model": {"flops_per_step": 4.0e+13},
           "workload": {"mode": "training", "seq_len": 2048, "global_batch": 8},
           "analysis": {"kernel_classes": [{"class": "mine<b>|x", "pattern": "gemm"}]}}
    (tmp_path / "job.yaml").write_text(json.dumps(job))
    assert main(["run", str(tmp_path / "job.yaml"), "--out", str(tmp_path / "out")]) == 0, capsys.readouterr()
    md = (tmp_path / "out/hostile/report.md").read_text()
    assert HOSTILE.split("|")[0] in md                        # the names are shown ...
    outside = strip_code_spans(md)
    assert "<script" not in outside and "<img" not in outside and "<b>" not in outside   # ... but no raw HTML
    assert "&lt;script&gt;alert(1)&lt;/script&gt; \\| pipes" in md
    assert "mine&lt;b&gt;\\|x" in md
    # outside tables a code span keeps its pipe as written (the region name in the line under the title)
    [context] = [ln for ln in md.splitlines() if ln.startswith("explicit FLOPs per step")]
    assert mdsafe.code(HOSTILE, in_table=False) in context and "\\|" not in context
    table, width = [], None
    for line in md.splitlines() + [""]:                       # every row has as many cells as its header
        if line.startswith("|"):
            width = width or unescaped_pipes(line)
            assert unescaped_pipes(line) == width, line
        else:
            width = None


def test_plain_text_cannot_emphasise_strike_or_link():
    """cmark-gfm (GitHub) rendered a description's `__init__.py` as bold "init", `~~old~~` struck out and
    `*fast*` in italics; `[x](y)` would be a link. Underscores inside a word cannot emphasise and stay."""
    assert mdsafe.plain("run *fast* __init__.py ~~old~~ [x](y) [^1]") == \
        "run \\*fast\\* \\_\\_init\\_\\_.py \\~\\~old\\~\\~ \\[x\\](y) \\[^1\\]"
    assert mdsafe.plain("mfu_pct_wall_min k__5x") == "mfu_pct_wall_min k\\_\\_5x"
    # web addresses stay as written: GitHub links them, and a backslash would become part of the link
    assert mdsafe.plain("see https://x.org/a_(b)*c or www.y.com/[z]_") == "see https://x.org/a_(b)*c or www.y.com/[z]_"


def test_markdown_the_templates_write_is_not_escaped():
    """A failed threshold and a precision that does not match are bold ('**FAIL**', '**no**'), written by the
    templates, not escaped as text would be."""
    r = json.loads((Path(__file__).resolve().parents[1] / "reports/demo/result.json").read_text())
    r["job"]["description"] = "tuned *fast* ~~old~~"
    r["thresholds"][0]["passed"] = False
    r["gemm_precision"]["precisions"][0]["matches_declared"] = False
    md = render_all(r)["report.md"]
    assert "tuned \\*fast\\* \\~\\~old\\~\\~" in md
    assert any(ln.startswith("| mfu_pct_wall_min |") and ln.endswith("| **FAIL** |") for ln in md.splitlines())
    assert any(ln.startswith(f"| {r['gemm_precision']['precisions'][0]['precision']} |") and "| **no** |" in ln
               for ln in md.splitlines())


def test_quoted_parts_of_prose_are_code_on_both_pages():
    """Messages and descriptions quote names and commands in backticks, as the terminal shows them; the pages
    showed the backticks themselves (the index: "check `trace:` in the job"; the demo: "generated by `mfu demo`")."""
    from pipeline.report.render import html_ticks
    assert mdsafe.ticks("check `trace:` in the job") == "check `trace:` in the job"
    assert str(html_ticks("check `trace:` in the job")) == "check <code>trace:</code> in the job"
    # inside a quote nothing is markup either; in a table row its pipe is escaped; a lone backtick is text
    assert mdsafe.ticks("a `x|y<b>` and `b *c*") == "a `x|y<b>` and \\`b \\*c\\*"
    assert mdsafe.ticks("a `x|y`", in_table=True) == "a `x\\|y`"
    assert str(html_ticks("a `<b>` & `c")) == "a <code>&lt;b&gt;</code> &amp; `c"
    r = json.loads((Path(__file__).resolve().parents[1] / "reports/demo/result.json").read_text())
    assert "`mfu demo`" in r["job"]["description"]
    pages = render_all(r)
    assert "generated by `mfu demo`." in pages["report.md"] and "\\`" not in pages["report.md"]
    assert "generated by <code>mfu demo</code>." in pages["report.html"]


# Issue 33: every Markdown page, with hostile text in every string it prints. A name that breaks out shows as HTML
# outside a code span, a backtick outside one, entities inside one (text escaping where code was due), a line
# starting with what followed a line break, or a table row with more cells than its header.
PAGE_HOSTILE = "<script>alert(1)</script>|`]\n[x](y) *b*"
FILE_HOSTILE = "<b>|`]"                         # in file names: no slash, line break or glob
_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def split_code(line: str) -> tuple[str, list[str]]:
    """A line's text outside code spans (backslash escapes dropped) and the spans' contents, in CommonMark's
    order: an escaped backtick opens no span, a span closes at the next backtick run of its own length."""
    outside, spans, i = [], [], 0
    while i < len(line):
        if line[i] == "\\" and line[i + 1:i + 2] and line[i + 1] in _PUNCTUATION:
            i += 2
            continue
        if line[i] == "`":
            run = len(line[i:]) - len(line[i:].lstrip("`"))
            end = re.compile(r"(?<!`)" + "`" * run + r"(?!`)").search(line, i + run)
            if end:
                spans.append(line[i + run:end.start()])
                i = end.end()
                continue
            outside.append(line[i:i + run])
            i += run
            continue
        outside.append(line[i])
        i += 1
    return "".join(outside), spans


def markdown_breaks(name: str, text: str) -> list[str]:
    """Where text on the page escaped its escaping (see above); fenced code blocks are the templates' own."""
    broken, width, fenced = [], None, False
    after_break = PAGE_HOSTILE.split("\n")[1]
    for n, line in enumerate(text.splitlines() + [""], 1):
        if line.startswith("```"):
            fenced = not fenced
            continue
        outside, spans = split_code(line)
        if not fenced and ("<" in outside or "`" in outside or line.startswith(after_break)):
            broken.append(f"{name}:{n}: {line}")
        if any("&lt;" in s or "&amp;" in s for s in spans):
            broken.append(f"{name}:{n}: escaped as text inside code: {line}")
        if line.startswith("|"):
            width = width or unescaped_pipes(line)
            if unescaped_pipes(line) != width:
                broken.append(f"{name}:{n}: {unescaped_pipes(line)} cell separators, header {width}: {line}")
        else:
            width = None
    return broken


def test_split_code_follows_commonmark():
    assert split_code("a `x<b>` \\`c ``d`e`` f`") == ("a  c  f`", ["x<b>", "d`e"])


def hostile_strings(doc: object, keep: frozenset[str] = frozenset({"status"})) -> object:
    """`doc` with PAGE_HOSTILE after every string (but those of `keep`, which decide what a page shows)."""
    if isinstance(doc, dict):
        return {k: v if k in keep else hostile_strings(v, keep) for k, v in doc.items()}
    if isinstance(doc, list):
        return [hostile_strings(v, keep) for v in doc]
    return doc + PAGE_HOSTILE if isinstance(doc, str) else doc


def test_every_markdown_page_of_hostile_traces_and_jobs(tmp_path: Path, capsys):
    """Kernel, range, GPU, process, class and file names and a description, all hostile, through run (report.md,
    the counted-FLOPs section), the index, compare (What changed, the gate's summary.md) and history; then every string of each page's
    document made hostile and the page rendered again, so a field no run here fills is checked too."""
    import sqlite3
    from pipeline import ci
    from pipeline.report import index
    jobs = []
    for n, steps in (("a", 5), ("b", 6)):
        trace = tmp_path / f"{n}{FILE_HOSTILE}.sqlite"
        generate(SynthSpec(region="step" + PAGE_HOSTILE, layers=2, layer_region="layer" + PAGE_HOSTILE,
                           operator_shapes=True, gpu_name="H100" + PAGE_HOSTILE, steps=steps, seed=len(jobs)), trace)
        with sqlite3.connect(trace) as con:
            con.execute("UPDATE StringIds SET value = value || ? WHERE id IN "
                        "(SELECT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL)", (PAGE_HOSTILE,))
            con.execute("UPDATE PROCESSES SET name = name || ?", (PAGE_HOSTILE,))
        job = {"name": f"h{n}", "description": PAGE_HOSTILE, "trace": str(trace), "region": {"name": "step" + PAGE_HOSTILE},
               "hardware": {"num_gpus": 2, "precision": "bf16", "peak_tflops": 989}, "model": {"flops_per_step": 4.0e+13},
               "workload": {"mode": "training", "seq_len": 2048, "global_batch": 8},
               "analysis": {"kernel_classes": [{"class": "mine" + PAGE_HOSTILE, "pattern": "gemm"}]}}
        jobs.append(tmp_path / f"{n}.yaml")
        jobs[-1].write_text(json.dumps(job))
    missing = json.loads(jobs[0].read_text()) | {"name": "hc", "region": {"name": "none" + PAGE_HOSTILE}}
    jobs.append(tmp_path / "c.yaml")
    jobs[-1].write_text(json.dumps(missing))                 # fails: its reason in the index
    out = tmp_path / "out"
    for job in jobs:
        main(["run", str(job), "--out", str(out), "--history", str(tmp_path / "h.duckdb")])
    assert main(["compare", str(out / "ha/result.json"), str(out / "hb/result.json"), "--out", str(tmp_path / "cmp"),
                 "--max-regression", "5"]) == 0
    assert main(["history", str(tmp_path / "h.duckdb"), "--out", str(tmp_path / "hist")]) == 0
    capsys.readouterr()
    pages = {p: p.read_text() for p in sorted(tmp_path.rglob("*.md"))}
    assert len(pages) == 5 and all("&lt;script&gt;" in t or "<script>" in t for t in pages.values())
    assert "What changed" in pages[tmp_path / "cmp/compare.md"] and "Per operator" in pages[out / "ha/report.md"]
    broken = [b for p, t in pages.items() for b in markdown_breaks(p.name, t)]
    for doc, kind in ((out / "ha/result.json", "report"), (tmp_path / "cmp/compare.json", "compare"),
                      (tmp_path / "hist/history.json", "history")):
        for name, text in render_all(hostile_strings(json.loads(doc.read_text())), kind).items():
            broken += markdown_breaks(f"{kind} {name}", text) if name.endswith(".md") else []
    compared = hostile_strings(json.loads((tmp_path / "cmp/compare.json").read_text()))
    assert compared["gates"]
    broken += markdown_breaks("summary.md", ci.summary(compared))           # the GitHub step summary
    rows = hostile_strings(index.entries(out))
    broken += markdown_breaks("index", render_all({"jobs": rows, "counts": index.counts(rows)}, kind="index")["index.md"])
    assert not broken, "\n".join(broken)
