"""What CI systems read from `mfu compare`: GitHub annotations and step summary, and JUnit XML.

Each formats compare.json and nothing else, so every CI output carries the same signs, words
and reasons as compare.md and stderr.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from pipeline.gate import failure_kind
from pipeline.report import render


def _escape_data(text: str) -> str:
    """Workflow-command message escaping (GitHub actions/toolkit, command.ts escapeData)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    """Workflow-command property escaping (GitHub actions/toolkit, command.ts escapeProperty)."""
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _level(g: dict[str, Any]) -> str | None:
    """error for a failed figure; warning when undecided or gated although not comparable; None otherwise."""
    if g["outcome"] == "fail":
        return "error"
    if g["outcome"] == "undecided" or g["comparable"] is False:
        return "warning"
    return None


def workflow_commands(doc: dict[str, Any]) -> list[str]:
    """`::error` / `::warning` workflow commands, one per gated figure that failed or needs a look,
    pointing at the job file (a GitHub check shows them on that file)."""
    lines = []
    for g in doc["gates"]:
        level = _level(g)
        if level is None:
            continue
        what = {"fail": "failed", "undecided": "cannot decide"}.get(g["outcome"], "gated although not comparable")
        title = f"mfu compare: {g['column']} {g['label']} {what}"
        props = f"title={_escape_property(title)}"
        if g["job_file"]:
            props = f"file={_escape_property(g['job_file'])},{props}"
        lines.append(f"::{level} {props}::{_escape_data(g['detail'])}")
    return lines


def summary(doc: dict[str, Any]) -> str:
    """The Markdown step summary (also written as summary.md beside compare.md)."""
    return render.environment().get_template("compare_summary.md.j2").render(r=doc)


def append_step_summary(text: str) -> None:
    """Append to the file GitHub names in $GITHUB_STEP_SUMMARY, when it does."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if target:
        with open(target, "a", encoding="utf-8") as fh:
            fh.write(text)


def junit(doc: dict[str, Any]) -> str:
    """JUnit XML: one test case per gated figure per job, so any CI shows pass/fail natively.

    A failure is a <failure>; an undecided figure is <skipped> (it does not fail the gate).
    """
    gates = doc["gates"]
    suite = ET.Element("testsuite", name="mfu compare", tests=str(len(gates)),
                       failures=str(sum(g["outcome"] == "fail" for g in gates)), errors="0",
                       skipped=str(sum(g["outcome"] == "undecided" for g in gates)))
    for g in gates:
        case = ET.SubElement(suite, "testcase", classname=f"mfu.{g['column']}",
                             name=f"{g['label']} within {g['limit_pct']:g} % of baseline", file=g["job_file"])
        if g["outcome"] == "fail":
            kind = failure_kind(g, doc["allow_incomparable"])
            ET.SubElement(case, "failure", message=g["detail"], type=kind).text = g["detail"]
        elif g["outcome"] == "undecided":
            ET.SubElement(case, "skipped", message=g["detail"])
        else:
            ET.SubElement(case, "system-out").text = g["detail"]
    root = ET.Element("testsuites", name="mfu compare", tests=suite.get("tests", "0"),
                      failures=suite.get("failures", "0"))
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(path: Path, doc: dict[str, Any]) -> None:
    """All or nothing, like the reports: a temp file renamed into place."""
    render.write_files(path.parent, {path.name: junit(doc)})
