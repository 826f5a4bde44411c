"""Templates only format and place (issue #35): a figure on a page comes from result.json or one function in
analysis/, never from arithmetic in a template. Each template's Jinja syntax tree is searched for arithmetic;
the few operations that compute no figure (page layout in pixels, a string format, lists joined) are listed
here with the reason, and anything else fails, naming the template and line."""

from __future__ import annotations

from pathlib import Path

from jinja2 import nodes

from pipeline.report.render import make_environment

TEMPLATES = Path(__file__).resolve().parent.parent / "pipeline" / "report" / "templates"
ARITHMETIC = (nodes.Add, nodes.Sub, nodes.Mul, nodes.Div, nodes.FloorDiv, nodes.Mod, nodes.Pow, nodes.Neg,
              nodes.Pos)
# (template, operation, what it reads): none of them is a figure
ALLOWED = {
    ("_style.html.j2", "Sub", ("1", "below")): "a CSS breakpoint: the pixel just below a tile width",
    ("compare.html.j2", "Add", ("260", "280", "n")): "the tiles' layout width in pixels for n inputs",
    ("compare.html.j2", "Mul", ("280", "n")): "the same layout width",
    ("compare.html.j2", "Mod", ("' tiles-%d'", "wide")): "a CSS class name formatted from that width",
    ("compare.html.j2", "Add", ("1200", "gates", "r", "wide", "wide")): "the list of tile widths, joined",
    ("compare.html.j2", "Add", ("'baseline'", "'value'", "gs", "gs")): "two lists joined to choose one column unit",
    ("compare.md.j2", "Add", ("'baseline'", "'value'", "gs", "gs")): "two lists joined to choose one column unit",
    ("history.html.j2", "Add", ("1", "index", "j", "jobs", "r")): "an anchor's number (#job-1 ...), not a figure",
}


def _reads(node: nodes.Node) -> tuple[str, ...]:
    """What an operation reads, for ALLOWED: the names, attributes and constants below it, sorted."""
    found = [n.name for n in node.find_all(nodes.Name)] + [n.attr for n in node.find_all(nodes.Getattr)]
    found += [repr(n.value) if isinstance(n.value, str) else str(n.value) for n in node.find_all(nodes.Const)]
    return tuple(sorted(found))


def arithmetic(name: str, source: str) -> list[tuple[str, str, tuple[str, ...], int]]:
    """Every arithmetic operation of one template: (template, operation, what it reads, line)."""
    tree = make_environment(Path("unused")).parse(source, name)
    return [(name, type(n).__name__, _reads(n), n.lineno) for n in tree.find_all(ARITHMETIC)]


def test_templates_do_no_arithmetic_on_figures():
    found = [a for path in sorted(TEMPLATES.glob("*.j2")) for a in arithmetic(path.name, path.read_text("utf-8"))]
    assert [f"{t}:{line} {op} of {reads}" for t, op, reads, line in found if (t, op, reads) not in ALLOWED] == []
    assert {(t, op, reads) for t, op, reads, _ in found} == set(ALLOWED), "an allowed operation is gone: drop it"


def test_the_check_finds_a_figure_computed_in_a_template():
    """The 6·N share as _flops.md.j2 used to compute it, and a share scaled to percent, are both found."""
    old = "{{ (100.0 * r.flops.model_flops_per_step / r.flops.six_n_flops_per_step) | pct(1) }}"
    assert [op for _, op, _, _ in arithmetic("_flops.md.j2", old)] == ["Div", "Mul"]
    assert [op for _, op, _, _ in arithmetic("x.md.j2", "{{ (c.share * 100) | num(1) }} {{ -c.x }}")] == ["Mul", "Neg"]
