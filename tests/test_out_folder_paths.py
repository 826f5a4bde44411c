"""Writes stay inside the output folder (issue 33): a link planted at one of mfu's own names is refused, never
followed, and a run whose every job was refused leaves no folder behind."""

from __future__ import annotations

import os

import pytest

from pipeline.cli import main
from tests.test_special_files import JOB


@pytest.mark.parametrize("planted", [".status", ".lock"])
def test_a_planted_link_is_not_followed_out_of_the_folder(tmp_path, capsys, planted):
    out, outside = tmp_path / "out", tmp_path / "outside"
    out.mkdir()
    outside.mkdir()
    os.symlink(outside if planted == ".status" else outside / "lock", out / planted)
    (tmp_path / "job.yaml").write_text(JOB)
    assert main(["run", str(tmp_path / "job.yaml"), "--out", str(out)]) == 2
    assert f"{out / planted}: a symbolic link where mfu keeps its own files" in capsys.readouterr().err
    assert list(outside.iterdir()) == []


def test_a_refused_job_creates_no_output_folder(tmp_path, capsys):
    (tmp_path / "job.yaml").write_text(JOB.replace("name: special", "name: ../../escape"))
    assert main(["run", str(tmp_path / "job.yaml"), "--out", str(tmp_path / "a" / "b" / "out")]) == 3
    assert "/name: '../../escape' does not match" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["job.yaml"]
