"""The counted_flops section (issue #31): counted FLOPs against the planted ones and the declared numerator,
coverage, the warning, MFU per part of the step, and both report pages showing it."""

from __future__ import annotations

import pytest

from nsys_export import Export, gpid, gtid
from pipeline.job.config import load_job
from pipeline.report.render import render_all
from pipeline.run import run_job
from test_run_synth import write_job

MIXED = {"operator_shapes": True, "layers": 2, "nccl_every": 9, "steps": 3}     # some GEMMs not covered
WHOLE = {**MIXED, "operator_gaps": False}                                       # every GEMM in a shaped operator


def _run(synth_trace, tmp_path, spec: dict, flops_per_step: float | None = None) -> tuple[dict, dict]:
    """The job over the synthetic trace; by default declaring exactly the FLOPs planted per step (2 ranks)."""
    trace, truth = synth_trace(**spec)
    planted = sum(f for o in truth["occurrences"] for f in o["counted_flops"].values())
    job = write_job(tmp_path, trace, hardware={"num_gpus": 2, "peak_tflops": 989.4},
                    model={"flops_per_step": flops_per_step or planted / len(truth["occurrences"])})
    return run_job(load_job(job)), truth


def test_counted_flops_and_coverage_are_the_planted_ones(synth_trace, tmp_path) -> None:
    res, truth = _run(synth_trace, tmp_path, MIXED)
    c, occ = res["counted_flops"], truth["occurrences"]
    assert c["flops_total"] == sum(f for o in occ for f in o["counted_flops"].values())
    assert {k["kind"]: k["flops"] for k in c["by_kind"]} == {
        kind: sum(o["counted_flops"][kind] for o in occ) for kind in ("mm", "bmm", "attention", "attention_backward")}
    covered, of = sum(o["covered_ns"] for o in occ), sum(o["class_ns"] for o in occ)
    assert c["coverage"]["share"] == covered / of and 0.3 < covered / of < 0.9     # some GEMMs launched outside
    assert {n["reason"] for n in c["coverage"]["not_covered"]} == {"no shapes recorded"}
    assert c["declared"]["ratio_to_hardware"] == pytest.approx(1.0)
    assert "counted_flops_differ" not in [w["code"] for w in res["warnings"]]     # under 90 %: nothing judged


def test_a_wrong_declared_batch_is_warned_when_the_count_covers_the_work(synth_trace, tmp_path) -> None:
    res, truth = _run(synth_trace, tmp_path, WHOLE)
    assert res["counted_flops"]["coverage"]["share"] == 1.0
    assert "counted_flops_differ" not in [w["code"] for w in res["warnings"]]
    planted = res["counted_flops"]["flops_total"] / len(truth["occurrences"])
    res, _ = _run(synth_trace, tmp_path, WHOLE, flops_per_step=2 * planted)     # batch 2 declared, 1 ran
    (warned,) = [w for w in res["warnings"] if w["code"] == "counted_flops_differ"]
    assert "0.500x the declared hardware FLOPs" in warned["message"] and "batch or sequence wrong" in warned["message"]


def test_both_pages_show_the_section_and_the_roofline_the_operators(synth_trace, tmp_path) -> None:
    res, _ = _run(synth_trace, tmp_path, MIXED)
    pages = render_all(res)
    for page in ("report.md", "report.html"):
        assert "FLOPs counted from the trace" in pages[page] and "aten::_scaled_dot_product_flash_attention" in pages[page]
        assert "no shapes recorded" in pages[page]
    traced = [r for r in res["roofline"] if r["source"] == "trace"]
    assert traced and all(r["arithmetic_intensity"] and r["achieved_tflops"] for r in traced)
    assert "roofline.svg" in pages


def test_a_part_mapped_to_the_models_component_gets_its_forward_flops_over_its_time(open_export, tmp_path) -> None:
    """No operator shapes: the job maps attention and mlp onto the sublayer ranges (analysis.components)."""
    main, key = gtid(100, 100), gpid(100)
    e = Export()
    e.range(0, 10000, main, "step")
    e.range(1000, 4000, main, "attention sublayer")
    e.range(5000, 8000, main, "feed-forward sublayer")
    for corr, (launch, start, end) in enumerate(((1500, 2000, 2600), (3000, 3000, 3100), (6000, 6000, 6900)), 1):
        e.launch(launch, main, corr)
        e.kernel(start, end, key, corr)
    model = {"hidden": 64, "layers": 1, "heads": 2, "ffn": 256, "mlp": "gelu", "attention": "full", "lm_head": False}
    job = write_job(tmp_path, e.write(tmp_path / "t.sqlite"), region={"name": "step"},
                    hardware={"num_gpus": 1, "peak_tflops": 1.0}, model=model,
                    workload={"seq_len": 8, "global_batch": 1, "mode": "inference"},
                    analysis={"components": {"attention": "attention sublayer", "mlp": "feed-forward sublayer"}})
    parts = {p["range"]: p for p in run_job(load_job(job))["counted_flops"]["components"]}
    # T = 8 tokens, h = 64: Q 2·T·h·h, K and V 2·T·h·2h, QKᵀ and ×V 2·s²·h each, output 2·T·h·h; MLP 4·T·h·ffn
    attention = 2 * 8 * 64 * 64 + 2 * 8 * 64 * 128 + 2 * (2 * 8 * 8 * 64) + 2 * 8 * 64 * 64
    assert parts["attention sublayer"]["flops"] == attention == 278528
    assert parts["attention sublayer"]["time_s"] == 700e-9
    assert parts["attention sublayer"]["mfu_pct"] == pytest.approx(100 * attention / (700e-9 * 1e12))
    assert parts["feed-forward sublayer"]["flops"] == 4 * 8 * 64 * 256
    assert parts["feed-forward sublayer"]["mfu_pct"] == pytest.approx(100 * 4 * 8 * 64 * 256 / (900e-9 * 1e12))
