"""docs/ is the reference the code cites: its generated pages match `--help` and the schema, and every
citation of a docs page (and section) points at something that exists."""

from __future__ import annotations

import re
from pathlib import Path

from pipeline.cli import reference

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
CITATION = re.compile(r"docs/([\w-]+\.md)(?: ?§ ?(\d+))?")
CITING = ("*.py", "*.sql", "*.j2", "*.json", "*.yaml", "*.md")


def test_the_cli_reference_is_what_help_prints():
    assert (DOCS / "cli.md").read_text(encoding="utf-8") == reference.cli_reference(), \
        "docs/cli.md is stale: run `python -m pipeline.cli.reference docs`"


def test_the_job_file_reference_is_what_the_schema_says():
    assert (DOCS / "job-file.md").read_text(encoding="utf-8") == reference.job_file_reference(), \
        "docs/job-file.md is stale: run `python -m pipeline.cli.reference docs`"


def _cited() -> dict[tuple[str, str | None], list[str]]:
    """(page, section or None) -> where it is cited, over the package, tests, configs, schemas and the docs."""
    found: dict[tuple[str, str | None], list[str]] = {}
    roots = [REPO / "pipeline", REPO / "tests", REPO / "configs", REPO / "schemas", DOCS, REPO / "bench"]
    files = [p for root in roots for pattern in CITING for p in root.rglob(pattern) if "_data" not in p.parts]
    files += [REPO / "README.md", REPO / "ARCHITECTURE.md"]
    for path in files:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for page, section in CITATION.findall(line):
                found.setdefault((page, section or None), []).append(f"{path.relative_to(REPO)}:{number}")
    return found


def test_every_citation_of_docs_points_at_a_page_and_section_that_exist():
    cited = _cited()
    assert any(page == "figures.md" for page, _ in cited), "no citation found at all"
    broken = {}
    for (page, section), where in cited.items():
        path = DOCS / page
        if not path.is_file():
            broken[f"docs/{page}"] = where[:3]
        elif section and not re.search(rf"^## {section}\. ", path.read_text(encoding="utf-8"), re.M):
            broken[f"docs/{page} §{section}"] = where[:3]
    assert broken == {}


def test_a_citation_that_points_at_nothing_is_found(tmp_path):
    """The check above can fail: a made-up section is not a heading of the page."""
    text = (DOCS / "figures.md").read_text(encoding="utf-8")
    assert re.search(r"^## 4\. ", text, re.M)
    assert not re.search(r"^## 99\. ", text, re.M)
    assert CITATION.findall("see docs/figures.md " + "§99") == [("figures.md", "99")]


def test_no_citation_points_outside_the_repository():
    """Code cited a spec that lived beside the repository, not in it; docs/figures.md is what it cites now."""
    roots = [REPO / "pipeline", REPO / "tests", REPO / "configs", REPO / "schemas", REPO / "bench", DOCS]
    named = [f"{p.relative_to(REPO)}:{n}" for root in roots for pattern in CITING for p in root.rglob(pattern)
             if "_data" not in p.parts and p.name != "test_docs.py"
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if "SEMANTICS" in line]
    assert named == []
