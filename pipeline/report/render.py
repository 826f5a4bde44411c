"""Reports from result.json via Jinja: Markdown, one self-contained HTML file, and the JSON itself.

Undefined variables are errors (StrictUndefined) and HTML is autoescaped. Writing the
files is publish.py's job: all of them rendered first, then swapped in at once.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sys
from collections import Counter
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup, escape

from pipeline.analysis.registry import ANALYSES, Column, Section
from pipeline.bundled import kept_folder
from pipeline.checks import plausibility
from pipeline.report import charts, drawing, mdsafe, phone_charts, publish
from pipeline.report.fmt import (NBSP, column, fmt_against, fmt_fraction_pct, fmt_int, fmt_num, fmt_pct, fmt_seconds,
                                 fmt_si, fmt_util, fmt_window)


def verdict(r: dict[str, Any]) -> dict[str, str]:
    """The one-word summary shown beside MFU: invalid beats a failed threshold beats warnings."""
    return _verdict(r["status"], r.get("status_reason") or "", [t["name"] for t in r.get("thresholds", [])
                                                                if t["passed"] is False], len(r["warnings"]))


def job_verdict(j: dict[str, Any]) -> dict[str, str]:
    """An index row's verdict: a job that wrote no report failed; then as verdict() for a report, so a job
    whose report says "warnings: 2" is not "ok" here."""
    if j["folder"] is None:
        return {"css": "invalid", "text": f"{j['status']} (exit {j['exit_code']})", "why": j["reason"]}
    return _verdict(j["status"], j["reason"], j["failed_thresholds"], j["warnings"])


def _verdict(status: str, reason: str, failed: list[str], warnings: int) -> dict[str, str]:
    if status != "ok":
        return {"css": "invalid", "text": status, "why": reason}
    if failed:
        return {"css": "fail", "text": "threshold failed", "why": ", ".join(failed)}
    if warnings:
        return {"css": "warn", "text": f"warnings: {warnings}", "why": ""}
    return {"css": "ok", "text": "ok", "why": ""}


def processes(pids: list[Any], everyone: int) -> str:
    """A process list that does not fill the page: "all 8" when every process is in it."""
    if len(pids) == everyone and everyone > 1:
        return f"all{NBSP}{everyone}"
    if len(pids) <= 4:
        return ", ".join(map(str, pids))
    return f"{', '.join(map(str, pids[:3]))}, … ({len(pids)})"


def html_ticks(value: Any) -> Markup:
    """The HTML twin of mdsafe.ticks: `quoted` parts of prose as <code>, everything escaped."""
    parts = mdsafe.TICKED.split(str(value))
    return Markup("".join(f"<code>{escape(part)}</code>" if i % 2 else str(escape(part))
                          for i, part in enumerate(parts)))


@jinja2.pass_eval_context
def struck(eval_ctx: Any, value: Any, void: bool = True) -> Any:
    """mdsafe.struck on a Markdown page; on an HTML page (autoescaped) the same cell in <s>, so both pages
    strike an invalid result's figures through one filter. "—", no figure, is never struck."""
    if not eval_ctx.autoescape:
        return mdsafe.struck(value, void)
    text = escape(value)                                  # a macro's Markup stays as it is
    return Markup(f'<s title="not a measurement">{text}</s>') if void and value != "—" else text


def kernel_labels(names: list[str], width: int = 48) -> list[str]:
    """Kernel names for a Markdown table, cut to `width` characters ('…' last) unless cutting makes
    different kernels look alike: TensorRT's sm80_xmma_fprop_implicit_gemm_… names share their first
    70 characters, and five rows of one label read as one kernel listed five times. Those stay whole.
    The HTML page asks the same at 32 characters, where its CSS cuts a name."""
    cut = [n if len(n) <= width else n[:width - 1] + "…" for n in names]
    seen = Counter(cut)
    return [c if seen[c] == 1 else n for c, n in zip(cut, names)]


def device_label(result: dict[str, Any], device_id: int) -> str:
    """The device as the device table names it: with several trace files the ids in result.json are
    combined keys, and only the label (file:device) tells the user which GPU it was."""
    return next((d["label"] for d in result["devices"] if d["device_id"] == device_id), str(device_id))


# A page lists at most this many rows of a table with a row per occurrence (the occurrences, a registered
# section such as the step parts); result.json keeps every row, and the totals and charts cover them all.
# 30,000 occurrences rendered 30,000 rows per table, most of a run's time (issue #33).
LISTED_ROWS = 100


def listed(rows: list[Any]) -> dict[str, Any]:
    """The rows of a table a page lists (the first LISTED_ROWS, in result.json's order), with how many there
    are and how many are left out, for the line saying so."""
    return {"rows": rows[:LISTED_ROWS], "total": len(rows), "left_out": max(0, len(rows) - LISTED_ROWS)}


def section_tables(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Each registered section with its own Section (analysis/registry.py) as a table both pages place as it
    is (_sections.md.j2, _sections.html.j2): title, anchor, intro, headers, the listed rows' cells as text
    (`listed`: a column's unit still chosen from all its values), how many rows are left out and where they are,
    and the text of an empty table."""
    tables = []
    for analysis in ANALYSES:
        if isinstance(section := analysis.shown_by, Section):
            rows = result[analysis.key]
            shown = listed(rows)
            cells = [_cells(result, [r[c.field] for r in rows], c, LISTED_ROWS) for c in section.columns]
            tables.append({"title": section.title, "anchor": section.anchor, "intro": section.intro,
                           "headers": [head for head, _ in cells],
                           "rows": [list(row) for row in zip(*(values for _, values in cells))],
                           "total": shown["total"], "left_out": shown["left_out"], "key": analysis.key,
                           "empty": section.empty})
    return tables


def _cells(result: dict[str, Any], values: list[Any], col: Column, shown: int) -> tuple[str, list[str]]:
    """A column's header and its first `shown` cells as its kind writes them (every kind is a number or a key,
    aligned right); the unit is chosen from every value."""
    if col.kind == "ns":
        values = [None if v is None else v / 1e9 for v in values]
    if col.kind in ("s", "ns"):
        unit = column(values, "s")
        return unit.head(col.header), [unit(v) for v in values[:shown]]
    if col.kind == "device":
        return col.header, ["—" if v is None else device_label(result, v) for v in values[:shown]]
    if col.kind == "text":
        return col.header, ["—" if v is None else str(v) for v in values[:shown]]
    return col.header, [fmt_int(v) for v in values[:shown]]


class CompiledTemplates(jinja2.FileSystemBytecodeCache):
    """Templates compiled once, not once per process: Jinja's code for each kept as Python keeps .pyc.

    Compiling a report's templates takes about 0.1 s, as long as rendering it takes, in every
    `mfu run` and batch worker. The code is stored in `templates/__pycache__` (under
    PYTHONPYCACHEPREFIX when set), or in the user's cache folder when Python writes no bytecode
    (PYTHONDONTWRITEBYTECODE, `-B`: bundled.kept_folder), reused while the template's text is unchanged: Jinja checks
    its checksum, the file name carries a key of everything else the code depends on (Jinja and
    Python versions, this module and mdsafe.py, which set up the compiler). A folder that cannot
    be written, or a damaged file, means compiling as before: the cache never changes a report.
    """

    def __init__(self, folder: Path):
        sources = b"".join(resources.files("pipeline.report").joinpath(name).read_bytes()
                           for name in ("render.py", "mdsafe.py"))
        key = hashlib.sha256(f"{jinja2.__version__} {sys.version}".encode() + sources).hexdigest()[:16]
        super().__init__(str(folder), f"{key}-%s.jinja2")

    def load_bytecode(self, bucket: Any) -> None:
        try:
            super().load_bytecode(bucket)
        except Exception:  # noqa: BLE001 - unreadable or damaged: compile the template instead
            bucket.reset()

    def dump_bytecode(self, bucket: Any) -> None:
        with contextlib.suppress(OSError):          # read-only install, full disk: just not kept
            Path(self.directory).mkdir(parents=True, exist_ok=True)
            super().dump_bytecode(bucket)


def compiled_templates_folder() -> Path:
    """Where CompiledTemplates keeps the code: beside the templates, as Python would for modules (bundled.kept_folder)."""
    return kept_folder(Path(str(resources.files("pipeline.report"))) / "templates")


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """One environment per process, so templates compile once per batch, not once per job (and, with
    their code kept by CompiledTemplates, once until they change)."""
    return make_environment(compiled_templates_folder())


def make_environment(compiled: Path) -> jinja2.Environment:
    """The report environment, its templates' code kept in `compiled` (tests give their own folder)."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("pipeline.report", "templates"),
        bytecode_cache=CompiledTemplates(compiled),
        undefined=jinja2.StrictUndefined,
        autoescape=jinja2.select_autoescape(enabled_extensions=("html", "html.j2"), default=False),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=mdsafe.finalize,                 # Markdown templates escape what they write
        extensions=[mdsafe.CodeSpans],
    )
    env.filters["code"] = mdsafe.code
    env.filters["ticks"] = mdsafe.ticks
    env.filters["struck"] = struck
    env.filters["html_ticks"] = html_ticks
    env.globals.update(device_label=device_label, column=column, section_tables=section_tables, listed=listed,
                       verdict=verdict, job_verdict=job_verdict, timeline_step=charts.timeline_step, voided=plausibility.voided,
                       window=fmt_window, range_label=charts.range_label)
    env.filters.update(num=fmt_num, percent=fmt_fraction_pct, against=fmt_against, int=fmt_int, pct=fmt_pct, si=fmt_si, sec=fmt_seconds,
                       procs=processes, util=fmt_util, kernel_labels=kernel_labels)
    return env


def to_json(result: dict[str, Any]) -> str:
    """Deterministic JSON: sorted keys, no NaN (a NaN here is a bug, so it raises)."""
    return json.dumps(result, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def render_all(result: dict[str, Any], kind: str = "report", indexed: bool = False) -> dict[str, str]:
    """Every output file of one result, as text, keyed by file name: the pages, the JSON, and each
    chart as a sidecar .svg (the HTML carries the same drawings inline, and phone-width ones beside them).

    `indexed`: the report's folder sits in an output folder whose index.md / index.html list it
    (`mfu run` writes them), so the pages link up to it. Decided by the caller, not by looking for
    an index on disk: a first run and a rerun must write the same bytes.
    """
    env = environment()
    svgs = (charts.report_charts(result, device_label) if kind == "report"
            else charts.history_charts(result) if kind == "history" else charts.compare_charts(result))
    phone = (phone_charts.report_charts(result, device_label) if kind == "report"
             else phone_charts.history_charts(result) if kind == "history" else phone_charts.compare_charts(result))
    return {
        f"{kind}.md": env.get_template(f"{kind}.md.j2").render(r=result, svgs=svgs, indexed=indexed),
        f"{kind}.html": env.get_template(f"{kind}.html.j2").render(r=result, svgs=svgs, phone=phone, indexed=indexed),
        "result.json" if kind == "report" else f"{kind}.json": to_json(result),
        **{name: drawing.standalone(svg) for name, svg in svgs.items()},
    }


def write_files(folder: Path, files: dict[str, str]) -> list[Path]:
    """All-or-nothing per file, into a shared folder; see publish.write_files."""
    return publish.write_files(folder, files)
