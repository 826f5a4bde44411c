"""action.yml run step by step as GitHub would, from the built wheel; .pre-commit-hooks.yaml's filter and entry.

The steps' shell scripts are taken from action.yml as written: inputs reach them only through
`env:`, which is filled here from the test's inputs and the action's defaults, and the GitHub
files (GITHUB_PATH, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY) are real files read afterwards.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from pipeline.cli import main
from tests.test_compare import write

REPO = Path(__file__).resolve().parents[1]
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def expand(text: str, inputs: dict[str, str]) -> str:
    """The two expression forms action.yml uses in values: inputs.NAME and github.sha."""
    def one(m: re.Match) -> str:
        expr = m.group(1)
        if expr.startswith("inputs."):
            return inputs[expr.removeprefix("inputs.")]
        assert expr == "github.sha", f"expression the test does not know: {expr}"
        return "0123456789abcdef"
    return EXPR.sub(one, str(text))


# The `if:` expressions action.yml uses, as GitHub evaluates them (never cancelled here): the inputs, whether
# every earlier step succeeded, and the outcome of each earlier step by id.
CONDITIONS = {
    "!cancelled() && inputs.baseline != ''": lambda inputs, ok, outcome: inputs["baseline"] != "",
    "success() || (!cancelled() && inputs.history != '' && steps.validate.outcome == 'failure')":
        lambda inputs, ok, outcome: ok or (inputs["history"] != "" and outcome.get("validate") == "failure"),
}


def condition(text: str | None, inputs: dict[str, str], ok: bool, outcome: dict[str, str]) -> bool:
    """A step without `if:` runs only while every earlier step succeeded (GitHub's implicit success())."""
    if text is None:
        return ok
    return CONDITIONS[EXPR.fullmatch(text.strip()).group(1)](inputs, ok, outcome)


INSTALL = "Install mfu-pipeline"


def run_action(given: dict[str, str], workspace: Path, tmp: Path, installed: Path | None = None,
               stop_after: str | None = None) -> list[tuple[str, int, str, str]]:
    """The action's steps in order. `installed`: the bin folder of the venv the install step already made for
    this `package` (the `installed` fixture); that step then only puts it on the PATH, as it did there."""
    action = yaml.safe_load((REPO / "action.yml").read_text())
    inputs = {k: expand(v.get("default", ""), {}) if "${{" in str(v.get("default", "")) else str(v.get("default", ""))
              for k, v in action["inputs"].items()}
    assert set(given) <= set(inputs) and all(k in given for k, v in action["inputs"].items() if v.get("required"))
    inputs.update(given)
    files = {name: tmp / name.lower() for name in ("GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY")}
    for f in files.values():
        f.write_text("")
    runner_temp = tmp / "runner"
    runner_temp.mkdir()
    done, failed, outcome = [], False, {}
    for step in action["runs"]["steps"]:
        if not condition(step.get("if"), inputs, not failed, outcome):
            outcome[step.get("id")] = "skipped"
            continue
        if installed is not None and step["name"] == INSTALL:
            files["GITHUB_PATH"].write_text(f"{installed}\n")
            done.append((step["name"], 0, "", ""))
            outcome[step.get("id")] = "success"
            continue
        extra = [line for line in files["GITHUB_PATH"].read_text().splitlines() if line]
        env = {**os.environ, **{k: str(p) for k, p in files.items()}, "RUNNER_TEMP": str(runner_temp),
               "GITHUB_ACTION_PATH": str(REPO), "PATH": os.pathsep.join(extra[::-1] + [os.environ["PATH"]]),
               **{k: expand(v, inputs) for k, v in (step.get("env") or {}).items()}}
        env.pop("VIRTUAL_ENV", None)
        p = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=workspace,
                           env=env, capture_output=True, text=True, timeout=300)
        done.append((step["name"], p.returncode, p.stdout, p.stderr))
        outcome[step.get("id")] = "success" if p.returncode == 0 else "failure"
        failed = failed or p.returncode != 0
        if step["name"] == stop_after:
            break
    return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """Built from a copy of the sources: an in-tree build would leave build/ in the checkout, and a
    stale build/lib there could put deleted modules into later wheels."""
    src, out = tmp_path_factory.mktemp("src"), tmp_path_factory.mktemp("wheel")
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for name in ("pipeline", "configs", "schemas"):
        shutil.copytree(REPO / name, src / name, symlinks=True, ignore=skip)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, src / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(src)],
                   check=True, capture_output=True, timeout=300)
    return next(out.glob("mfu_pipeline-*.whl"))


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """The install step run once, as written, with the wheel as `package`: the bin folder of its venv. Each test
    installing it again cost about 8 s of pip; the later steps only need that folder on their PATH."""
    tmp = tmp_path_factory.mktemp("action-install")
    steps = run_action({"jobs": "jobs/*.yaml", "package": str(wheel)}, tmp, tmp, stop_after=INSTALL)
    assert [(name, code) for name, code, _, _ in steps] == [(INSTALL, 0)], steps
    bin_folder = tmp / "runner" / "mfu-venv" / "bin"
    assert (tmp / "github_path").read_text() == f"{bin_folder}\n"
    assert (bin_folder / "mfu").is_file()                                 # the wheel's, not the checkout's
    return bin_folder


def history_rows(installed: Path, ws: Path, sql: str) -> str:
    """What `sql` returns from the run's history.duckdb, printed by the action's own venv (its DuckDB wrote it)."""
    return subprocess.run([str(installed / "python"), "-c",
                           f"import duckdb; print(duckdb.connect('history.duckdb').execute({sql!r}).fetchall())"],
                          cwd=ws, capture_output=True, text=True, check=True).stdout.strip()


@pytest.mark.slow  # builds and installs the wheel
def test_action_steps_validate_run_and_gate_from_the_wheel(wheel, installed, synth_trace, tmp_path):
    ws = tmp_path / "repo"
    (ws / "jobs").mkdir(parents=True)
    (fast, truth), (slow, _) = synth_trace(step_ns=50_000_000), synth_trace(step_ns=55_000_000)
    base_jobs = [write(tmp_path, name, fast) for name in ("a", "b")]
    assert main(["run", *map(str, base_jobs), "--out", str(ws / "baseline")]) == 0        # last week's artifact
    write(ws / "jobs", "a", fast)
    write(ws / "jobs", "b", slow)                                                           # b got 10 % slower
    steps = run_action({"jobs": "jobs/*.yaml", "baseline": "baseline", "package": str(wheel),
                        "history": "history.duckdb"},
                       ws, tmp_path, installed)
    assert [(name, code) for name, code, _, _ in steps] == [
        ("Install mfu-pipeline", 0), ("Validate job files", 0), ("Run jobs", 0), ("Compare with the baseline", 1)]
    assert "ok: jobs/a.yaml" in steps[1][2] and "ok: jobs/b.yaml" in steps[1][2]
    out = steps[3][2]
    errors = [line for line in out.splitlines() if line.startswith("::error ")]
    n = len(truth["occurrences"])
    assert len(errors) == 2 and all(line.startswith("::error file=jobs/b.yaml,title=mfu compare%3A b ")
                                    for line in errors)
    assert "statistically clear" in out and "file=jobs/a.yaml" not in out
    assert (tmp_path / "github_output").read_text() == "exit-code=1\n"
    summary = (tmp_path / "github_step_summary").read_text()
    assert summary.count("### mfu compare:") == 2 and "gate FAILED (1 against b" in summary
    cases = {job: ET.parse(ws / "mfu-reports" / "compare" / job / "junit.xml").getroot().find("testsuite")
             for job in ("a", "b")}
    assert [(s.get("tests"), s.get("failures")) for s in cases.values()] == [("2", "0"), ("2", "2")]
    assert json.loads((ws / "mfu-reports" / "compare" / "b" / "compare.json").read_text())["gates"][1][
        "samples"]["n_value"] == n
    # the run went into the history with the commit as its label
    assert history_rows(installed, ws, "SELECT DISTINCT label FROM history") == \
        "[('0123456789abcdef',)]"


@pytest.mark.slow  # builds and installs the wheel
def test_a_failed_job_fails_the_run_step_and_is_in_the_history(wheel, installed, synth_trace, tmp_path):
    """History format 4 records a failed job: the run step still fails with the run's worst exit code (4, a trace
    problem), as before, and the history holds the job's failed row beside the other job's result."""
    ws = tmp_path / "repo"
    (ws / "jobs").mkdir(parents=True)
    fast, _ = synth_trace(step_ns=50_000_000)
    write(ws / "jobs", "a", fast)
    write(ws / "jobs", "b", tmp_path / "missing.sqlite")                # valid job file, no trace: exit 4 at run
    steps = run_action({"jobs": "jobs/*.yaml", "package": str(wheel), "history": "history.duckdb"},
                       ws, tmp_path, installed)
    assert [(name, code) for name, code, _, _ in steps] == [
        ("Install mfu-pipeline", 0), ("Validate job files", 0), ("Run jobs", 4)]
    assert "history: appended 1 result and 1 failure as run 1 to history.duckdb" in steps[2][3]
    assert history_rows(installed, ws, "SELECT job, status, exit_code, label FROM history ORDER BY job") == \
        "[('a', 'ok', None, '0123456789abcdef'), ('b', 'failed', 4, '0123456789abcdef')]"


@pytest.mark.slow  # builds and installs the wheel
def test_with_a_history_a_job_file_failing_validation_is_run_and_recorded(wheel, installed, synth_trace, tmp_path):
    """A job file failing `mfu validate` stopped the action before the run, so a scheduled run appended nothing:
    a broken job read as one never scheduled. With a history the run step now runs anyway and records it as a
    failed row (exit 3, a job-file problem) beside the other job's result; the action still fails at validation.
    Without a history the run is still skipped (test_no_run_summary_is_no_passed_comparison)."""
    ws = tmp_path / "repo"
    (ws / "jobs").mkdir(parents=True)
    fast, _ = synth_trace(step_ns=50_000_000)
    write(ws / "jobs", "a", fast)
    (ws / "jobs" / "b.yaml").write_text("name: b\n")                      # no trace, region, model, hardware
    steps = run_action({"jobs": "jobs/*.yaml", "package": str(wheel), "history": "history.duckdb"},
                       ws, tmp_path, installed)
    assert [(name, code) for name, code, _, _ in steps] == [
        ("Install mfu-pipeline", 0), ("Validate job files", 3), ("Run jobs", 3)]
    assert "history: appended 1 result and 1 failure as run 1 to history.duckdb" in steps[2][3]
    assert history_rows(installed, ws, "SELECT job, status, exit_code FROM history ORDER BY job") == \
        "[('a', 'ok', None), ('b', 'failed', 3)]"


@pytest.mark.slow  # builds and installs the wheel
@pytest.mark.parametrize("break_it, failing_step", [
    (lambda ws: (ws / "jobs" / "b.yaml").write_text("name: b\n"), "Validate job files"),     # run skipped
    (lambda ws: (ws / "mfu-reports").write_text("a file"), "Run jobs"),                     # run wrote no summary
])
def test_no_run_summary_is_no_passed_comparison(wheel, installed, synth_trace, tmp_path, break_it, failing_step):
    """When the jobs did not run (a job file failed validation) or the run stopped before its summary (an unusable
    --out), the compare step found no rows and reported compare-exit-code 0, 'passed', or failed with a
    JSONDecodeError traceback on the empty summary."""
    ws = tmp_path / "repo"
    (ws / "jobs").mkdir(parents=True)
    fast, _ = synth_trace(step_ns=50_000_000)
    assert main(["run", str(write(tmp_path, "a", fast)), "--out", str(ws / "baseline")]) == 0
    write(ws / "jobs", "a", fast)
    write(ws / "jobs", "b", fast)
    break_it(ws)
    steps = run_action({"jobs": "jobs/*.yaml", "baseline": "baseline", "package": str(wheel)},
                       ws, tmp_path, installed)
    codes = {name: code for name, code, _, _ in steps}
    assert codes[failing_step] != 0 and codes["Compare with the baseline"] == 1
    out, err = steps[-1][2], steps[-1][3]
    assert "Traceback" not in err
    assert out.startswith("::error::no run summary: the jobs did not run or did not finish (see the steps above); "
                          "nothing was compared with the baseline")
    assert (tmp_path / "github_output").read_text() == ""          # no exit code: no comparison was made


def test_pre_commit_hook_filter_and_entry(synth_trace, tmp_path, capsys):
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    hook = next(h for h in hooks if h["id"] == "mfu-validate")
    assert hook["entry"] == "mfu validate" and hook["language"] == "python"
    files = re.compile(hook["files"])
    for path in ("jobs/llama.yaml", "ml/mfu/nightly.yml", "configs/examples/demo.mfu.yaml", "mfu/base.yaml"):
        assert files.search(path), path
    for path in ("configs/hardware.yaml", "configs/models.yaml", ".github/workflows/ci.yaml", "jobs.yaml"):
        assert not files.search(path), path
    # what pre-commit then runs: the entry with the matched files appended
    t, _ = synth_trace()
    (tmp_path / "jobs").mkdir()
    good = write(tmp_path / "jobs", "good", t)
    base = tmp_path / "jobs" / "base.yaml"
    base.write_text("kind: base\nhardware: {num_gpus: 2, precision: bf16}\n")
    assert main([*hook["entry"].split()[1:], str(good), str(base)]) == 0
    bad = tmp_path / "jobs" / "bad.yaml"
    bad.write_text("name: bad\ntrace: x.sqlite\nregion: {name: step}\nhardware: {num_gpus: 0}\n")
    capsys.readouterr()
    assert main([*hook["entry"].split()[1:], str(good), str(bad)]) == 3
    assert "bad.yaml" in capsys.readouterr().err


@pytest.mark.slow  # builds and installs the wheel
@pytest.mark.parametrize("case", ["mistyped folder", "no report", "one new job"])
def test_a_gate_that_compared_nothing_does_not_pass(wheel, installed, synth_trace, tmp_path, case):
    """A baseline folder holding no job's result.json (a typo, or an artifact downloaded elsewhere) warned per
    job and exited 0 with compare-exit-code 0: the gate read 'passed' having compared nothing, on every pull
    request. Only a job new since the baseline is a warning, and the other jobs are still gated."""
    ws = tmp_path / "repo"
    (ws / "jobs").mkdir(parents=True)
    fast, _ = synth_trace(step_ns=50_000_000)
    assert main(["run", str(write(tmp_path, "a", fast)), "--out", str(ws / "baseline")]) == 0
    write(ws / "jobs", "a", fast if case != "no report" else tmp_path / "gone.sqlite")
    if case == "one new job":
        write(ws / "jobs", "b", fast)
    baseline = "baselines" if case == "mistyped folder" else "baseline"
    steps = run_action({"jobs": "jobs/*.yaml", "baseline": baseline, "package": str(wheel)},
                       ws, tmp_path, installed)
    name, code, out, err = steps[-1]
    assert name == "Compare with the baseline" and "Traceback" not in err
    if case == "one new job":
        assert code == 0 and (tmp_path / "github_output").read_text() == "exit-code=0\n"
        assert "::warning file=jobs/b.yaml::no baseline for b in baseline" in out
        assert (ws / "mfu-reports" / "compare" / "a" / "compare.json").is_file()
        return
    assert code == 1 and (tmp_path / "github_output").read_text() == ""         # no exit code: nothing compared
    errors = [line for line in out.splitlines() if line.startswith("::error")]
    assert errors == [{
        "mistyped folder": "::error::the job has no baseline (<folder>/<job name>/result.json) in "
                           "baselines: check the baseline input, or leave it empty to run without a gate; "
                           "nothing was compared with the baseline",
        "no report": "::error::no job produced a report (see the Run jobs step); nothing was compared with the "
                     "baseline"}[case]]
