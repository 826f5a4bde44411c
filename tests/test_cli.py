"""The command line as a user meets it: exit codes, messages, no tracebacks, nothing half-written."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.cli import build_parser, main

JOB = """\
name: {name}
trace: {trace}
region:
  name: {region}
  occurrences: {{first: 1, last: {last}}}
hardware:
  num_gpus: 2
  precision: bf16
model:
  flops_per_step: 2.0e+13
workload:
  mode: training
  seq_len: 2048
  global_batch: 8
thresholds:
  mfu_pct_wall_min: {threshold}
"""


def job(tmp_path: Path, trace: Path, name="j", region="train_step", last=3, threshold=0) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(JOB.format(name=name, trace=trace, region=region, last=last, threshold=threshold))
    return path


def run_cli(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_run_ok_writes_the_report_files_and_leaves_trace_alone(synth_trace, tmp_path, capsys):
    trace, _ = synth_trace()
    before = sha(trace)
    code, out, _ = run_cli(capsys, "run", job(tmp_path, trace), "--out", tmp_path / "out")
    assert code == 0
    assert sorted(p.name for p in (tmp_path / "out" / "j").iterdir()) == [
        "devices.svg", "report.html", "report.md", "result.json", "steps.svg", "timeline.svg"]       # no bytes model: no roofline
    assert "MFU" in out
    assert sha(trace) == before


def test_same_inputs_give_identical_bytes(synth_trace, tmp_path, capsys):
    trace, _ = synth_trace()
    j = job(tmp_path, trace)
    run_cli(capsys, "run", j, "--out", tmp_path / "a")
    run_cli(capsys, "run", j, "--out", tmp_path / "b")
    for name in ("report.md", "report.html", "result.json"):
        assert (tmp_path / "a/j" / name).read_bytes() == (tmp_path / "b/j" / name).read_bytes()
    body = (tmp_path / "a/j/report.md").read_text()
    assert str(tmp_path) not in body                      # no absolute paths in the body


def test_threshold_not_met_exits_1(synth_trace, tmp_path, capsys):
    trace, _ = synth_trace()
    code, out, _ = run_cli(capsys, "run", job(tmp_path, trace, threshold=99), "--out", tmp_path / "o")
    assert code == 1
    assert "threshold mfu_pct_wall_min 99 not met" in out


def test_json_summary(synth_trace, tmp_path, capsys):
    trace, _ = synth_trace()
    code, out, _ = run_cli(capsys, "run", job(tmp_path, trace), "--out", tmp_path / "o", "--format", "json")
    (row,) = json.loads(out)
    assert code == 0 and row["exit_code"] == 0 and row["metrics"]["mfu_pct_wall"] > 0



def test_json_summary_rows_hold_what_the_readme_lists(synth_trace, tmp_path, capsys):
    """The rows of `mfu run --format json` differ by outcome and were documented nowhere (found following
    README): a job with a result and a failed one, each row's keys against README's paragraph."""
    trace, _ = synth_trace()
    ok, bad = job(tmp_path, trace), job(tmp_path, tmp_path / "gone.sqlite", name="k")
    code, out, _ = run_cli(capsys, "run", ok, bad, "--out", tmp_path / "o", "--format", "json", "--no-cache")
    rows = {r["status"]: r for r in json.loads(out)}
    base = {"job", "name", "status", "exit_code", "reason"}
    assert code == 4 and set(rows) == {"ok", "error"} and "trace file not found" in rows["error"]["reason"]
    assert set(rows["ok"]) == base | {"report", "metrics", "step_time_median_s", "failed_thresholds"}
    assert set(rows["error"]) == base | {"config_sha256", "trace_sha256", "name_in_file"}
    readme = (Path(__file__).resolve().parents[1] / "docs" / "guide.md").read_text()
    para = readme[readme.index("With `--format json` the summary"):][:700]
    assert all(f"`{k}`" in para for r in rows.values() for k in r)

@pytest.mark.parametrize("make, code, needle", [
    (lambda d: d / "missing.sqlite", 4, "trace file not found"),
    (lambda d: _text_file(d), 4, "not an SQLite file"),
    (lambda d: _plain_sqlite(d), 4, "not an Nsight Systems export"),
    # a CPU-only capture: both missing tables named at once, not one per attempt
    (lambda d: _empty_export(d), 4, "no NVTX_EVENTS table (no regions) and no CUPTI_ACTIVITY_KIND_KERNEL table "
                                    "(no GPU kernels); capture with `nsys profile --trace=cuda,nvtx` and mark the step"),
])
def test_bad_traces(make, code, needle, tmp_path, capsys):
    got, _, err = run_cli(capsys, "run", job(tmp_path, make(tmp_path)), "--out", tmp_path / "o")
    assert got == code and needle in err
    assert not (tmp_path / "o" / "j").exists()            # nothing half-written


@pytest.mark.parametrize("name, hint", [
    ("step.nsys-rep",
     "(an Nsight Systems report: export it with `nsys export --type sqlite -o step.sqlite step.nsys-rep`)"),
    ("old.qdrep", "(an Nsight Systems report: export it with `nsys export --type sqlite -o old.sqlite old.qdrep`)"),
    ("job.yaml", "(a YAML file, a job file perhaps: the trace is the `nsys export --type sqlite` output; "
                 "`mfu validate` and `mfu run` take job files)"),
    ("notes.txt", None)])
def test_a_file_that_is_no_trace_says_what_it_probably_is(tmp_path, capsys, name, hint):
    """`mfu inspect job.yaml` (the job file given where the trace goes) and a report from Nsight Systems
    before 2021.3 (.qdrep) said only 'not an SQLite file'; an .nsys-rep got the export command without its
    file names."""
    path = tmp_path / name
    path.write_text("name: j\n")
    code, _, err = run_cli(capsys, "inspect", path)
    assert code == 4
    assert err.strip() == f"error: {path}: not an SQLite file" + (f" {hint}" if hint else "")


def _text_file(d: Path) -> Path:
    p = d / "notes.sqlite"
    p.write_text("hello")
    return p


def _empty_export(d: Path) -> Path:
    from nsys_export import Export
    return Export().write(d / "cpu_only.sqlite")


def _plain_sqlite(d: Path) -> Path:
    p = d / "other.sqlite"
    con = sqlite3.connect(p)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    return p


def test_region_that_does_not_exist(synth_trace, tmp_path, capsys):
    trace, _ = synth_trace()
    code, _, err = run_cli(capsys, "run", job(tmp_path, trace, region="optimizer"), "--out", tmp_path / "o")
    assert code == 4
    assert "no NVTX range matches 'optimizer'" in err and "train_step" in err   # names what exists


def test_occurrences_out_of_range_names_counts(synth_trace, tmp_path, capsys):
    trace, _ = synth_trace()
    code, _, err = run_cli(capsys, "run", job(tmp_path, trace, last=9), "--out", tmp_path / "o")
    assert code == 4
    assert "pid 4000: 5" in err and "pid 4001: 5" in err


def test_invalid_job_exits_3_with_location(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ntrace: t.sqlite\nregion: {name: s}\nhardware: {num_gpus: 0, precision: bf16}\n"
                   "model: {flops_per_step: 1.0e+12}\nworkload: {mode: training, seq_len: 1, global_batch: 1}\n")
    code, _, err = run_cli(capsys, "validate", bad)
    assert code == 3
    assert f"{bad}:4:" in err and "/hardware/num_gpus" in err


def test_validate_ok(synth_trace, tmp_path, capsys):
    trace, _ = synth_trace()
    code, out, _ = run_cli(capsys, "validate", job(tmp_path, trace))
    assert code == 0 and out.startswith("ok:")


def test_usage_error_exits_2(capsys):
    with pytest.raises(SystemExit) as info:
        main(["run"])
    assert info.value.code == 2


def test_inspect_json_on_synthetic(synth_trace, capsys):
    trace, truth = synth_trace()
    code, out, _ = run_cli(capsys, "inspect", trace, "--format", "json")
    info = json.loads(out)
    assert code == 0
    assert info["gpu_detection"]["entry"] == "h100-sxm"
    steps = [r for r in info["nvtx_ranges"] if r["name_group"] == "train_step"]
    assert steps[0]["ranges"] == 2 * 5               # 2 ranks x 5 steps planted
    assert [p["pid"] for p in info["processes"]] == [4000, 4001]
    assert info["counts"]["kernels_without_launch"] == 0 and not any("no launch row" in s for s in info["supports"])


def test_inspect_says_how_many_kernels_have_no_launch_row(synth_trace, capsys):
    """Half of a real trace's kernels had no launch row and neither inspect nor run said so."""
    trace, truth = synth_trace(ranks=1, steps=2, kernels_per_step=10, drop_launch_every=5, setup_kernels=0)
    code, out, _ = run_cli(capsys, "inspect", trace)
    # 1 rank x 2 steps x 10 kernels; launches 4 and 9 of each step dropped: 4 of 20
    assert code == 0 and "  - 4 of 20 kernels (20.0 %) have no launch row in their process" in out


def test_flops_preset_json(capsys):
    code, out, _ = run_cli(capsys, "flops", "--preset", "llama-3-8b", "--seq-len", "8192", "--format", "json")
    data = json.loads(out)
    # docs/figures.md §11: Llama-3-8B at seq 8192, training, megatron = 51.47 GFLOP per token
    assert code == 0 and round(data["flops_per_token"] / 1e9, 2) == 51.47


def test_gpus_lists_the_catalog(capsys):
    code, out, _ = run_cli(capsys, "gpus", "--format", "json")
    rows = {r["key"]: r for r in json.loads(out)}
    assert code == 0 and rows["h200-sxm"]["hbm_gbps"] == 4800 and rows["h100-sxm"]["bf16_tflops"] == 989.4


def test_gpus_shows_every_peak_a_job_may_declare(capsys):
    """`hardware.precision: fp32` is valid (and `mfu init` suggests it for sgemm kernels), but `mfu gpus` showed
    only bf16/fp16/fp8/tf32 and its JSON left fp32, fp64 and int8 out: the peak a job was measured against
    could not be looked up. Values from the NVIDIA A100 and H100 datasheets (dense)."""
    code, out, _ = run_cli(capsys, "gpus")
    header, *lines = out.splitlines()
    assert code == 0 and header.split()[2:7] == ["bf16", "fp16", "fp8", "tf32", "fp32"]
    a100 = next(line.split() for line in lines if line.startswith("a100-sxm4-40gb "))
    assert a100[-7:-2] == ["312", "312", "—", "156", "19.5"]
    code, out, _ = run_cli(capsys, "gpus", "--format", "json")
    rows = {r["key"]: r for r in json.loads(out)}
    assert (rows["a100-sxm4-40gb"]["fp32_tflops"], rows["a100-sxm4-40gb"]["int8_tflops"]) == (19.5, 624)
    assert (rows["h100-sxm"]["fp64_tflops"], rows["h100-sxm"]["fp64_tensor_tflops"]) == (33.5, 66.9)
    assert rows["v100-sxm2-32gb"]["bf16_tflops"] is None and rows["v100-sxm2-32gb"]["fp32_tflops"] == 15.7


def test_gpus_and_models_name_the_file_they_read_and_how_a_job_overrides_it(capsys):
    """An installed wheel has the catalog and presets only inside the package, not as configs/*.yaml: each
    listing ends naming the file it read, whole (here the checkout's, which pipeline/_data links to), and how
    a job file sets its own value instead."""
    repo = Path(__file__).resolve().parents[1]
    code, out, _ = run_cli(capsys, "gpus")
    assert code == 0 and out.splitlines()[-1] == (
        f"Dense TFLOP/s per GPU, from {repo}/configs/hardware.yaml (each entry's source, and its fp64, fp64_tensor, "
        "int8, fp4 peaks: `mfu gpus --format json`); a job file sets its own peak with hardware.peak_tflops.")
    code, out, _ = run_cli(capsys, "models")
    assert code == 0 and out.splitlines()[-1] == (
        f"From {repo}/configs/models.yaml. Use with `model: {{preset: NAME}}` in a job (keys beside it override the "
        "preset's), or `mfu flops --preset NAME --seq-len N`.")


def test_no_help_names_a_configs_file_a_wheel_has_not():
    """`configs/hardware.yaml` is a path of the checkout; a wheel user has the file inside the installed package.
    The help names the built-in files and the commands that print where they are."""
    from pipeline.cli.parser import build_parser
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices
    texts = [parser.format_help(), *(sp.format_help() for sp in commands.values())]
    assert [t for t in texts if "configs/hardware.yaml" in t or "configs/models.yaml" in t
            or "configs/kernel_classes.yaml" in t] == []
    assert "`mfu gpus` and `mfu models` print the path" in texts[0]
    assert "hardware.peak_tflops" in commands["gpus"].format_help()


def test_flops_help_names_the_model_schema_where_a_wheel_has_it():
    """Every architecture flag of `mfu flops --help` said '(see schemas/model.schema.json)', a checkout's path:
    an installed wheel has the file only inside the package, under pipeline/_data/schemas/."""
    import pipeline
    from pipeline.cli.parser import build_parser
    text = build_parser()._subparsers._group_actions[0].choices["flops"].format_help()
    assert "schemas/model.schema.json" not in text
    assert "model.schema.json (pipeline/_data/schemas/ in the installed package)" in " ".join(text.split())
    assert (Path(pipeline.__file__).parent / "_data" / "schemas" / "model.schema.json").is_file()


def test_console_script_help_lists_exit_codes():
    out = subprocess.run([sys.executable, "-m", "pipeline.cli", "--help"], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parents[1])
    assert out.returncode == 0
    for line in ("0    ok", "2    usage", "3    anything wrong in a job", "4    trace problem", "130  interrupted"):
        assert line in out.stdout


def test_mfu_ends_with_its_objects_frozen_out_of_the_collector(monkeypatch):
    """`mfu` (the console script and `python -m pipeline.cli`) is cli.console: main, then what the command made is
    frozen out of the garbage collector, also after a SystemExit (--help), so the process's exit does not run a full
    collection over it (0.05-0.07 s of CPU after a run)."""
    import gc
    import re

    from pipeline import cli
    repo = Path(__file__).resolve().parents[1]
    assert re.search(r'^mfu = "pipeline\.cli:console"$', (repo / "pyproject.toml").read_text(encoding="utf-8"), re.M)
    assert "sys.exit(console())" in (repo / "pipeline" / "cli" / "__main__.py").read_text(encoding="utf-8")
    for ending in (lambda: 3, lambda: sys.exit(2)):
        monkeypatch.setattr(cli, "main", ending)
        gc.unfreeze()
        try:
            try:
                assert cli.console() == 3
            except SystemExit as exc:
                assert exc.code == 2
            assert gc.get_freeze_count() > 0
        finally:
            gc.unfreeze()                        # this test process goes on collecting


def test_a_cold_run_imports_no_module_it_does_not_use(synth_trace, tmp_path):
    """A cold `mfu run` spends its start-up on modules it uses: difflib only names close GPUs or presets for a name
    it does not know (2 ms), numpy.ma only answered np.unique whether an array was masked (10-15 ms)."""
    trace, _ = synth_trace()
    path = job(tmp_path, trace)
    text = path.read_text(encoding="utf-8").replace("flops_per_step: 2.0e+13", "preset: llama-3-8b")
    path.write_text(text.replace("seq_len: 2048", "seq_len: 128").replace("global_batch: 8", "global_batch: 1"),
                    encoding="utf-8")
    script = ("import sys\n"
              "from pipeline.cli import main\n"
              "code = main(['run', '--no-cache', '--out', sys.argv[1], sys.argv[2]])\n"
              "print(code, [m for m in ('difflib', 'numpy.ma', 'numpy') if m in sys.modules])\n")
    repo = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "out"), str(path)], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(repo)}, check=True)
    assert done.stdout.split("\n")[-2] == "0 ['numpy']", done.stdout + done.stderr


def test_flops_architecture_flags_reproduce_semantics_11(capsys):
    code, out, _ = run_cli(capsys, "flops", "--hidden", 4096, "--layers", 32, "--heads", 32, "--ffn", 16384,
                           "--mlp", "gelu", "--attention", "full", "--no-lm-head", "--seq-len", 8192,
                           "--format", "json")
    assert code == 0 and json.loads(out)["model_flops_per_step"] == 422_212_465_065_984


def test_flops_text_shows_the_hfu_multiplier_and_hardware_total_of_each_row_with_recomputation(capsys):
    """`mfu flops --recompute full` printed the MFU multiplier per row and only the hardware step total, which no
    column added up to. Full recomputation re-runs each layer's forward: 4x for the layers, 3x for the LM head
    (docs/figures.md §7). Without recomputation the table keeps its one multiplier."""
    code, out, _ = run_cli(capsys, "flops", "--preset", "llama-3-8b", "--seq-len", 4096, "--batch", 16,
                           "--recompute", "full")
    lines = out.splitlines()
    assert code == 0 and lines[0].split() == ["component", "forward", "FLOPs", "MFU", "x", "total", "HFU", "x",
                                              "hardware", "total"]
    rows = {ln.split()[0]: [int(v.replace(",", "")) for v in ln.split()[1:]] for ln in lines[1:8]}
    assert list(rows) == ["q_proj", "kv_proj", "attn_scores", "attn_context", "out_proj", "mlp", "lm_head"]
    for name, (forward, mfu_x, total, hfu_x, hardware) in rows.items():
        assert (mfu_x, total) == (3, 3 * forward)
        assert (hfu_x, hardware) == ((3, 3 * forward) if name == "lm_head" else (4, 4 * forward)), name
    totals = {ln.rsplit(None, 1)[0].strip(): int(ln.split()[-1].replace(",", "")) for ln in lines[8:10]}
    assert totals == {"model FLOPs per step": sum(r[2] for r in rows.values()),
                      "hardware FLOPs per step": sum(r[4] for r in rows.values())}
    code, out, _ = run_cli(capsys, "flops", "--preset", "llama-3-8b", "--seq-len", 4096, "--batch", 16)
    assert code == 0 and out.splitlines()[0].split() == ["component", "forward", "FLOPs", "x", "total"]


def test_flops_moe_first_dense_layers_flag_sets_the_schema_key(capsys):
    """`--moe-first-dense` was mapped to moe.first_dense, a key the schema refuses: every use exited 2.
    Tiny model, T = 4 tokens, h = 8, gelu (2 matrices): forward FLOPs by hand, per layer."""
    code, out, err = run_cli(capsys, "flops", "--hidden", 8, "--layers", 2, "--heads", 2, "--ffn", 16, "--mlp", "gelu",
                             "--no-lm-head", "--moe-experts", 4, "--moe-top-k", 1, "--moe-expert-ffn", 16,
                             "--moe-first-dense-layers", 1, "--seq-len", 4, "--format", "json")
    assert code == 0, err
    forward = {r["component"]: r["forward_flops"] for r in json.loads(out)["breakdown"]}
    assert forward["mlp"] == 2 * 2 * 4 * 8 * 16          # layer 1 dense: two matmuls of 2·T·h·ffn
    assert forward["router"] == 2 * 4 * 8 * 4             # layer 2 MoE: 2·T·h·experts
    assert forward["experts"] == 1 * 2 * 2 * 4 * 8 * 16   # top-1 expert of width 16


def test_flops_of_a_job_file_refuses_workload_flags_it_would_ignore(tmp_path, capsys):
    """`mfu flops JOB --convention 6n` printed the job's megatron figure, exit 0: the flag was dropped unseen."""
    path = job(tmp_path, tmp_path / "t.sqlite")
    code, out, _ = run_cli(capsys, "flops", path, "--format", "json")
    assert code == 0 and json.loads(out)["model_flops_per_step"] == 20_000_000_000_000   # the job's flops_per_step
    for flag, value in (("--convention", "6n"), ("--mode", "inference"), ("--seq-len", "10"), ("--batch", "3"),
                        ("--recompute", "full"), ("--context-len", "5")):
        code, out, err = run_cli(capsys, "flops", path, flag, value)
        assert (code, out) == (2, "") and err.startswith(f"error: {flag}: the job file's workload and model")


def test_an_unknown_option_shows_the_command_usage(capsys):
    """`mfu run j.yaml --bogus` printed the top level's usage and pointed at `mfu --help`, which lists no option
    of run; the command's own usage and --help say what it takes."""
    with pytest.raises(SystemExit) as info:
        main(["gpus", "--bogus"])
    err = capsys.readouterr().err
    assert info.value.code == 2
    assert err.startswith("usage: mfu gpus [-h] [--format {text,json}]\n")
    assert "mfu gpus: error: unrecognized arguments: --bogus\n(see `mfu gpus --help`)" in err


def test_options_may_stand_between_the_job_files(tmp_path, capsys):
    """`mfu run a.yaml --out DIR b.yaml` (an option typed after the first file, or a glob expanded before it):
    argparse gave JOB... only the files before the first option and refused b.yaml as unrecognized (exit 2)."""
    a, b, out = tmp_path / "a.yaml", tmp_path / "b.yaml", tmp_path / "out"
    for base in (a, b):                       # base files: skipped with a note, no trace needed
        base.write_text("kind: base\nhardware: {num_gpus: 8}\n")
    code, _, err = run_cli(capsys, "run", a, "--out", out, b, "-j", "1")
    assert code == 0
    assert f"note: {a}: skipped" in err and f"note: {b}: skipped" in err
    assert (out / "index.md").is_file()       # the option between them was applied
    code, _, err = run_cli(capsys, "validate", a, b)
    assert code == 0
    with pytest.raises(SystemExit) as info:   # a real unknown option is still one, wherever it stands
        main(["run", str(a), "--bogus", str(b)])
    assert info.value.code == 2
    assert "mfu run: error: unrecognized arguments: --bogus" in capsys.readouterr().err


def test_a_run_where_no_job_ran_says_it_appended_nothing_to_the_history(tmp_path, capsys):
    """It said 'appended 0 results as run 1' (and created the DuckDB file): no run 1 exists, the next run is run 1.
    A run whose jobs all failed now appends their failures (test_history_failures); only a run of base files,
    where no job ran, appends nothing."""
    history = tmp_path / "h.duckdb"
    base = tmp_path / "base.yaml"
    base.write_text("kind: base\nhardware: {num_gpus: 8}\n")
    code, _, err = run_cli(capsys, "run", base, "--out", tmp_path / "out", "--history", history)
    assert code == 0
    assert f"history: nothing appended to {history}: no job of this run ran" in err
    assert "as run" not in err and not history.exists()


def test_synth_and_init_into_a_missing_folder_make_it_and_into_a_file_refuse(tmp_path, capsys):
    """Both ended in a traceback (exit 5) when the output's folder did not exist or was a file."""
    not_a_folder = tmp_path / "plain"
    not_a_folder.write_text("x")
    trace = tmp_path / "new" / "deeper" / "t.sqlite"
    assert run_cli(capsys, "synth", trace, "--steps", 2)[0] == 0 and trace.is_file()
    job_file = tmp_path / "jobs" / "t.yaml"
    assert run_cli(capsys, "init", trace, "-o", job_file)[0] == 0 and job_file.is_file()
    for argv in (["synth", not_a_folder / "t.sqlite"], ["init", trace, "-o", not_a_folder / "t.yaml"]):
        code, _, err = run_cli(capsys, *argv)
        assert code == 2 and f"{not_a_folder}: is a file, not a folder" in err
    assert not_a_folder.read_text() == "x"


def test_flops_without_model_is_a_usage_error(capsys):
    code, _, err = run_cli(capsys, "flops", "--seq-len", 8)
    assert code == 2 and "--preset" in err


@pytest.mark.parametrize(("args", "message"), [
    (["inspect", "--regions", "-1"], "argument --regions: -1 is less than 1"),
    (["inspect", "--ranges", "0"], "argument --ranges: 0 is less than 1"),
    (["inspect", "--ranges", "many"], "argument --ranges: 'many' is not a whole number"),
    # beyond DuckDB's BIGINT: was a ConversionException traceback, exit 5
    (["inspect", "--ranges", str(2**63)], f"argument --ranges: {2**63} is more than 9,223,372,036,854,775,807"),
    (["run", "-j", "0", "job.yaml"], "argument -j/--jobs: 0 is less than 1"),
    (["synth", "--kernels-per-step", "0"], "argument --kernels-per-step: 0 is less than 1"),
    (["synth", "--step-ns", "-5"], "argument --step-ns: -5 is less than 1"),
    (["flops", "--preset", "llama-3-8b", "--seq-len", "8", "--batch", "-1"], "argument --batch: -1 is less than 1"),
])
def test_counts_out_of_range_are_usage_errors(args, message, tmp_path, capsys):
    """A negative --regions reached DuckDB's LIMIT and ended in a traceback (exit 5); a count the
    command cannot use is a usage error (exit 2) naming the option and the bound."""
    target = tmp_path / "t.sqlite"
    with pytest.raises(SystemExit) as info:
        main([*args, str(target)])
    err = capsys.readouterr().err
    assert info.value.code == 2 and message in err and "Traceback" not in err
    assert not target.exists()


@pytest.mark.parametrize(("args", "message"), [
    # 2 x (2**63 - 1) x 40 kernels: the generator ran until killed
    (["--steps", str(2**63 - 1)], "asks for 737,869,762,948,382,064,560 kernels: more than 200,000,000"),
    (["--ranks", "1000", "--steps", "5000", "--kernels-per-step", "41"], "asks for 205,000,000 kernels"),
    (["--steps", "100000", "--step-ns", str(10**17)], "spans 10,000,000,000,000,000,000,000 ns: beyond the 64-bit"),
])
def test_synth_refuses_what_it_could_never_write(args, message, tmp_path, capsys):
    target = tmp_path / "t.sqlite"
    code, _, err = run_cli(capsys, "synth", target, *args)
    assert code == 2 and message in err and not target.exists()


def test_inspect_says_kernels_without_process_limit_the_regions(tmp_path, capsys):
    """An export whose kernel table has no globalPid: inspect says what `mfu run` will then do and refuse."""
    import sqlite3
    from nsys_export import Export, gpid, gtid
    e = Export()
    e.range(1000, 2000, gtid(100, 100), "step")
    e.launch(1100, gtid(100, 100), 1)
    for start in (1200, 1500, 1800):
        e.kernel(start, start + 100, gpid(100), 1)
    path = e.write(tmp_path / "t.sqlite")
    con = sqlite3.connect(path)
    con.execute("ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN globalPid")
    con.commit()
    con.close()
    code, out, _ = run_cli(capsys, "inspect", path, "--format", "json")
    (line,) = [s for s in json.loads(out)["supports"] if "globalPid" in s]
    assert code == 0 and line.startswith("3 kernels carry no globalPid") and "only to a region in one process" in line


def _cli(*args: str, cwd: Path | None = None, shell_prefix: str = "", **kw) -> subprocess.CompletedProcess:
    command = " ".join(f"'{a}'" for a in (sys.executable, "-m", "pipeline.cli", *args))
    return subprocess.run(["sh", "-c", shell_prefix + "exec " + command], capture_output=True, text=True,
                          cwd=cwd, **kw)


def test_an_ascii_terminal_gets_escapes_not_a_traceback(synth_trace):
    """inspect prints '—' and the trace's own names; with an ASCII (or Latin-1) stdout that was a
    UnicodeEncodeError (exit 5). The text is printed with backslash escapes instead."""
    trace, _ = synth_trace()
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    out = _cli("inspect", str(trace), env=env, cwd=Path(__file__).resolve().parents[1])
    assert out.returncode == 0 and out.stderr == ""
    assert "  catalog match: h100-sxm \\u2014 TARGET_INFO_GPU name" in out.stdout


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize("args", [("gpus",), ("models", "--format", "json")])
def test_a_full_disk_under_stdout_is_exit_2(args):
    out = _cli(*args, shell_prefix=">/dev/full ", cwd=Path(__file__).resolve().parents[1])
    assert (out.returncode, out.stderr) == (2, "error: cannot write (standard output or a file): No space left on "
                                               "device; free space there and run again\n")


def test_a_removed_current_folder_is_exit_2(tmp_path):
    """`mfu demo` (default --out reports) from a folder removed meanwhile was a FileNotFoundError traceback."""
    out = _cli("demo", cwd=tmp_path, shell_prefix="mkdir gone && cd gone && rmdir ../gone && ",
               env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert (out.returncode, out.stderr) == (2, "error: the current folder no longer exists (removed while in use); "
                                               "cd into an existing folder and run again\n")


@pytest.mark.parametrize("raised, said", [
    (lambda: __import__("duckdb").OutOfMemoryException("Out of Memory Error: Failed to allocate block of 33554432 "
                                                       "bytes (bad allocation)\n\nPossible solutions: ..."),
     "Out of Memory Error: Failed to allocate block of 33554432 bytes (bad allocation)"),
    (lambda: MemoryError(), "MemoryError"),
])
def test_a_run_out_of_memory_is_exit_2_not_a_bug(synth_trace, tmp_path, capsys, monkeypatch, raised, said):
    """Under `ulimit -v 600000` a 4 M-kernel job met DuckDB's OutOfMemoryException: the job's row and the exit
    code said internal error (5) with a traceback, as if mfu had a bug."""
    from pipeline import batch
    trace, _ = synth_trace()

    def out_of_memory(*args, **kwargs):
        raise raised()
    monkeypatch.setattr(batch, "run_to_folder", out_of_memory)
    code, out, err = run_cli(capsys, "run", job(tmp_path, trace), "--out", tmp_path / "o")
    assert code == 2
    assert err == f"error: out of memory ({said}); free memory, raise the limit (`ulimit -v`, a container's), or " \
                  "run fewer jobs at once (--jobs)\n"


def test_synth_onto_a_full_disk_is_exit_2_and_leaves_nothing(tmp_path, capsys, monkeypatch):
    """`mfu synth` (the quickstart's first command) onto a full disk was SQLite's OperationalError with a
    traceback (exit 5), leaving a half-written trace."""
    from pipeline.trace import synth
    write = synth.write_export

    def full(spec, tables, out):
        write(spec, tables, out)
        raise sqlite3.OperationalError("database or disk is full")
    monkeypatch.setattr(synth, "write_export", full)
    code, _, err = run_cli(capsys, "synth", tmp_path / "t.sqlite")
    assert (code, err) == (2, f"error: {tmp_path}/t.sqlite: cannot write the synthetic trace (database or disk is full)\n")
    assert list(tmp_path.iterdir()) == []


def test_a_failed_threshold_shows_the_digits_that_tell_value_and_limit_apart(synth_trace, tmp_path, capsys):
    """MFU 32.349 % against a minimum of 32.35 printed '32.35 against limit 32.35' and FAIL in the report,
    and a 0.05002 s step against a 0.05 s maximum 'not met: 0.050' on the terminal: two equal numbers, failed."""
    trace, truth = synth_trace()
    occ = truth["occurrences"][:3]
    assert all(a["start_ns"] + a["wall_ns"] < b["start_ns"] for a, b in zip(occ, occ[1:]))   # envelopes apart
    wall_s = sum(o["wall_ns"] for o in occ) / 1e9
    flops = 0.32349 * wall_s * 2 * 989.4e12 / 3          # MFU = 3 F / (wall x 2 GPUs x 989.4 TFLOP/s) = 32.349 %
    path = tmp_path / "j.yaml"
    path.write_text(JOB.format(name="j", trace=trace, region="train_step", last=3, threshold=32.35)
                    .replace("2.0e+13", repr(flops)) + "  step_time_s_max: 0.05\n")
    code, out, _ = run_cli(capsys, "run", path, "--out", tmp_path / "o")
    assert code == 1
    assert occ[0]["wall_ns"] == 50_020_000                          # the step the 0.05 s maximum is tested on
    assert "threshold mfu_pct_wall_min 32.35 not met: 32.349" in out
    assert "threshold step_time_s_max 0.05 not met: 0.05002" in out
    md = (tmp_path / "o/j/report.md").read_text()
    assert "| mfu_pct_wall_min | 32.35 | 32.349 | **FAIL** |" in md
    assert "| step_time_s_max | 0.05 | 0.05002 | **FAIL** |" in md
    assert "mfu_pct_wall_min (32.349 against limit 32.35), step_time_s_max (0.05002 against limit 0.05)" in md
    html = (tmp_path / "o/j/report.html").read_text()
    assert '<td class="n">32.35</td><td class="n">32.349</td>' in html


def test_a_run_never_imports_pandas(synth_trace, tmp_path):
    """DuckDB's client imported pandas, where installed, before binding every statement with parameters: a
    whole pandas import (0.2-0.4 s) in each cold run, for nothing mfu reads. A stand-in `pandas` package on
    the path marks whether anything imported it."""
    trace, _ = synth_trace()
    fake = tmp_path / "site" / "pandas"
    fake.mkdir(parents=True)
    mark = tmp_path / "pandas-imported"
    (fake / "__init__.py").write_text(f"open({str(mark)!r}, 'w').close()\n")
    repo = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), str(repo)])}
    out = _cli("run", str(job(tmp_path, trace)), "--no-cache", "--out", str(tmp_path / "out"), env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "out" / "j" / "result.json").is_file()
    assert not mark.exists()


def test_a_program_calling_main_keeps_its_pandas(capsys, monkeypatch):
    """The command blocks pandas' import while it runs (above), and only then: a program that calls main() in
    its own process (a notebook, a script, these tests) could not `import pandas` afterwards ('import of
    pandas halted; None in sys.modules'). After the command, sys.modules is as it was."""
    monkeypatch.delitem(sys.modules, "pandas", raising=False)
    code, _, _ = run_cli(capsys, "gpus")
    assert code == 0
    assert "pandas" not in sys.modules


def test_a_threshold_on_an_invalid_result_is_not_tested(synth_trace, tmp_path, capsys):
    """An impossible MFU (here 3 x 2e13 FLOP / (0.15006 s x 2 GPUs x 1 TFLOP/s) = 19,992 %) 'passed' its
    30 % minimum: the report's thresholds table said 'pass' and the index 'passed (2)' beside the struck-out
    figure. A figure that is no measurement meets no threshold and fails none: it is not tested."""
    trace, _ = synth_trace()
    path = job(tmp_path, trace, threshold=30)
    path.write_text(path.read_text().replace("precision: bf16", "precision: bf16\n  peak_tflops: 1")
                    + "  step_time_s_max: 10\n")
    code, out, _ = run_cli(capsys, "run", path, "--out", tmp_path / "o")
    assert code == 1 and "[INVALID]" in out and "not met" not in out
    res = json.loads((tmp_path / "o/j/result.json").read_text())
    assert res["status"] == "invalid" and res["metrics"]["mfu_pct_wall"] > 100
    # the terminal cannot strike a figure through: the impossible MFU is not printed as one, the reason is
    assert f"{res['metrics']['mfu_pct_wall']:.2f} %" not in out and "MFU above 100 %" in out
    assert "no figure is a measurement" in out
    assert [(t["name"], t["passed"]) for t in res["thresholds"]] == [("mfu_pct_wall_min", None),
                                                                      ("step_time_s_max", None)]
    from pipeline.job.documents import validator
    assert [e.message for e in validator("result.schema.json").iter_errors(res)] == []
    md = (tmp_path / "o/j/report.md").read_text()
    assert "| mfu_pct_wall_min | 30 |" in md and md.count("| not tested: the result is invalid |") == 2
    assert "Threshold failed" not in md and "| pass |" not in md
    html = (tmp_path / "o/j/report.html").read_text()
    assert html.count("<td>not tested: the result is invalid</td>") == 2 and "Threshold failed" not in html
    row = next(ln for ln in (tmp_path / "o/index.md").read_text().splitlines() if ln.startswith("| [j]"))
    assert row.startswith("| [j](j/report.md) | invalid: MFU above 100 % is physically impossible")
    assert row.endswith("| not tested (invalid result) |")
    assert "not tested (invalid result)" in (tmp_path / "o/index.html").read_text()


@pytest.mark.parametrize("command, option, needs", [("run", "--label", "--history"),
                                                    ("compare", "--junit", "--max-regression"),
                                                    ("compare", "--strict", "--max-regression"),
                                                    ("compare", "--allow-incomparable", "--max-regression")])
def test_help_says_which_options_need_another(capsys, monkeypatch, command, option, needs):
    """Each of these is a usage error (exit 2) without the other option; --help, the only copy of the help text,
    says so beside it, as README's exit codes do."""
    monkeypatch.setenv("COLUMNS", "1000")                   # one line per option
    with pytest.raises(SystemExit):
        main([command, "--help"])
    [line] = [ln for ln in capsys.readouterr().out.splitlines() if ln.lstrip().startswith(option + " ")]
    assert f"needs {needs}" in line


def test_a_missing_trace_given_to_inspect_is_not_blamed_on_a_job(tmp_path, capsys):
    """`mfu inspect missing.sqlite` said "check `trace:` in the job", though no job was involved."""
    code, _, err = run_cli(capsys, "inspect", tmp_path / "missing.sqlite")
    assert code == 4
    assert err.strip() == (f"error: {tmp_path}/missing.sqlite: trace file not found; check the path (a job's `trace:` "
                           "is relative to the job file, a path on the command line to the current folder)")


@pytest.mark.parametrize("given", ["nosuch.yaml", "jobs/nosuch.yaml"])
def test_a_missing_job_file_is_said_not_to_exist_and_where_it_was_looked_for(tmp_path, monkeypatch, capsys, given):
    """`mfu validate nosuch.yaml` said 'nosuch.yaml: /: job file not found': a JSON pointer into a file that is
    not there. A relative path names the current folder on the terminal, never in a report or a history."""
    monkeypatch.chdir(tmp_path)
    here = tmp_path.resolve()
    code, _, err = run_cli(capsys, "validate", given)
    assert code == 3 and err == f"{given}: no such job file (relative to the current folder, {here})\n"
    code, _, err = run_cli(capsys, "run", given, "--out", "out", "--history", "hist")
    assert code == 3 and f"error: {given}: no such job file (relative to the current folder, {here})\n" in err
    assert "| nosuch.yaml | error (exit 3): nosuch.yaml: no such job file |" in (tmp_path / "out/index.md").read_text()
    written = [p for p in [*(tmp_path / "out").rglob("*"), *(tmp_path / "hist").rglob("*")] if p.is_file()]
    assert len(written) >= 4 and not [p for p in written if str(here).encode() in p.read_bytes()]
    code, _, err = run_cli(capsys, "validate", here / "nosuch.yaml")
    assert code == 3 and err == f"{here}/nosuch.yaml: no such job file\n"         # absolute: nothing to add


@pytest.mark.parametrize("given", ["nosuch.yaml", "jobs/nosuch.yaml", "../elsewhere/nosuch.yaml"])
def test_a_missing_job_file_in_the_json_summary_is_named_as_typed_without_this_machines_folder(
        tmp_path, monkeypatch, capsys, given):
    """`mfu run --format json nosuch.yaml` gave the reason 'nosuch.yaml: no such job file (relative to the current
    folder, /home/me/runs)': an absolute path of this machine in output meant for a tool or a file. The reason
    says what is wrong with the path as typed; stderr, read by a person, still names the folder."""
    here = tmp_path / "runs"
    here.mkdir()
    monkeypatch.chdir(here)
    code, out, err = run_cli(capsys, "run", "--format", "json", given, "--out", "out")
    [row] = json.loads(out)
    assert code == 3 and (row["job"], row["exit_code"], row["status"]) == (given, 3, "error")
    assert row["reason"] == f"{given}: no such job file"
    assert str(tmp_path) not in out
    assert f"error: {given}: no such job file (relative to the current folder, {here.resolve()})\n" in err


@pytest.mark.parametrize("args, said", [
    (["history", "h", "--min-change", "-5%"], "argument --min-change: -5%: a size takes no sign (a run is flagged "
     "when MFU or the median step time moves by more than it, either way); write 5%"),
    (["history", "h", "--min-change=-5%"], "argument --min-change: -5%: a size takes no sign"),
    (["history", "h", "--min-change", "-.5"], "argument --min-change: -.5: a size takes no sign (a run is flagged "
     "when MFU or the median step time moves by more than it, either way); write 0.5%"),
    (["compare", "a", "b", "--max-regression", "-5%"], "argument --max-regression: -5%: a size takes no sign (how "
     "much worse a gated figure may be: MFU lower, step time higher); write 5%"),
    (["compare", "a", "b", "--max-regression", "5%%"], "argument --max-regression: '5%%' is not a percentage; write "
     "it as e.g. 5%"),
    (["compare", "a", "b", "--max-regression", "inf"], "argument --max-regression: 'inf' is not a finite percentage"),
    (["history", "h", "--min-change", "nan"], "argument --min-change: 'nan' is not a finite percentage"),
    (["run", "j.yaml", "-j", "-1e3"], "argument -j/--jobs: '-1e3' is not a whole number"),
    (["flops", "--preset", "llama-3-8b", "--seq-len", "-1e3"], "argument --seq-len: '-1e3' is not a whole number"),
])
def test_a_value_starting_with_a_minus_reaches_its_option_and_is_refused_saying_how_to_write_it(
        tmp_path, monkeypatch, capsys, args, said):
    """`mfu history --min-change -5%` got argparse's 'expected one argument' (the value read as an option):
    the option's own check now says what is wrong and how to write it, exit 2, before anything is written."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exc:
        main(args)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and said in err and "expected one argument" not in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("given, want", [(None, 5.0), ("7.5%", 7.5), ("7.5", 7.5), (" 0% ", 0.0), ("1e1%", 10.0)])
def test_a_percentage_is_read_with_or_without_the_percent_sign(given, want):
    """The values --min-change and --max-regression take (README: 5%, or 5): the number before one '%'."""
    extra = [] if given is None else ["--max-regression", given]
    assert build_parser().parse_args(["compare", "a", "b", *extra]).max_regression == (None if given is None else want)
    extra = [] if given is None else ["--min-change", given]
    assert build_parser().parse_args(["history", "h", *extra]).min_change == want


def test_cache_and_no_cache_together_are_a_usage_error(tmp_path, capsys):
    """`mfu run job.yaml --cache DIR --no-cache` ran without the cache and never said --cache was ignored;
    README writes them as alternatives (`[--cache DIR|--no-cache]`)."""
    with pytest.raises(SystemExit) as exc:
        main(["run", str(tmp_path / "j.yaml"), "--cache", str(tmp_path / "c"), "--no-cache"])
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert "argument --no-cache: not allowed with argument --cache" in err
    assert not (tmp_path / "c").exists()
