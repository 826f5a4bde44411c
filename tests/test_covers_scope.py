"""docs/figures.md §7 scope and §11's mis-scoped example, end to end on one hand-made trace.

"If the region wraps 5 steps, [the numerator covers] 5 steps": `region.covers: 5` scales the per-step
FLOPs to the occurrence. §11: one forward (131.94 TFLOP) over a 5-step region's 2.628 s at 989 TFLOP/s
reads 5.1 %, which "the tool must refuse or flag ..., not print it as MFU". Every expected figure is
worked out here from the Llama-3-8B shape (docs/figures.md §7's table), not taken from the code.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nsys_export import Export, gpid, gtid
from pipeline.job.config import load_job
from pipeline.run import exit_code, run_job
from test_run_synth import write_job

PEAK = 989.0                       # TFLOP/s, the §11 example's peak; one GPU
WALL_NS = 2_628_000_000            # the §11 example's 5-step region
STEP_NS = WALL_NS // 5             # 525.6 ms per step
SEQ = 8192


def llama3_8b_training_step() -> int:
    """Model FLOPs of one training step of Llama-3-8B, one sequence of 8192 tokens, causal, LM head (§7, §11)."""
    t, h, layers, q_dim, kv_dim, ffn, vocab = SEQ, 4096, 32, 32 * 128, 8 * 128, 14336, 128256
    per_layer = (2 * t * h * q_dim                  # Q projection
                 + 2 * t * h * 2 * kv_dim           # K and V projections (GQA)
                 + 2 * (2 * SEQ * SEQ * q_dim) // 2  # QK^T and attention x V, causal halves both
                 + 2 * t * q_dim * h                # output projection
                 + 6 * t * h * ffn)                 # SwiGLU MLP, 3 matrices
    forward = layers * per_layer + 2 * t * h * vocab
    return 3 * forward                              # training: forward, input gradient, weight gradient


STEP_FLOPS = llama3_8b_training_step()


def test_hand_count_is_semantics_worked_number() -> None:
    """The hand count above is §11's acceptance figure: 51.47 GFLOP per token."""
    assert STEP_FLOPS / SEQ == pytest.approx(51.47e9, abs=0.005e9)


def _five_steps(tmp_path: Path) -> Path:
    """One process: `five_steps` 0..2.628 s wraps five `step` ranges of 525.6 ms, each launching one 500 ms kernel
    (10 ms after its start). Kernel union 2.5 s, every kernel inside its ranges."""
    e = Export()
    main = gtid(100, 100)
    e.range(0, WALL_NS, main, "five_steps")
    for k in range(5):
        start = k * STEP_NS
        e.range(start, start + STEP_NS, main, "step")
        e.launch(start + 1_000_000, main, k + 1)
        e.kernel(start + 10_000_000, start + 510_000_000, gpid(100), k + 1)
    return e.write(tmp_path / "five.sqlite")


def _run(tmp_path: Path, region: dict[str, Any], model: dict[str, Any]) -> dict[str, Any]:
    job = write_job(tmp_path, _five_steps(tmp_path), region=region,
                    hardware={"num_gpus": 1, "peak_tflops": PEAK}, model=model,
                    workload={"mode": "training", "seq_len": SEQ, "global_batch": 1})
    return run_job(load_job(job))


def test_covers_5_scales_one_steps_flops_to_the_region(tmp_path: Path) -> None:
    """A region wrapping 5 steps with FLOPs for one step and `covers: 5`: five steps of FLOPs over its wall.
    5 x 421,645,529,382,912 FLOP / (2.628 s x 1 GPU x 989e12) = 81.11 %."""
    res = _run(tmp_path, {"name": "five_steps", "covers": 5}, {"preset": "llama-3-8b"})
    assert res["status"] == "ok" and exit_code(res) == 0
    assert res["flops"]["model_flops_per_occurrence"] == 5 * STEP_FLOPS == 2_108_227_646_914_560
    mfu = 100 * 5 * STEP_FLOPS / (2.628 * 1 * PEAK * 1e12)
    assert mfu == pytest.approx(81.11, abs=0.005)
    assert res["metrics"]["mfu_pct_wall"] == pytest.approx(mfu, rel=1e-9)
    assert res["metrics"]["tokens_per_s"] == pytest.approx(5 * SEQ / 2.628, rel=1e-9)   # five steps' tokens
    # the same work measured as five one-step occurrences gives the same figure
    (tmp_path / "per_step").mkdir()
    per_step = _run(tmp_path / "per_step", {"name": "step"}, {"preset": "llama-3-8b"})
    assert per_step["metrics"]["mfu_pct_wall"] == pytest.approx(mfu, rel=1e-9)


def test_one_forward_over_a_five_step_region_is_refused(tmp_path: Path) -> None:
    """§11 verbatim: flops_per_step 131.94 TFLOP (one forward) over the 5-step region, covers left at `step`,
    the architecture declared beside it. The division gives 131.94e12 / (2.628 s x 989e12) = 5.08 %; the
    numerator is 0.313x the architecture's training step, so the result is invalid (exit 1), not an MFU."""
    res = _run(tmp_path, {"name": "five_steps"}, {"preset": "llama-3-8b", "flops_per_step": 131.94e12})
    mis_scoped = 100 * 131.94e12 / (2.628 * 1 * PEAK * 1e12)
    assert mis_scoped == pytest.approx(5.08, abs=0.005)
    assert res["metrics"]["mfu_pct_wall"] == pytest.approx(mis_scoped, rel=1e-9)     # shown for diagnosis only
    assert res["status"] == "invalid" and exit_code(res) == 1
    assert "does not describe the measured work" in res["status_reason"]
    assert f"{131.94e12 / STEP_FLOPS:.3f}x" == "0.313x" and "0.313x" in res["status_reason"]
    assert "one forward pass" in res["status_reason"]


def test_five_steps_of_flops_over_one_step_is_refused(tmp_path: Path) -> None:
    """The reverse: `covers: 5` on a region that wraps one step (occurrence 1 of `step`, 525.6 ms of wall).
    5 x 421.6 TFLOP / (0.5256 s x 989e12) = 405.57 %: impossible, so invalid (exit 1), naming covers."""
    res = _run(tmp_path, {"name": "step", "covers": 5, "occurrences": {"first": 1, "last": 1}},
               {"preset": "llama-3-8b"})
    over = 100 * 5 * STEP_FLOPS / (0.5256 * 1 * PEAK * 1e12)
    assert over == pytest.approx(405.57, abs=0.005)
    assert res["metrics"]["mfu_pct_wall"] == pytest.approx(over, rel=1e-9)
    assert res["status"] == "invalid" and exit_code(res) == 1
    assert "MFU above 100 % is physically impossible" in res["status_reason"]
    assert "check covers" in res["status_reason"]


def test_a_hand_declared_architecture_checks_the_numerator_too(tmp_path: Path) -> None:
    """The §11 forward-only numerator beside Llama-3-8B's shape written out (no preset): the same 0.313x,
    so the same refusal."""
    shape = {"hidden": 4096, "layers": 32, "heads": 32, "kv_heads": 8, "ffn": 14336, "mlp": "swiglu",
             "vocab": 128256}
    res = _run(tmp_path, {"name": "five_steps"}, {**shape, "flops_per_step": 131.94e12})
    assert res["status"] == "invalid" and "0.313x" in res["status_reason"]


def test_an_explicit_numerator_without_token_counts_is_said_to_be_unchecked(tmp_path: Path) -> None:
    """flops_per_step beside a preset but no seq_len / global_batch: nothing to count the preset's FLOPs
    with, and the result says the numerator was not cross-checked."""
    job = write_job(tmp_path, _five_steps(tmp_path), region={"name": "step"},
                    hardware={"num_gpus": 1, "peak_tflops": PEAK},
                    model={"preset": "llama-3-8b", "flops_per_step": STEP_FLOPS})
    data = json.loads(job.read_text())
    data["workload"] = {"mode": "training"}
    job.write_text(json.dumps(data))
    res = run_job(load_job(job))
    assert "numerator_unchecked" in {w["code"] for w in res["warnings"]}


def test_packed_documents_fill_every_sequence_of_the_batch(tmp_path: Path) -> None:
    """workload.seq_lens describes one sequence slot: global_batch 2 holds 2 x 2 documents of 4096 tokens.
    By hand (Llama-3-8B, causal, Megatron-halved: L^2 doubled pairs per document, QK^T width 32 x 128 = 4096,
    32 layers): QK^T is 32 x 4 x 4096^2 x 4096 FLOPs over the step, half the unpacked 32 x 2 x 8192^2 x 4096."""
    trace = _five_steps(tmp_path)

    def step_flops(workload: dict[str, Any]) -> dict[str, int]:
        (tmp_path / str(len(workload))).mkdir()
        job = write_job(tmp_path / str(len(workload)), trace, region={"name": "step"},
                        hardware={"num_gpus": 1, "peak_tflops": PEAK}, model={"preset": "llama-3-8b"},
                        workload={"mode": "training", "seq_len": SEQ, "global_batch": 2, **workload})
        res = run_job(load_job(job))
        return {c["component"]: c["forward_flops"] for c in res["flops"]["breakdown"]}
    whole, packed = step_flops({}), step_flops({"seq_lens": [4096, 4096]})
    assert whole["attn_scores"] == 32 * 2 * SEQ * SEQ * 4096
    assert packed["attn_scores"] == 32 * 4 * 4096 * 4096 * 4096
    assert packed["mlp"] == whole["mlp"]                         # the same 16384 tokens through the MLP
