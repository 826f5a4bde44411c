"""The package's own config files (presets, GPU catalog, kernel classes) are user-edited YAML:
a mistake in one is exit 3 naming that file, its line and the JSON pointer, never a traceback and
never blamed on the job file that happened to use it."""

from __future__ import annotations

import json
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


def _run(tmp_path: Path, capsys, *args: str, trace: Path | None = None) -> tuple[int, str]:
    job = tmp_path / "job.yaml"
    job.write_text(JOB.replace("missing.sqlite", str(trace or "missing.sqlite")), encoding="utf-8")
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


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """The package's data as an installed wheel has it, outside any checkout: configs/ and schemas/ copied to
    site/pipeline/_data/ (a wheel holds copies, not links), models.yaml with a duplicate key."""
    import shutil
    from pipeline import bundled
    from pipeline.model import presets as module
    data = tmp_path / "site" / "pipeline" / "_data"
    for kind in ("configs", "schemas"):
        shutil.copytree(bundled.config_path().parent / kind, data / kind)
    models = data / "configs" / "models.yaml"
    text = models.read_text(encoding="utf-8").replace("      hidden: 4096\n", "      hidden: 4096\n      hidden: 4096\n", 1)
    models.write_text(text, encoding="utf-8")
    monkeypatch.setattr(bundled, "_root", lambda kind: data / kind)
    monkeypatch.setattr(module, "PRESETS_FILE", models)
    module.presets.cache_clear()
    bundled.kept_names.cache_clear()           # kept per process: the folders moved
    yield models, text.splitlines().index("      hidden: 4096") + 2
    module.presets.cache_clear()
    bundled.kept_names.cache_clear()


def test_a_broken_installed_file_is_named_where_it_is_and_kept_as_inside_the_package(synth_trace, tmp_path, capsys,
                                                                                      installed):
    """A wheel user has no configs/ folder: the error names the file read by its whole path, which opens from
    any folder; the status record and the history, which name no machine's folders, name it inside the package."""
    models, line = installed
    message = f":{line}:7: /presets/llama-3-8b/model/hidden: duplicate key 'hidden'"
    code, err = _run(tmp_path, capsys, "run", "--out", str(tmp_path / "out"), "--history", str(tmp_path / "h"),
                     trace=synth_trace()[0])
    assert code == 3
    assert f"{tmp_path}/site/pipeline/_data/configs/models.yaml{message}" in err
    records = [p.read_text(encoding="utf-8") for p in (tmp_path / "out" / ".status").glob("*.json")]
    assert len(records) == 1 and f"pipeline/_data/configs/models.yaml{message}" in records[0]
    from pipeline import history
    error = history.trend(tmp_path / "h")["jobs"][0]["runs"][0]["error"]
    assert error.startswith(f"pipeline/_data/configs/models.yaml{message}")
    for kept in (records[0], error, (tmp_path / "out" / "index.md").read_text(encoding="utf-8")):
        assert str(tmp_path) not in kept


@pytest.fixture
def classes_file(tmp_path, monkeypatch):
    """Point the kernel-class rules at an edited copy of configs/kernel_classes.yaml."""
    from pipeline.analysis import classes as module

    def edit(old: str, new: str) -> tuple[str, str]:
        text = module.CLASSES_FILE.read_text(encoding="utf-8")
        assert old in text
        edited = tmp_path / "kernel_classes.yaml"
        edited.write_text(text.replace(old, new, 1), encoding="utf-8")
        monkeypatch.setattr(module, "CLASSES_FILE", edited)
        monkeypatch.setattr(module.load_rules, "__defaults__", (None, edited))
        module._document.cache_clear()
        return str(edited), text.replace(old, new, 1)
    yield edit
    module._document.cache_clear()


@pytest.mark.parametrize("old, new, at, message", [
    ("classes:\n", 'classes:\n  - class: lookahead\n    patterns: ["(?=gemm)"]\n', '"(?=gemm)"',
     "/classes/0/patterns/0: invalid regular expression '(?=gemm)' (RE2): invalid perl operator: (?="),
    ("classes:\n", "classes:\n  - class: quirk\n    patterns: [yes]\n", "yes]",
     "/classes/0/patterns/0: true is not valid here"),
    ("precision_classes:", "classes: []\nprecision_classes:", "classes: []",
     "/classes: duplicate key 'classes' (fix: keep one of them)"),
    ("  - class: fused\n", "  - klass: fused\n", "klass: fused", "/classes/1/klass: unknown key 'klass'"),
])
def test_a_broken_kernel_classes_file_is_a_located_config_error(synth_trace, tmp_path, capsys, classes_file,
                                                               old, new, at, message):
    trace, _ = synth_trace()
    name, text = classes_file(old, new)
    code, err = _run(tmp_path, capsys, "run", "--out", str(tmp_path / "out"), trace=trace)
    assert code == 3, err
    line, col = next((i, row.index(at) + 1) for i, row in enumerate(text.splitlines(), 1) if at in row)
    assert f"{name}:{line}:{col}: {message}" in err
    assert not (tmp_path / "out" / "cfg").exists()


def test_scope_and_model_problems_are_listed_at_once(tmp_path, capsys):
    """Every problem of a job in one run: an unknown preset is not held back behind a batch-size error."""
    job = tmp_path / "job.yaml"
    job.write_text(JOB.replace("llama-3.2-1b", "llama-3.2-1bx")
                   .replace("global_batch: 8}", "global_batch: 8, micro_batch: 1, grad_accum: 3}"), encoding="utf-8")
    code = main(["validate", str(job)])
    err = capsys.readouterr().err
    assert code == 3
    assert f"{job}:6:57: /workload/global_batch: global_batch 8 is not a multiple of micro_batch 1 x grad_accum 3" in err
    assert f"{job}:5:17: /model/preset: unknown model preset 'llama-3.2-1bx' (fix: did you mean llama-3.2-1b" in err


def test_re2_checks_many_patterns_at_once_and_names_each_bad_one():
    """All valid (every run's shipped classes): one query; a bad one is then found and named by position."""
    from pipeline.trace import re2
    assert re2.problems(["gemm", "(?i)nccl", "^sm90_.*_bf16"]) == [None, None, None]
    got = re2.problems(["gemm", "(?=x)", "ok", "a(?<!b)"])
    assert got[0] is None and got[2] is None
    assert "invalid perl operator: (?=" in got[1] and "invalid perl operator: (?<" in got[3]


def test_re2_remembers_a_valid_list_not_a_bad_one(tmp_path, monkeypatch):
    """A list RE2 accepted is remembered (the shipped classes are checked on every run); one with a bad
    pattern never is, and another list is another verdict."""
    from pipeline.trace import re2
    monkeypatch.setattr(re2, "kept_folder", lambda _: tmp_path)
    assert re2.problems(["gemm", "nccl"]) == [None, None]
    assert [f.name[:4] for f in tmp_path.iterdir()] == ["re2-"]

    def no_query():
        raise AssertionError("queried RE2 again")
    monkeypatch.setattr(re2, "_con", no_query)
    assert re2.problems(["gemm", "nccl"]) == [None, None]                 # remembered: no query
    monkeypatch.undo()
    monkeypatch.setattr(re2, "kept_folder", lambda _: tmp_path)
    assert re2.problems(["gemm", "(?=x)"])[1] is not None
    assert re2.problems(["gemm", "cutlass"]) == [None, None]
    assert len(list(tmp_path.iterdir())) == 2                            # the bad list left nothing


def test_validate_json_names_a_broken_installed_file_inside_the_package(tmp_path, capsys, installed):
    """`mfu validate --format json` is kept by a CI as a report is: the broken models.yaml is named inside the
    package, with its line, column and pointer, not by the folders of the machine that ran it."""
    _, line = installed
    job = tmp_path / "job.yaml"
    job.write_text(JOB, encoding="utf-8")
    code = main(["validate", "--format", "json", str(job)])
    out, err = capsys.readouterr()
    assert code == 3 and f"{tmp_path}/site/pipeline/_data/configs/models.yaml:{line}:7:" in err
    [row] = json.loads(out)
    assert (row["job"], row["status"], row["exit_code"]) == (str(job), "invalid", 3)
    assert row["problems"][0] == {"file": "pipeline/_data/configs/models.yaml", "line": line, "column": 7,
                                  "pointer": "/presets/llama-3-8b/model/hidden", "message": "duplicate key 'hidden'",
                                  "hint": "keep one of them"}
    assert {p["file"] for p in row["problems"]} == {"pipeline/_data/configs/models.yaml"}   # its aliases' too
    assert str(tmp_path) not in out.replace(str(job), "job.yaml")
