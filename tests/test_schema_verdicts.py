"""A document a schema found valid is remembered (documents.schema_problems), as Python remembers
bytecode, so the next process skips jsonschema for it; problems are never remembered, and anything
the verdict depends on (the document, the schemas, the validating code) is another verdict."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.job import documents
from pipeline.job.config import load_job
from pipeline.errors import ConfigError
from tests.test_run_synth import write_job


@pytest.fixture
def verdicts(tmp_path, monkeypatch) -> Path:
    """Verdicts kept in a folder of the test's own."""
    folder = tmp_path / "verdicts"
    monkeypatch.setattr(documents, "kept_folder", lambda _: folder)
    return folder


@pytest.fixture
def validations(monkeypatch) -> list[str]:
    """The schemas jsonschema was asked to validate against."""
    asked: list[str] = []
    real = documents.validator

    def counting(name):
        asked.append(name)
        return real(name)
    monkeypatch.setattr(documents, "validator", counting)
    return asked


def job_file(tmp_path: Path, **over) -> Path:
    (tmp_path / "job").mkdir(exist_ok=True)
    return write_job(tmp_path / "job", tmp_path / "run.sqlite", **over)


def test_a_valid_document_is_validated_once(tmp_path, verdicts, validations):
    path = job_file(tmp_path)
    first = load_job(path)
    assert validations == ["job.schema.json"] and len(list(verdicts.iterdir())) == 1
    assert load_job(path) == first and validations == ["job.schema.json"]        # remembered


def test_problems_are_never_remembered(tmp_path, verdicts, validations):
    path = job_file(tmp_path, workload={"mode": "sideways"})
    for _ in range(2):
        with pytest.raises(ConfigError, match="sideways"):
            load_job(path)
    assert validations == ["job.schema.json"] * 2 and not verdicts.exists()


def test_another_document_schema_or_code_is_validated_again(tmp_path, verdicts, validations, monkeypatch):
    load_job(job_file(tmp_path))
    load_job(job_file(tmp_path, workload={"global_batch": 32}))                  # another document
    assert len(validations) == 2
    load_job(job_file(tmp_path, workload={"global_batch": 32.0}))                # 32.0 is not 32
    assert len(validations) == 3
    documents._verdict_key.cache_clear()
    real = documents.schema_paths()
    changed = tmp_path / "job.schema.json"
    changed.write_text(real[[p.name for p in real].index("job.schema.json")].read_text() + "\n")
    monkeypatch.setattr(documents, "schema_paths", lambda: [changed if p.name == changed.name else p for p in real])
    load_job(job_file(tmp_path, workload={"global_batch": 32}))                  # a schema's text changed
    assert len(validations) == 4
    documents._verdict_key.cache_clear()
    monkeypatch.undo()


def test_remembered_in_the_user_cache_when_python_writes_no_bytecode(tmp_path, validations, monkeypatch):
    """PYTHONDONTWRITEBYTECODE (issue 34): the verdict goes to the user's cache folder, not nowhere."""
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.setenv("MFU_CACHE_DIR", str(tmp_path / "user-cache"))
    path = job_file(tmp_path)
    load_job(path)
    load_job(path)
    assert validations == ["job.schema.json"]
    assert [f.name[:6] for f in (tmp_path / "user-cache" / "derived").glob("*/*")] == ["valid-"]


def test_an_unwritable_folder_means_validating_again(tmp_path, verdicts, validations):
    verdicts.parent.mkdir(exist_ok=True)
    verdicts.write_text("a file where the folder would be")
    path = job_file(tmp_path)
    assert load_job(path) == load_job(path) and len(validations) == 2


def test_too_many_verdicts_are_all_forgotten(tmp_path, verdicts, validations, monkeypatch):
    monkeypatch.setattr(documents, "VERDICTS_KEPT", 2)
    for batch in (1, 2, 3):
        load_job(job_file(tmp_path, workload={"global_batch": batch}))
    assert len(list(verdicts.iterdir())) == 1


def test_a_second_process_validates_nothing(tmp_path):
    """A repeated `mfu validate` imports neither jsonschema nor referencing (0.03-0.07 s of start-up)."""
    path = job_file(tmp_path)
    script = ("import sys\n"
              "from pipeline.cli import main\n"
              "code = main(['validate', sys.argv[1]])\n"
              "print(code, sorted(m for m in ('jsonschema', 'referencing') if m in sys.modules))\n")
    repo = Path(__file__).resolve().parents[1]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env |= {"PYTHONPATH": str(repo), "PYTHONPYCACHEPREFIX": str(tmp_path / "pycache")}
    seen = [subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, env=env,
                           check=True).stdout.split("\n")[-2] for _ in range(2)]
    assert seen == ["0 ['jsonschema', 'referencing']", "0 []"], seen
