"""The package's own config files (presets, GPU catalog, kernel classes) are user-edited YAML:
a mistake in one is exit 3 naming that file, its line and the JSON pointer, never a traceback and
never blamed on the job file that happened to use it."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.cli import main

JOB = """name: cfg
trace: missing.sqlite
region: {name: train_step}
hardware: {gpu: h100-sxm, num_gpus: 2, precision: bf16}
model: {preset: llama-3.2-1b}
workload: {mode: training, seq_len: 2048, global_batch: 8}
"""


def _run(tmp_path: Path, capsys, *args: str) -> tuple[int, str]:
    job = tmp_path / "job.yaml"
    job.write_text(JOB, encoding="utf-8")
    code = main([*args, str(job)])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


@pytest.fixture
def broken_presets(tmp_path, monkeypatch):
    from pipeline.model import presets as module
    text = module.PRESETS_FILE.read_text(encoding="utf-8").replace("      hidden: 4096\n",
                                                                      "      hidden: 4096\n      hidden: 4096\n", 1)
    broken = tmp_path / "models.yaml"
    broken.write_text(text, encoding="utf-8")
    monkeypatch.setattr(module, "PRESETS_FILE", broken)
    module.presets.cache_clear()
    yield str(broken), text.splitlines().index("      hidden: 4096") + 2
    module.presets.cache_clear()


def test_a_broken_presets_file_is_named_not_the_job_using_it(tmp_path, capsys, broken_presets):
    presets_file, line = broken_presets
    code, err = _run(tmp_path, capsys, "validate")
    assert code == 3
    assert f"{presets_file}:{line}:7: /presets/llama-3-8b/model/hidden: duplicate key 'hidden'" in err
    assert "job.yaml:1:1: /presets/" not in err
