"""`mfu init`: a job skeleton whose inferred values match the generator's truth, and whose TODOs
fail `mfu validate` at their own lines until filled in."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from pipeline.cli import main
from pipeline.trace.synth import COMPUTE_NAMES, NCCL_NAME


def cli(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def init(capsys, tmp_path: Path, trace: Path, *extra) -> tuple[Path, str]:
    job = tmp_path / "job.yaml"
    code, _, err = cli(capsys, "init", trace, "-o", job, *extra)
    assert code == 0 and "fill in each TODO" in err
    return job, job.read_text()


def todo_lines(text: str) -> list[int]:
    return [i for i, line in enumerate(text.splitlines(), 1) if re.search(r":\s+TODO\b", line)]


def test_inferred_values_match_the_truth(synth_trace, tmp_path, capsys):
    trace, truth = synth_trace(steps=8, layers=6, warmup_steps=2, kernels_per_step=60)
    want = truth["discovery"]
    job, text = init(capsys, tmp_path, trace)
    data = yaml.safe_load(text)
    assert data["region"]["name"] == want["step_region"] and data["region"]["match"] == "exact"
    assert data["region"]["occurrences"] == {"first": want["warmup_occurrences"] + 1}
    assert data["hardware"]["num_gpus"] == want["devices"]
    assert data["hardware"]["gpu"] == "auto" and want["gpu_name"] == "NVIDIA H100 80GB HBM3"
    # the only precision the planted kernel names spell is bf16
    assert [n for n in COMPUTE_NAMES + [NCCL_NAME] if re.search("(?i)fp8|e4m3|fp16|half|tf32", n)] == []
    assert data["hardware"]["precision"] == "bf16"
    assert f"'{want['nested_region']}': nested (depth 1)" in text          # the alternative, in a comment


def test_todos_fail_validate_at_their_lines_until_filled(synth_trace, tmp_path, capsys):
    trace, truth = synth_trace(steps=6, warmup_steps=1)
    job, text = init(capsys, tmp_path, trace)
    todos = todo_lines(text)
    assert len(todos) == 4                                    # model, mode, seq_len, global_batch
    code, _, err = cli(capsys, "validate", job)
    assert code == 3
    problems = err.strip().splitlines()
    assert len(problems) == len(todos)
    for line, problem in zip(todos, problems):
        assert problem.startswith(f"{job}:{line}:") and "not filled in yet (TODO)" in problem
    filled = (text.replace("preset: TODO", "flops_per_step: 2.0e+13").replace("mode: TODO", "mode: training")
              .replace("seq_len: TODO", "seq_len: 2048").replace("global_batch: TODO", "global_batch: 2"))
    job.write_text(filled)
    assert cli(capsys, "validate", job)[0] == 0
    code, _, _ = cli(capsys, "run", job, "--out", tmp_path / "out")
    assert code == 0
    res = json.loads((tmp_path / "out" / yaml.safe_load(filled)["name"] / "result.json").read_text())
    assert res["region"]["first"] == 2 and res["region"]["last"] == truth["spec"]["steps"]


def test_a_flops_per_step_skeleton_is_told_its_token_counts_may_go(synth_trace, tmp_path, capsys):
    """The skeleton's model line says `... or flops_per_step`; written so, its seq_len and global_batch TODOs
    were still 'replace TODO with a value', though such a job needs neither (an HPC kernel has no tokens)."""
    trace, _ = synth_trace(steps=6, warmup_steps=1)
    job, text = init(capsys, tmp_path, trace)
    job.write_text(text.replace("preset: TODO", "flops_per_step: 2.0e+13").replace("mode: TODO", "mode: inference"))
    code, _, err = cli(capsys, "validate", job)
    problems = err.strip().splitlines()
    assert code == 3 and [p.split(": ")[1] for p in problems] == ["/workload/seq_len", "/workload/global_batch"]
    assert all("with model.flops_per_step it is optional: delete the line" in p for p in problems)
    job.write_text("".join(line for line in job.read_text().splitlines(keepends=True)
                           if not re.match(r"\s+(seq_len|global_batch): TODO", line)))
    assert cli(capsys, "validate", job)[0] == 0                     # as the hint says
    # with an architecture, the token counts are needed: the hint stays "replace TODO"
    job.write_text(text)
    assert "with model.flops_per_step" not in cli(capsys, "validate", job)[2]


def test_preset_is_written_and_not_a_todo(synth_trace, tmp_path, capsys):
    trace, _ = synth_trace()
    _, text = init(capsys, tmp_path, trace, "--preset", "llama-3-8b")
    assert yaml.safe_load(text)["model"] == {"preset": "llama-3-8b"}
    assert len(todo_lines(text)) == 3


def test_unknown_gpu_is_a_todo_with_the_nearest_entries(synth_trace, tmp_path, capsys):
    trace, _ = synth_trace(gpu_name="NVIDIA H100 PCIe 96GB Prototype")
    _, text = init(capsys, tmp_path, trace)
    line = next(x for x in text.splitlines() if x.strip().startswith("gpu:"))
    assert line.split("#")[0].split(":")[1].strip() == "TODO"
    assert "not a catalog entry; nearest:" in line


def test_an_op_level_trace_gets_the_active_window_and_its_ops_as_alternatives(real_trace, tmp_path, capsys):
    """h100_2gpu_1s holds PyTorch op ranges only: the region was TODO; now the GPU-active window, as a guess."""
    _, text = init(capsys, tmp_path, real_trace("nsysai__h100_2gpu_1s.sqlite"))
    assert "# Region discovery: guessing: the ranges holding GPU work mark operators ('aten::linear'" in text
    assert yaml.safe_load(text)["region"] == {"kind": "gpu_active", "covers": "step"}
    assert "  # other candidates, by the GPU work they enclose (kind: nvtx, the default):" in text
    assert yaml.safe_load(text)["hardware"]["gpu"] == "TODO"           # no TARGET_INFO_GPU table


def test_candidates_with_pytorch_suffixes_say_match_prefix(real_trace, tmp_path, capsys):
    """The candidates were written as bare name groups ('aten::linear'); copied into region.name with the
    skeleton's match: exact they matched nothing (exit 4), since every such range is 'aten::linear, op_id = N'.
    Checked against the trace's own NVTX text with sqlite3: a group whose ranges all carry a suffix says so."""
    import sqlite3
    path = real_trace("nsysai__h100_2gpu_1s.sqlite")
    _, text = init(capsys, tmp_path, path)
    lines = [line for line in text.splitlines() if line.startswith("  #   '")]
    assert len(lines) == 4 and "  #   'aten::linear' (match: prefix): " in text
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    names = {row[0] for row in con.execute(
        "SELECT coalesce(e.text, s.value) FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId")}
    for line in lines:
        group = line.split("'")[1]
        suffixed = group not in names and any((n or "").startswith(group + ", ") for n in names)
        assert line.startswith(f"  #   '{group}' (match: prefix): " if suffixed else f"  #   '{group}': "), line

def test_never_overwrites_and_unknown_preset_names_the_flag(synth_trace, tmp_path, capsys):
    trace, _ = synth_trace()
    job = tmp_path / "job.yaml"
    job.write_text("mine\n")
    code, _, err = cli(capsys, "init", trace, "-o", job)
    assert code == 2 and "exists" in err and job.read_text() == "mine\n"
    code, _, err = cli(capsys, "init", trace, "--preset", "llama-3-9b")
    assert code == 2 and err.startswith("error: --preset: unknown model preset 'llama-3-9b'")


def test_pytorch_suffixed_step_is_matched_by_prefix_and_runs(synth_trace, tmp_path, capsys):
    trace, truth = synth_trace(region="ProfilerStep, seq = 7, op_id = 3")
    job, text = init(capsys, tmp_path, trace, "--preset", "llama-3.2-1b")
    region = yaml.safe_load(text)["region"]
    assert (region["name"], region["match"]) == ("ProfilerStep", "prefix")
    job.write_text(text.replace("mode: TODO", "mode: training").replace("seq_len: TODO", "seq_len: 512")
                   .replace("global_batch: TODO", "global_batch: 2"))
    assert cli(capsys, "run", job, "--out", tmp_path / "out")[0] == 0
    res = json.loads((tmp_path / "out" / yaml.safe_load(text)["name"] / "result.json").read_text())
    assert res["region"]["occurrences_per_process"] == {"4000": truth["spec"]["steps"], "4001": truth["spec"]["steps"]}


def test_printed_skeleton_names_the_trace_by_its_absolute_path(synth_trace, tmp_path, capsys, monkeypatch):
    """Printed, it wrote the path relative to the current folder under the comment 'relative to this file':
    `mfu init t.sqlite > jobs/x.yaml` then named jobs/t.sqlite, which does not exist (exit 4)."""
    trace, _ = synth_trace(ranks=1, steps=3)
    monkeypatch.chdir(trace.parent)
    code, out, _ = cli(capsys, "init", trace.name)
    line = next(x for x in out.splitlines() if x.startswith("trace:"))
    assert code == 0 and line.startswith(f'trace: "{trace.resolve()}"') and "relative to this file" not in line


def test_a_job_file_that_cannot_be_written_is_a_usage_error(synth_trace, tmp_path, capsys, monkeypatch):
    """A disk filling while the skeleton is written was a traceback (exit 5) that left the half-written temp
    file beside the job's place."""
    trace, _ = synth_trace()

    def full(self, data, **kw):
        with open(self, "w") as fh:
            fh.write(data[:10])
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(Path, "write_text", full)
    code, _, err = cli(capsys, "init", trace, "-o", tmp_path / "job.yaml")
    assert code == 2 and "cannot write the job file there (No space left on device)" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_line_breaks_in_a_trace_file_name_stay_inside_the_comment(synth_trace, tmp_path, capsys):
    """The header comment names the trace file: a newline (or U+2028, a YAML 1.1 line break) in that name
    ended the comment and made the written job file invalid YAML (exit 3 at `mfu validate`)."""
    import shutil
    trace, _ = synth_trace()
    odd = Path(shutil.copyfile(trace, tmp_path / "step\nrun\u2028.sqlite"))
    job, text = init(capsys, tmp_path, odd, "--preset", "llama-3.2-1b")
    assert text.startswith("# Job skeleton written by `mfu init` from step\\nrun\\u2028.sqlite.\n")
    job.write_text(text.replace("mode: TODO", "mode: training").replace("seq_len: TODO", "seq_len: 2048")
                   .replace("global_batch: TODO", "global_batch: 2"))
    assert cli(capsys, "validate", job)[0] == 0
    assert yaml.safe_load(job.read_text())["trace"] == "step\nrun\u2028.sqlite"


def test_a_trace_that_can_give_no_mfu_writes_no_job(tmp_path, capsys):
    """Without GPU work (no kernels, graph launches or memory operations) every job of the skeleton would fail:
    init says why and what to capture (exit 4) instead of writing a file of TODOs. Kernels without any NVTX range
    are GPU work: their job measures the GPU-active window."""
    from nsys_export import Export, gpid, gtid
    nothing, no_kernels, no_ranges = Export(), Export(), Export()
    nothing.processes.append({"globalPid": gpid(100), "pid": 100, "name": "python"})
    no_kernels.range(1000, 2000, gtid(100, 100), "step")
    no_kernels.range(3000, 4000, gtid(100, 100), "step")
    for export, said in ((nothing, "has no NVTX ranges"), (no_kernels, "holds no GPU kernels")):
        trace = export.write(tmp_path / f"{said.split()[-1]}.sqlite")
        job = tmp_path / "job.yaml"
        code, out, err = cli(capsys, "init", trace, "-o", job)
        assert code == 4 and said in err and "nsys profile --trace=cuda,nvtx" in err and "No job file written" in err
        assert not job.exists() and out == ""
    no_ranges.launch(1100, gtid(100, 100), 1)
    no_ranges.kernel(1200, 1300, gpid(100), 1)
    _, text = init(capsys, tmp_path, no_ranges.write(tmp_path / "gpu_only.sqlite"))
    assert yaml.safe_load(text)["region"] == {"kind": "gpu_active", "covers": "step"}


def test_a_refused_trace_leaves_no_empty_folder_for_the_job(tmp_path, capsys):
    """`-o` into a folder that does not exist made the folder before the trace was read: a trace that gets
    no job file (exit 4) left it behind, empty (locations.folder promises a failed run leaves none)."""
    from nsys_export import Export, gtid
    export = Export()
    export.range(1000, 2000, gtid(100, 100), "step")              # no GPU work: no job file
    trace = export.write(tmp_path / "t.sqlite")
    code, _, err = cli(capsys, "init", trace, "-o", tmp_path / "new" / "deeper" / "job.yaml")
    assert code == 4 and "No job file written" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.sqlite"]


def test_the_precision_comment_gives_the_time_whose_names_say_no_type(tmp_path, capsys):
    """The quickstart's skeleton said 'bf16 32 %' and nothing of the other 68 %, which reads as time in some
    other precision. By hand: gemm kernels 300 ns named bf16 and 700 ns named without a type (nvjet) in one
    step range; a 1000 ns elementwise kernel is no matrix kernel. bf16 30 %, no type in the name 70 %."""
    from nsys_export import Export, gpid, gtid
    e, tid = Export(), gtid(100, 100)
    for k, (name, dur) in enumerate([("sm90_xmma_gemm_bf16bf16_bf16f32", 300), ("nvjet_tst_192x192", 700),
                                     ("vectorized_elementwise_kernel", 1000)]):
        start = 10_000 * k
        e.range(start, start + 5000, tid, "step")
        e.launch(start + 100, tid, k + 1)
        e.kernel(start + 200, start + 200 + dur, gpid(100), k + 1, name=name)
    _, text = init(capsys, tmp_path, e.write(tmp_path / "t.sqlite"))
    (line,) = [line for line in text.splitlines() if line.startswith("  precision:")]
    assert "(share of gemm/attention/convolution time: bf16 30 %, no type in the name 70 %)" in line
