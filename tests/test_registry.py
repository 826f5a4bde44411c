"""The analysis registry (analysis/registry.py): each entry is what result.json, the schema and the pages know."""

from __future__ import annotations

import json
from pathlib import Path

import jinja2

from pipeline.analysis.registry import ANALYSES, Section

REPO = Path(__file__).resolve().parent.parent
TEMPLATES = REPO / "pipeline" / "report" / "templates"


def test_every_registered_key_is_described_in_the_result_schema():
    properties = json.loads((REPO / "schemas" / "result.schema.json").read_text())["properties"]
    for analysis in ANALYSES:
        assert properties.get(analysis.key, {}).get("description"), f"{analysis.key}: no described schema property"


def test_keys_are_unique():
    keys = [a.key for a in ANALYSES]
    assert len(keys) == len(set(keys))


def _names_read(template: Path) -> set[str]:
    """The result keys a template reads as r.<key> or r["<key>"]."""
    ast = jinja2.Environment().parse(template.read_text(encoding="utf-8"))
    got = {n.attr for n in ast.find_all(jinja2.nodes.Getattr) if isinstance(n.node, jinja2.nodes.Name)
           and n.node.name == "r"}
    return got | {n.arg.value for n in ast.find_all(jinja2.nodes.Getitem) if isinstance(n.node, jinja2.nodes.Name)
                  and n.node.name == "r" and isinstance(n.arg, jinja2.nodes.Const)}


def test_each_entry_is_shown_on_both_pages_by_what_it_names():
    """A hand-written partial named by an entry reads its key on the Markdown and the HTML page; an entry with
    its own Section is drawn by the generic partials, which both report pages include (through _where)."""
    for analysis in ANALYSES:
        if isinstance(analysis.shown_by, Section):
            assert {c.field for c in analysis.shown_by.columns}, analysis.key
            continue
        for page in ("md", "html"):
            assert analysis.key in _names_read(TEMPLATES / f"{analysis.shown_by}.{page}.j2"), (analysis.key, page)
    for page in ("md", "html"):
        assert f'{{% include "_sections.{page}.j2" %}}' in (TEMPLATES / f"_where.{page}.j2").read_text()
