"""Templates' compiled code is kept between processes (render.CompiledTemplates) and never changes a report."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jinja2
import pytest
from jinja2.bccache import bc_magic

from pipeline.report import render

DEMO = json.loads((Path(__file__).resolve().parents[1] / "reports/demo/result.json").read_text())
PAGES = ("report.md.j2", "report.html.j2")


def _pages(env: jinja2.Environment) -> list[str]:
    sections = render.section_tables(DEMO)
    return [env.get_template(name).render(r=DEMO, svgs={}, sections=sections, indexed=False) for name in PAGES]


def _no_compiling(env: jinja2.Environment, monkeypatch) -> None:
    def refuse(*args, **kw):
        raise AssertionError("compiled a template the cache holds")
    monkeypatch.setattr(env, "compile", refuse)


@pytest.mark.parametrize("no_bytecode", [False, True])
def test_a_second_process_renders_from_the_kept_code(tmp_path, monkeypatch, no_bytecode):
    monkeypatch.setattr(sys, "dont_write_bytecode", no_bytecode)     # kept whatever PYTHONDONTWRITEBYTECODE says
    first = _pages(render.make_environment(tmp_path))
    kept = sorted(p.name for p in tmp_path.iterdir())
    assert len(kept) >= len(PAGES) + 1 and all(name.endswith(".jinja2") for name in kept)   # pages and partials
    second = render.make_environment(tmp_path)       # what a new process builds
    _no_compiling(second, monkeypatch)
    assert _pages(second) == first


def test_kept_in_the_user_cache_when_python_writes_no_bytecode(tmp_path, monkeypatch):
    """Beside the templates as Python keeps bytecode; with PYTHONDONTWRITEBYTECODE in the user's cache folder
    (issue 34: every run compiled the templates again)."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    assert render.compiled_templates_folder().parts[-2:] == ("templates", "__pycache__")
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.setenv("MFU_CACHE_DIR", str(tmp_path))
    assert render.compiled_templates_folder().parent == tmp_path / "derived"


def test_other_jinja_or_compiler_setup_does_not_reuse_the_code(tmp_path, monkeypatch):
    """Jinja checks a template's own text; the file name covers what else shapes the code."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    _pages(render.make_environment(tmp_path))
    before = {p.name for p in tmp_path.iterdir()}
    monkeypatch.setattr(jinja2, "__version__", "0.0-other")
    _pages(render.make_environment(tmp_path))
    after = {p.name for p in tmp_path.iterdir()} - before
    assert after and {n.split("-", 1)[1] for n in after} == {n.split("-", 1)[1] for n in before}


@pytest.mark.parametrize("damage", ["garbage", "truncated", "bad checksum", "unwritable"])
def test_a_damaged_or_unwritable_folder_only_means_compiling(tmp_path, monkeypatch, damage):
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    expected = _pages(render.make_environment(tmp_path / "clean"))
    folder = tmp_path / "code"
    if damage == "unwritable":
        folder.parent.mkdir(exist_ok=True)
        folder.write_text("a file where the folder should be")
    else:
        _pages(render.make_environment(folder))
        for kept in folder.iterdir():
            data = kept.read_bytes()
            kept.write_bytes({"garbage": b"\x00garbage", "truncated": data[:len(data) // 2],
                              "bad checksum": data[:len(bc_magic)] + b"\x80\x05garbage"}[damage])
    assert _pages(render.make_environment(folder)) == expected
