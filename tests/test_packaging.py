"""The installed package must find its data without the checkout (issue: wheel installs crashed)."""

from __future__ import annotations

import re
from pathlib import Path

from pipeline import bundled

REPO = Path(__file__).resolve().parents[1]


def test_no_module_walks_up_from_its_own_file():
    offenders = [str(p.relative_to(REPO)) for p in REPO.glob("pipeline/**/*.py")
                 if "Path(__file__)" in p.read_text(encoding="utf-8")]
    assert offenders == []


def test_bundled_files_are_the_top_level_ones():
    assert bundled.config_path("hardware.yaml").read_bytes() == (REPO / "configs" / "hardware.yaml").read_bytes()
    assert [p.name for p in bundled.schema_paths()] == sorted(p.name for p in (REPO / "schemas").glob("*.schema.json"))
    assert bundled.citation(bundled.config_path("models.yaml")) == "configs/models.yaml"
    # messages name the file read, whole: in a checkout the top-level one, which _data links to
    assert bundled.label(bundled.config_path("models.yaml")) == str(REPO / "configs" / "models.yaml")


def test_every_data_file_is_declared_as_package_data():
    """package-data globs cover every file under configs/ and schemas/ and name no missing folder."""
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    globs = re.findall(r'"(_data/[^"]+)"', text)
    covered = {p.resolve() for g in globs for p in (REPO / "pipeline").glob(g)}
    shipped = {p.resolve() for folder in ("configs", "schemas") for p in (REPO / folder).rglob("*") if p.is_file()}
    assert shipped <= covered, sorted(str(p) for p in shipped - covered)
    for g in globs:
        assert any((REPO / "pipeline").glob(g)), f"package-data glob {g} matches nothing"
