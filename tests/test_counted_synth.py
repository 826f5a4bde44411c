"""Counted FLOPs of a synthetic emit_nvtx trace equal the FLOPs planted, per occurrence and kind (issue #31)."""

from __future__ import annotations

from pipeline.analysis import classes
from pipeline.analysis.measure import build_window
from pipeline.job.config import Region
from pipeline.trace import queries

SPEC = {"operator_shapes": True, "layers": 2, "drop_launch_every": 7, "nccl_every": 9, "steps": 3}


def test_flops_and_covered_time_per_occurrence_match_the_planted(synth_trace, open_views) -> None:
    path, truth = synth_trace(**SPEC)
    trace = open_views(path)
    build_window(trace, Region("train_step", "exact", None, 1, None, "process", 1),
                 classes.classify_params(classes.load_rules()))
    got = trace.con.execute("SELECT occurrence, kind, sum(flops) FROM operator_work WHERE status = 'counted' "
                            "GROUP BY ALL ORDER BY ALL").fetchall()
    assert got == [(o["index"], kind, flops) for o in truth["occurrences"]
                   for kind, flops in sorted(o["counted_flops"].items())]
    assert {kind for o in truth["occurrences"] for kind in o["counted_flops"]} == {
        "mm", "bmm", "attention", "attention_backward"}
    covered = trace.con.execute("SELECT occurrence, sum(gemm_ns) FILTER (WHERE status = 'counted'), sum(gemm_ns) "
                                "FROM operator_work WHERE status <> 'range' GROUP BY ALL ORDER BY ALL").fetchall()
    assert covered == [(o["index"], o["covered_ns"], o["class_ns"]) for o in truth["occurrences"]]
    assert all(0 < o["covered_ns"] < o["class_ns"] for o in truth["occurrences"])   # some GEMMs outside operators
    assert queries.run(trace.con, "counted_flops")[-1]["flops"] == sum(
        f for o in truth["occurrences"] for f in o["counted_flops"].values())
