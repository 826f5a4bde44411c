"""Roofline numbers of docs/figures.md §9/§11 by hand, the operator table, and the heuristic rule."""

from __future__ import annotations

import pytest

from pipeline.analysis import metrics
from pipeline.model.operators import Operator, Work, elementwise_bytes, gemm_bytes, operators
from pipeline.model.roofline import heuristic_bound, row
from pipeline.model.transformer import Arch

H200_BF16, H200_HBM = 989.4, 4800.0       # TFLOP/s dense, GB/s (NVIDIA H200 datasheet)


def test_h200_bf16_ridge_is_about_206():
    assert metrics.ridge_flop_per_byte(H200_BF16, H200_HBM) == pytest.approx(206.1, abs=0.1)
    assert metrics.ridge_flop_per_byte(H200_BF16, 3350.0) == pytest.approx(295.3, abs=0.1)   # H100's bandwidth


def test_bf16_elementwise_add_has_ai_one_sixth_and_a_low_roof():
    n = 1 << 20
    ai = n / elementwise_bytes(n, 3, 2)
    assert ai == pytest.approx(1 / 6)
    assert metrics.attainable_tflops(ai, H200_BF16, H200_HBM) == pytest.approx(0.8)


def test_square_bf16_gemm_has_ai_n_over_3():
    n = 4096
    ai = 2 * n ** 3 / gemm_bytes(n, n, n, 2)
    assert ai == pytest.approx(4096 / 3) and round(ai) == 1365
    assert metrics.attainable_tflops(ai, H200_BF16, H200_HBM) == H200_BF16        # past the ridge


def test_row_with_bytes_is_a_roofline_result():
    op = Operator("add", "elementwise", 10**12, 6 * 10**12)
    r = row(op, "analytic", measured_s=2.0, peak_tflops=H200_BF16, hbm_gbps=H200_HBM, num_gpus=1)
    assert r["bound"] == "memory" and "heuristic" not in r["bound"] and r["source"] == "analytic"
    assert r["achieved_tflops"] == pytest.approx(0.5)
    assert r["pct_of_roof"] == pytest.approx(100 * 0.5 / 0.8)


def test_row_without_bytes_is_labelled_heuristic():
    op = Operator("region", None, 10**15, 0)
    r = row(op, "job", measured_s=1.0, peak_tflops=H200_BF16, hbm_gbps=H200_HBM, num_gpus=8)
    assert r["source"] == "heuristic" and r["bound"].endswith("(heuristic)")
    assert r["arithmetic_intensity"] is None and r["attainable_tflops"] is None and r["bytes"] is None


@pytest.mark.parametrize("cls, achieved, want", [
    ("gemm", 600.0, "likely compute-bound (heuristic)"),
    ("elementwise", 0.5, "likely memory-bound (heuristic)"),
    (None, 50.0, "likely memory-bound (heuristic)"),          # under 10 % of the peak
    ("attention", 300.0, "undetermined (heuristic)"),
    (None, None, "undetermined (heuristic)"),
    ("gemm", 990.0, "impossible: above the peak (heuristic)"),             # above 989.4: never "compute-bound"
    ("elementwise", 2404.0, "impossible: above the peak (heuristic)"),
])
def test_heuristic_rules(cls, achieved, want):
    assert heuristic_bound(cls, None if achieved is None else 100 * achieved / H200_BF16) == want


def test_a_mostly_idle_wall_is_not_called_memory_bound():
    """A row timed over the wall where kernels ran 3 % of it: slow for want of work, which says nothing about
    memory. Busy for most of it (or timed over kernels only: no share), the throughput rules apply."""
    def pct(tflops):
        return 100 * tflops / H200_BF16
    assert heuristic_bound(None, pct(10.8), busy_share=0.0303) == \
        "mostly idle: kernels ran in 3 % of the wall (heuristic)"
    assert heuristic_bound(None, pct(10.8), busy_share=0.9) == "likely memory-bound (heuristic)"
    assert heuristic_bound("gemm", pct(600.0), busy_share=0.2) == "likely compute-bound (heuristic)"
    assert heuristic_bound(None, pct(2000.0), busy_share=0.2).startswith("impossible")


def test_operators_of_the_semantics_dense_case():
    """h 4096, 32 layers, s 8192, ffn 16384, MHA, 2-matrix MLP, full attention, batch 1, forward only."""
    arch = Arch.from_model({"hidden": 4096, "layers": 32, "heads": 32, "ffn": 16384, "mlp": "gelu",
                            "attention": "full", "lm_head": False})
    per_layer = {"q_proj": 2 * 8192 * 4096 * 4096, "kv_proj": 2 * 8192 * 4096 * 8192,
                 "attn_scores": 2 * 8192 ** 2 * 4096, "attn_context": 2 * 8192 ** 2 * 4096,
                 "out_proj": 2 * 8192 * 4096 * 4096, "mlp": 4 * 8192 * 4096 * 16384}
    comps = {k: 32 * v for k, v in per_layer.items()}
    ops = {o.operator: o for o in operators(arch, comps, Work(8192, 8192, 8192, 1, 2, "flash"))}
    assert ops["attention core"].flops == 32 * 1_099_511_627_776             # 1.0995e12 per layer
    assert ops["QKV projection"].flops == 32 * 824_633_720_832               # 8.2463e11
    assert ops["MLP up"].flops + ops["MLP down"].flops == 32 * 2_199_023_255_552
    # QKV: A 8192x4096, W 4096x12288, C 8192x12288, 2 bytes each, 32 layers
    assert ops["QKV projection"].bytes == 32 * 2 * (8192 * 4096 + 4096 * 12288 + 8192 * 12288)
    # flash attention: Q and O (8192 x 4096) plus K and V (8192 x 4096, MHA), 2 bytes each; scores stay on chip
    assert ops["attention core"].bytes == 32 * (2 * 8192 * 4096 + 2 * 8192 * 4096) * 2
    assert ops["attention core"].kernel_class == "attention"
    assert "LM head" not in ops


def test_naive_attention_moves_the_score_matrix():
    arch = Arch.from_model({"hidden": 1024, "layers": 1, "heads": 8, "ffn": 4096, "mlp": "gelu"})
    comps = {"attn_scores": 10**9, "attn_context": 10**9}
    flash = next(o for o in operators(arch, comps, Work(2048, 2048, 2048, 1, 2, "flash")) if o.operator == "attention core")
    naive = next(o for o in operators(arch, comps, Work(2048, 2048, 2048, 1, 2, "naive")) if o.operator == "attention core")
    assert naive.bytes - flash.bytes == 4 * 8 * 2048 * 2048 * 2


def test_mla_bytes_use_the_latent_and_per_head_widths():
    """DeepSeek-V3 (config.json: h 7168, 61 layers, 128 heads, q_lora 1536, kv_lora 512, qk 128+64, v 128),
    one 4096-token sequence, BF16, forward. MLA has no hidden/heads head width: 7168/128 = 56 is not a
    width of any of its tensors, so bytes come from the MLA shapes (DeepSeek-V2 §2.1)."""
    from pipeline.model.presets import resolve_model
    arch = Arch.from_model(resolve_model({"preset": "deepseek-v3"}))
    comps = {"q_proj": 1, "kv_proj": 1, "attn_scores": 1, "attn_context": 1, "out_proj": 1}
    ops = {o.operator: o for o in operators(arch, comps, Work(4096, 4096, 4096, 1, 2, "flash"))}
    t = 4096
    down = t * 7168 + 7168 * (1536 + 512 + 64) + t * (1536 + 512 + 64)     # h -> q latent, kv latent, rope key
    q_up = t * 1536 + 1536 * 128 * 192 + t * 128 * 192                       # q latent -> 128 heads x (128+64)
    kv_up = t * 512 + 512 * 128 * 256 + t * 128 * 256                        # kv latent -> 128 x (k_nope 128 + v 128)
    assert ops["QKV projection"].bytes == 61 * 2 * (down + q_up + kv_up)
    assert ops["output projection"].bytes == 61 * 2 * (t * 128 * 128 + 128 * 128 * 7168 + t * 7168)
    # flash: read Q (128 x 192), K (128 x 192), V (128 x 128), write O (128 x 128) per token
    assert ops["attention core"].bytes == 61 * 2 * t * (2 * 128 * 192 + 2 * 128 * 128)
