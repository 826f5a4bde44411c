"""Text from traces and job files cannot inject HTML into report.md or break its tables."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pipeline.cli import main
from pipeline.report import mdsafe
from pipeline.trace.synth import SynthSpec, generate

HOSTILE = "st<img src=x onerror=alert(1)>|ep`\\"


def test_plain_text_is_escaped():
    assert mdsafe.plain("a<b>&c|d`e\\f\ng") == "a&lt;b&gt;&amp;c\\|d\\`e\\\\f g"


def test_code_spans_outlast_backticks_and_keep_pipes_out_of_tables():
    assert mdsafe.code("void k<float>") == "`void k<float>`"
    assert mdsafe.code("a``b|c\nd") == "```a``b\\|c d```"
    assert mdsafe.code("`x") == "`` `x ``"
    assert mdsafe.code("fwd|bwd", in_table=False) == "`fwd|bwd`"      # GitHub would show the backslash there


def unescaped_pipes(line: str) -> int:
    """Cell separators of a GFM table row: pipes not preceded by a backslash (code spans included)."""
    return len(re.findall(r"(?<!\\)\|", line))


def strip_code_spans(text: str) -> str:
    return re.sub(r"(`+)(?:(?!\1).)+?\1", "", text)


def test_report_md_of_a_hostile_trace_and_job(tmp_path: Path, capsys):
    trace = tmp_path / "t.sqlite"
    generate(SynthSpec(region=HOSTILE), trace)
    job = {"name": "hostile", "description": "<script>alert(1)</script> | pipes",
           "trace": str(trace), "region": {"name": HOSTILE},
           "hardware": {"num_gpus": 2, "precision": "bf16"}, "model": {"flops_per_step": 4.0e+13},
           "workload": {"mode": "training", "seq_len": 2048, "global_batch": 8},
           "analysis": {"kernel_classes": [{"class": "mine<b>|x", "pattern": "gemm"}]}}
    (tmp_path / "job.yaml").write_text(json.dumps(job))
    assert main(["run", str(tmp_path / "job.yaml"), "--out", str(tmp_path / "out")]) == 0, capsys.readouterr()
    md = (tmp_path / "out/hostile/report.md").read_text()
    assert HOSTILE.split("|")[0] in md                        # the names are shown ...
    outside = strip_code_spans(md)
    assert "<script" not in outside and "<img" not in outside and "<b>" not in outside   # ... but no raw HTML
    assert "&lt;script&gt;alert(1)&lt;/script&gt; \\| pipes" in md
    assert "mine&lt;b&gt;\\|x" in md
    # outside tables a code span keeps its pipe as written (the region name in the line under the title)
    [context] = [ln for ln in md.splitlines() if ln.startswith("explicit FLOPs per step")]
    assert mdsafe.code(HOSTILE, in_table=False) in context and "\\|" not in context
    table, width = [], None
    for line in md.splitlines() + [""]:                       # every row has as many cells as its header
        if line.startswith("|"):
            width = width or unescaped_pipes(line)
            assert unescaped_pipes(line) == width, line
        else:
            width = None
