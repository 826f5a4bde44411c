"""Model FLOPs: every expected value is written out with its source, never taken from our output."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import jsonschema
import pytest

from pipeline.errors import ConfigError
from pipeline.model.flops import attention_pairs_x2, compute_flops, decode_keys, per_occurrence, six_n_flops
from pipeline.model.presets import model_from_flags, presets, resolve_model
from pipeline.model.transformer import Arch

ROOT = Path(__file__).resolve().parent.parent

# docs/figures.md §11: dense, MHA, 2-matrix MLP, full attention, no LM head.
SEM11 = {"hidden": 4096, "layers": 32, "heads": 32, "ffn": 16384, "mlp": "gelu",
         "attention": "full", "lm_head": False}


def rows(result) -> dict:
    return {c.component: c for c in result.breakdown}


# --- docs/figures.md §11 -------------------------------------------------------------------

def test_semantics_total_is_exact():
    r = compute_flops(SEM11, mode="training", seq_len=8192, sequences=1)
    assert r.model_flops_per_step == 422_212_465_065_984  # docs/figures.md §11
    assert r.hardware_flops_per_step == r.model_flops_per_step
    assert r.tokens_per_step == 8192


def test_semantics_per_layer_components():
    by = rows(compute_flops(SEM11, mode="training", seq_len=8192, sequences=1))
    per_layer = lambda *names: sum(by[n].forward_flops for n in names) / 32  # noqa: E731
    assert per_layer("attn_scores", "attn_context") == pytest.approx(1.0995e12, rel=1e-4)
    assert per_layer("q_proj", "kv_proj") == pytest.approx(8.2463e11, rel=1e-4)
    assert per_layer("out_proj") == pytest.approx(2.7488e11, rel=1e-4)
    assert per_layer("mlp") == pytest.approx(2.1990e12, rel=1e-4)
    assert all(c.multiplier == 3 for c in by.values())


def test_semantics_causal():
    r = compute_flops({**SEM11, "attention": "causal"}, mode="training", seq_len=8192, sequences=1)
    assert r.model_flops_per_step == pytest.approx(3.694e14, rel=2e-4)  # docs/figures.md §11


def test_six_n_quick_check():
    assert six_n_flops(8_000_000_000, 8192, mode="training") == pytest.approx(3.932e14, rel=1e-4)  # docs/figures.md §11
    assert six_n_flops(8_000_000_000, 8192, mode="inference") * 3 == six_n_flops(8_000_000_000, 8192, mode="training")
    assert six_n_flops(8_000_000_000, 8192, mode="decode") == 2 * 8_000_000_000 * 8192       # forward only


# --- Llama-3-8B (docs/figures.md §11) -------------------------------------------------------

def test_llama3_8b_per_token_both_conventions():
    model = {"preset": "llama-3-8b"}
    megatron = compute_flops(model, mode="training", seq_len=8192, sequences=1)
    palm = compute_flops(model, mode="training", seq_len=8192, sequences=1, convention="palm")
    assert megatron.flops_per_token / 1e9 == pytest.approx(51.47, abs=0.005)
    assert palm.flops_per_token / 1e9 == pytest.approx(57.91, abs=0.005)
    assert megatron.convention == "megatron" and palm.convention == "palm"
    assert megatron.params_total == 8_030_261_248 == megatron.params_active


def test_palm_convention_is_6n_plus_attention_for_llama():
    """torchtitan: 6·(params − input embedding) + 12·L·H·Q·T; norms (266,240 weights) are no matmul."""
    n_matmul = 8_030_261_248 - 128256 * 4096 - (2 * 32 + 1) * 4096
    expected = 6 * n_matmul + 12 * 32 * 32 * 128 * 8192
    r = compute_flops({"preset": "llama-3-8b"}, mode="training", seq_len=8192, sequences=1,
                      convention="palm")
    assert r.flops_per_token == expected


def test_palm_540b_attention_share():
    """PaLM App. B: (6N + 12·L·H·Q·T) / 6N with N = 540.35B, L 118, H 48, Q 256, T 2048 → 1.011."""
    r = compute_flops({"preset": "palm-540b"}, mode="training", seq_len=2048, sequences=1,
                      convention="palm")
    assert r.flops_per_token / (6 * 540.35e9) == pytest.approx(1.011, abs=0.0005)
    # the paper's own MFU with / without attention FLOPs, 46.2 / 45.7, is the same 1.011


# --- Narayanan et al. 2021 (arXiv:2104.04473, eq. 3) and MT-NLG -----------------------

MTNLG = {"hidden": 20480, "layers": 105, "heads": 128, "ffn": 4 * 20480, "mlp": "gelu", "vocab": 51200}


def narayanan(B: int, s: int, l: int, h: int, V: int) -> int:
    """96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)), multiplied out so it stays an integer."""
    return 96 * B * s * l * h * h + 16 * B * s * s * l * h + 6 * B * s * h * V


def test_narayanan_formula_equals_full_recompute_hardware_count():
    r = compute_flops(MTNLG, mode="training", seq_len=2048, sequences=1920, recompute="full",
                      convention="palm")
    assert r.hardware_flops_per_step == narayanan(1920, 2048, 105, 20480, 51200)
    assert r.model_flops_per_step < r.hardware_flops_per_step


@pytest.mark.parametrize("seconds, gpus, tflops", [(60.1, 2240, 126), (50.2, 2800, 121), (44.4, 3360, 113)])
def test_mt_nlg_reported_throughput(seconds, gpus, tflops):
    """MT-NLG 530B (arXiv:2201.11990, Table 2): per-GPU TFLOP/s from the iteration time."""
    r = compute_flops(MTNLG, mode="training", seq_len=2048, sequences=1920, recompute="full",
                      convention="palm")
    assert r.hardware_flops_per_step / seconds / gpus / 1e12 == pytest.approx(tflops, rel=0.01)


# --- MoE -------------------------------------------------------------------------------

def test_mixtral_8x7b_params_and_flops():
    r = compute_flops({"preset": "mixtral-8x7b"}, mode="training", seq_len=4096, sequences=1)
    assert r.params_total / 1e9 == pytest.approx(46.7, abs=0.05)   # mistral.ai: 46.7B total
    assert r.params_active / 1e9 == pytest.approx(12.9, abs=0.05)  # 12.9B used per token
    # By hand per token: per layer q 2·4096², kv 2·4096·2048, o 2·4096², causal core 2·4096·4096,
    # experts 2·top2·3·4096·14336, router 2·4096·8; 32 layers + LM head 2·4096·32000; ×3.
    layer = 2 * 4096**2 + 2 * 4096 * 2048 + 2 * 4096**2 + 2 * 4096 * 4096 \
        + 2 * 2 * 3 * 4096 * 14336 + 2 * 4096 * 8
    assert r.flops_per_token == 3 * (32 * layer + 2 * 4096 * 32000)
    assert r.flops_per_token / 1e9 == pytest.approx(79.7, abs=0.05)
    assert not any("6·N" in w for w in r.warnings)  # the 6N warning is for dense models only
    # 6N counts the active parameters (12.9B), never all experts (46.7B)
    assert r.six_n_flops_per_step / (6 * 4096) / 1e9 == pytest.approx(12.9, abs=0.05)
    six_n = compute_flops({"preset": "mixtral-8x7b"}, mode="training", seq_len=4096, sequences=1, convention="6n")
    assert six_n.model_flops_per_step / (6 * 4096) / 1e9 == pytest.approx(12.9, abs=0.05)
    # at 65,536 tokens the causal core alone is 2 x 65536 x 4096 FLOPs per token and layer forward, about
    # 2/3 of 2N: far beyond the 20 % tolerance, and still no 6N warning for an MoE model
    long = compute_flops({"preset": "mixtral-8x7b"}, mode="training", seq_len=65536, sequences=1)
    assert 32 * 2 * 65536 * 4096 / (2 * 12.9e9) > 0.6
    assert not any("N·tokens check" in w for w in long.warnings)


def test_moe_layer_pattern():
    deepseek = Arch.from_model(resolve_model({"preset": "deepseek-v3"}))
    assert [deepseek.is_moe_layer(i) for i in range(5)] == [False, False, False, True, True]
    every2 = Arch.from_model(resolve_model({"preset": "mixtral-8x7b", "ffn": 14336, "moe": {"every": 2}}))
    assert [every2.is_moe_layer(i) for i in range(4)] == [False, True, False, True]


@pytest.mark.parametrize("mlp, matrices", [("swiglu", 3), ("gelu", 2)])
def test_moe_counts_only_active_and_shared_experts(mlp, matrices):
    """docs/figures.md §7: routed experts 2·T·(2 or 3)·h·expert_ffn·top_k, shared 2·T·(2 or 3)·h·shared_ffn: 3 matrices
    for a gated MLP, 2 for a GELU/ReLU one. Router 2·T·h·experts either way."""
    model = {"hidden": 64, "layers": 1, "heads": 4, "mlp": mlp, "lm_head": False,
             "moe": {"experts": 16, "top_k": 2, "expert_ffn": 32, "shared_experts": 1, "shared_ffn": 48}}
    by = rows(compute_flops(model, mode="inference", seq_len=10, sequences=1))
    assert by["experts"].forward_flops == 2 * 10 * matrices * 64 * 32 * 2
    assert by["shared_experts"].forward_flops == 2 * 10 * matrices * 64 * 48
    assert by["router"].forward_flops == 2 * 10 * 64 * 16


# --- MLA, sliding window, packing, decode ---------------------------------------------

def test_mla_projections_deepseek_v3():
    """DeepSeek-V2 §2.1: q = W_UQ·W_DQ·h, [k; v] = W_UKV·W_DKV·h, decoupled RoPE key from h."""
    by = rows(compute_flops({"preset": "deepseek-v3"}, mode="inference", seq_len=1, sequences=1))
    assert by["q_proj"].forward_flops == 61 * 2 * (7168 * 1536 + 1536 * 128 * (128 + 64))
    assert by["kv_proj"].forward_flops == 61 * 2 * (7168 * (512 + 64) + 512 * 128 * (128 + 128))
    assert by["out_proj"].forward_flops == 61 * 2 * 128 * 128 * 7168
    assert "mtp.q_proj" not in by  # MTP modules are a training objective


def test_mtp_counted_in_training():
    by = rows(compute_flops({"preset": "deepseek-v3"}, mode="training", seq_len=16, sequences=1))
    assert by["mtp.eh_proj"].forward_flops == 2 * 16 * 2 * 7168 * 7168
    assert by["mtp.lm_head"].forward_flops == by["lm_head"].forward_flops == 2 * 16 * 7168 * 129280


def test_sliding_window_layers_alternate_from_local():
    """Gemma 2 (HF Gemma2DecoderLayer: is_sliding = not layer_idx % 2): layer 0 local, layer 1 global, ..."""
    gemma = Arch.from_model(resolve_model({"preset": "gemma-2-9b"}))
    assert [gemma.window_of(i) for i in range(4)] == [4096, None, 4096, None]
    # three layers, every second global: one global layer (layer 1), two banded ones
    model = {"hidden": 64, "layers": 3, "heads": 4, "ffn": 128, "mlp": "gelu", "lm_head": False,
             "sliding_window": {"window": 4, "global_every": 2}}
    by = rows(compute_flops(model, mode="inference", seq_len=8, sequences=1))
    assert by["attn_scores"].forward_flops == (2 * (8**2 - 4**2) + 8**2) * 64


def test_mla_attention_core_widths():
    """DeepSeek-V3 MLA: QK^T over qk_nope + qk_rope = 192 per head, xV over v_head_dim = 128 per head;
    causal, Megatron-halved: s^2 = 256 doubled pairs at s = 16; 128 heads, 61 layers."""
    by = rows(compute_flops({"preset": "deepseek-v3"}, mode="inference", seq_len=16, sequences=1))
    assert by["attn_scores"].forward_flops == 61 * 256 * 128 * 192
    assert by["attn_context"].forward_flops == 61 * 256 * 128 * 128
    direct = rows(compute_flops({"preset": "deepseek-v3", "mla": {"q_lora_rank": 0}}, mode="inference",
                                seq_len=1, sequences=1))
    assert direct["q_proj"].forward_flops == 61 * 2 * 7168 * 128 * 192   # no down-projection: h -> heads x 192


def test_gpt2_small_parameters_exactly():
    """HF GPT-2 (124,439,808 parameters), by hand: wte 50257 x 768, wpe 1024 x 768; per layer ln_1 and ln_2
    (2 x 768 each), c_attn 768 x 2304 + 2304, attn c_proj 768 x 768 + 768, c_fc 768 x 3072 + 3072, mlp c_proj
    3072 x 768 + 768; ln_f 2 x 768; the LM head is tied to wte."""
    model = {"hidden": 768, "layers": 12, "heads": 12, "ffn": 3072, "mlp": "gelu", "vocab": 50257,
             "position_embeddings": 1024, "linear_bias": True, "norm": "layernorm", "tied_embeddings": True}
    layer = 2 * 1536 + 768 * 2304 + 2304 + 768 * 768 + 768 + 768 * 3072 + 3072 + 3072 * 768 + 768
    expected = 50257 * 768 + 1024 * 768 + 12 * layer + 1536
    assert expected == 124_439_808
    assert compute_flops(model, mode="inference", seq_len=8, sequences=1).params_total == expected


def test_untied_table_counts_only_with_an_lm_head():
    """An untied LM head is a second vocab x hidden matrix; without an LM head there is none to count."""
    base = {"hidden": 64, "layers": 1, "heads": 4, "ffn": 128, "mlp": "gelu", "vocab": 1000, "tied_embeddings": False}
    def params(**kw):
        return compute_flops({**base, **kw}, mode="inference", seq_len=8, sequences=1).params_total
    assert params(lm_head=True) - params(lm_head=False) == 1000 * 64
    assert params(lm_head=False) == params(lm_head=False, tied_embeddings=True)


def test_sliding_window_band():
    # causal band of width w over s tokens: s²/2 − (s−w)²/2 pairs (Megatron-style halving)
    assert attention_pairs_x2(8192, 4096, True) == 8192**2 - (8192 - 4096) ** 2
    assert attention_pairs_x2(2048, 4096, True) == 2048**2
    assert attention_pairs_x2(8192, 4096, False) == 2 * 8192 * 4096
    by = rows(compute_flops({"preset": "gemma-2-9b"}, mode="inference", seq_len=8192, sequences=1))
    local, glob = 8192**2 - 4096**2, 8192**2   # 21 local and 21 global layers; q width 16·256
    assert by["attn_scores"].forward_flops == 21 * (local + glob) * 16 * 256


def test_packed_sequences_use_sum_of_squares():
    one = rows(compute_flops(SEM11, mode="training", seq_len=8192, sequences=1))
    packed = compute_flops(SEM11, mode="training", seq_len=8192, sequences=1, seq_lens=[4096, 4096])
    two = rows(packed)
    assert two["attn_scores"].forward_flops * 2 == one["attn_scores"].forward_flops  # 2·4096² = 8192²/2
    assert two["mlp"].forward_flops == one["mlp"].forward_flops
    assert packed.warnings == [w for w in packed.warnings if "seq_lens" not in w]
    short = compute_flops(SEM11, mode="training", seq_len=8192, sequences=1, seq_lens=[4000])
    assert short.tokens_per_step == 4000 and any("padding" in w for w in short.warnings)


def test_packed_documents_of_unequal_lengths_by_hand():
    """docs/figures.md §7: packed sequences use Σ Lᵢ² instead of b·s². Two documents of 6000 and 2192 tokens, full
    attention (c = 1), per layer QKᵀ = 2·(6000² + 2192²)·q_dim; equal halves could not tell Σ Lᵢ² from (Σ Lᵢ)²/n."""
    by = rows(compute_flops(SEM11, mode="training", seq_len=8192, sequences=1, seq_lens=[6000, 2192]))
    assert by["attn_scores"].forward_flops == 32 * 2 * (6000**2 + 2192**2) * 4096
    assert by["attn_context"].forward_flops == 32 * 2 * (6000**2 + 2192**2) * 4096
    assert by["mlp"].forward_flops == 32 * 4 * 8192 * 4096 * 16384          # 4·T·h·ffn, T = 8192 tokens


def test_decode_one_token_llama():
    """New token at context 4095 sees 4096 keys; projections cost 2 FLOPs per matmul weight."""
    r = compute_flops({"preset": "llama-3-8b"}, mode="decode", seq_len=1, sequences=1, context_len=4095)
    matmul_weights = 8_030_261_248 - 128256 * 4096 - (2 * 32 + 1) * 4096  # LM head stays, lookup goes
    assert r.model_flops_per_step == 2 * matmul_weights + 32 * 2 * 2 * 4096 * 4096
    assert r.tokens_per_step == 1 and all(c.multiplier == 1 for c in r.breakdown)


def test_decode_keys_sum():
    assert decode_keys(10, 3, None) == 11 + 12 + 13
    assert decode_keys(10, 3, 12) == 11 + 12 + 12
    assert decode_keys(20, 2, 12) == 24
    # the window is reached mid-way: tokens see 1, 2, 3, 4, 5 keys, then 5 each for the other five
    assert decode_keys(0, 10, 5) == 1 + 2 + 3 + 4 + 5 + 5 * 5


def test_decode_several_new_tokens_per_sequence():
    """2 sequences x 3 new tokens after 100 cached ones: 6 tokens through the projections; token i sees
    101 + i keys, so QK^T and xV each cost 2 x (101 + 102 + 103) x 4096 FLOPs per sequence and layer."""
    r = compute_flops({"preset": "llama-3-8b"}, mode="decode", seq_len=1, sequences=2, context_len=100,
                      generated_tokens=3)
    matmul_weights = 8_030_261_248 - 128256 * 4096 - (2 * 32 + 1) * 4096
    assert r.tokens_per_step == 6
    assert r.model_flops_per_step == 2 * matmul_weights * 6 + 32 * 2 * (2 * 2 * (101 + 102 + 103) * 4096)


# --- modes, recompute, HFU ------------------------------------------------------------

def test_inference_is_one_forward():
    train = compute_flops({"preset": "llama-3-8b"}, mode="training", seq_len=2048, sequences=4)
    infer = compute_flops({"preset": "llama-3-8b"}, mode="inference", seq_len=2048, sequences=4)
    assert infer.model_flops_per_step * 3 == train.model_flops_per_step


def test_full_recompute_raises_hfu_not_mfu():
    none = compute_flops(SEM11, mode="training", seq_len=8192, sequences=1)
    full = compute_flops(SEM11, mode="training", seq_len=8192, sequences=1, recompute="full")
    assert full.model_flops_per_step == none.model_flops_per_step
    assert full.hardware_flops_per_step * 3 == none.model_flops_per_step * 4  # no LM head here


def test_full_recompute_keeps_lm_head_at_three():
    by = rows(compute_flops({"preset": "llama-3-8b"}, mode="training", seq_len=128, sequences=1,
                            recompute="full"))
    assert by["lm_head"].hardware_multiplier == 3 and by["mlp"].hardware_multiplier == 4


def test_selective_recompute_adds_attention_core_only():
    none = compute_flops(SEM11, mode="training", seq_len=8192, sequences=1)
    sel = compute_flops(SEM11, mode="training", seq_len=8192, sequences=1, recompute="selective")
    assert sel.hardware_flops_per_step - none.hardware_flops_per_step == 32 * 4 * 8192**2 * 4096
    assert sel.model_flops_per_step == none.model_flops_per_step


def test_flash_recompute_adds_one_qk_forward():
    none = compute_flops(SEM11, mode="training", seq_len=8192, sequences=1)
    fa = compute_flops(SEM11, mode="training", seq_len=8192, sequences=1, flash_recompute=True)
    assert fa.hardware_flops_per_step - none.hardware_flops_per_step == 32 * 2 * 8192**2 * 4096
    assert fa.model_flops_per_step == none.model_flops_per_step


@pytest.mark.parametrize("mode, kwargs, pointer, says", [
    ("inference", {"recompute": "full"}, "/workload/recompute", "inference has no backward pass"),
    ("decode", {"flash_recompute": True}, "/workload/recompute", "decode has no backward pass"),
    ("training", {"recompute": "sometimes"}, "/workload/recompute", "unknown recompute 'sometimes'"),
    ("prefill", {}, "/workload/mode", "unknown mode 'prefill'")])
def test_invalid_workloads_rejected(mode, kwargs, pointer, says):
    with pytest.raises(ConfigError) as err:
        compute_flops(SEM11, mode=mode, seq_len=8192, sequences=1, **kwargs)
    assert [(p.pointer, says in p.message) for p in err.value.problems] == [(pointer, True)]


# --- conventions and cross-checks -----------------------------------------------------

def test_six_n_convention_and_cross_check():
    r = compute_flops({"preset": "llama-3-8b"}, mode="training", seq_len=2048, sequences=2, convention="6n")
    assert r.model_flops_per_step == 6 * 8_030_261_248 * 4096 == r.six_n_flops_per_step
    assert not r.warnings


def test_six_n_warning_for_dense_models():
    far = compute_flops(SEM11, mode="training", seq_len=8192, sequences=1)  # 6N misses attention: +33 %
    assert any("6·N·tokens" in w for w in far.warnings)
    near = compute_flops({"preset": "llama-3-8b"}, mode="training", seq_len=2048, sequences=1)
    assert not any("6·N·tokens" in w for w in near.warnings)


def test_six_n_warning_above_names_the_attention_core():
    """SEM11 at s = 8192 = 2h: per layer forward 24·s·h² (weights) + 4·s²·h (QKᵀ and ×V, full) = 4 x 4·s²·h, so
    the core is 1/4 of the model FLOPs; N = 32 x (12h² + 2h norm weights) + h final norm, and
    (3 x 32 x 16·s²·h) / (6 x N x s) = 1.3333 (norms shave 3e-5): +33 %."""
    r = compute_flops(SEM11, mode="training", seq_len=8192, sequences=1)
    assert r.params_active == 32 * (12 * 4096**2 + 2 * 4096) + 4096
    (w,) = [w for w in r.warnings if "6·N·tokens" in w]
    assert w == ("model FLOPs exceed the 6·N·tokens check by +33% (tolerance ±20%): 6·N·tokens leaves out the "
                 "attention core (QKᵀ and ×V), 25% of the model FLOPs here, which grows with the sequence length: "
                 "long sequences come out above it; otherwise check seq_len and the declared shape")


SMALL = {"hidden": 768, "layers": 12, "heads": 12, "ffn": 3072, "mlp": "gelu", "vocab": 50304}  # causal, untied


@pytest.mark.parametrize("over, warning", [
    # N = 12 x 12 x 768² (weights) + 12 x 2 x 768 + 768 (norms) + 2 x 50304 x 768 (table, untied head)
    #   = 84,934,656 + 19,200 + 77,266,944 = 162,220,800; the token table, 38,633,472, is 23.8 % of it.
    # per token: 3 x (2 x (84,934,656 + 38,633,472 head) + 12 x 2 x 512 x 768 halved core) = 769,720,320
    #   against 6N = 973,324,800: -20.9 %
    ({}, "model FLOPs fall short of the 6·N·tokens check by -21% (tolerance ±20%): N counts 38,633,472 "
         "parameters (24% of N) that are looked up, not multiplied (the token embedding table; a lookup is 0 FLOPs, "
         "docs/figures.md §7): a small model with a large vocabulary comes out below it; otherwise check the declared "
         "shape (vocab, tied_embeddings, lm_head)"),
    # no LM head: N = 84,934,656 + 19,200 + 38,633,472 = 123,587,328 (table 31.3 %);
    #   per token 3 x (2 x 84,934,656 + 9,437,184) = 537,919,488 against 6N = 741,523,968: -27.5 %
    ({"lm_head": False}, "model FLOPs fall short of the 6·N·tokens check by -27% (tolerance ±20%): N counts "
         "38,633,472 parameters (31% of N) that are looked up, not multiplied (the token embedding table (lm_head: "
         "false, so no LM head multiplies it); a lookup is 0 FLOPs, docs/figures.md §7): a small model with a large "
         "vocabulary comes out below it; otherwise check the declared shape (vocab, tied_embeddings, lm_head)"),
    # tied: the table is the LM head's matrix, N = 123,587,328 holds it once and the head multiplies it:
    #   769,720,320 against 741,523,968 = +3.8 %, inside the tolerance
    ({"tied_embeddings": True}, None),
])
def test_six_n_warning_below_names_the_lookups(over, warning):
    """Below 6N: N counts the token table, which a dense model only looks up (docs/figures.md §7), not long sequences."""
    r = compute_flops({**SMALL, **over}, mode="training", seq_len=512, sequences=1)
    assert [w for w in r.warnings if "6·N·tokens" in w] == ([warning] if warning else [])


def test_forward_only_cross_check_is_2n_and_says_so():
    """Inference runs no backward pass: the check is 2·N·tokens (1/3 of training's), and its warning names
    the 2, so nobody multiplies by 6 to reproduce it. SEM11's attention is +33 % over 6N, and over 2N alike."""
    far = compute_flops(SEM11, mode="inference", seq_len=8192, sequences=1)
    assert far.quick_check_factor == 2
    assert far.six_n_flops_per_step == 2 * far.params_active * 8192
    assert any(w.startswith("model FLOPs exceed the 2·N·tokens check by +") for w in far.warnings)
    assert not any("6·N" in w for w in far.warnings)
    assert compute_flops(SEM11, mode="training", seq_len=8192, sequences=1).quick_check_factor == 6


@pytest.mark.parametrize("seq_len, warned", [(4506, False), (5461, True)])
def test_six_n_warning_tolerance_is_20_percent(seq_len, warned):
    """SEM11's shape with full attention: per token 6N covers the 12h^2 weights per layer, attention adds
    3 x 4 x s x h per layer, a share s / 6h over 6N (norm weights: 4e-5, negligible): 4506 / 24576 = 18.3 %
    is inside 20 %, 5461 / 24576 = 22.2 % is beyond it."""
    r = compute_flops(SEM11, mode="training", seq_len=seq_len, sequences=1)
    found = [w for w in r.warnings if "6·N·tokens" in w]
    assert bool(found) is warned
    if warned:
        assert "by +22% (tolerance ±20%)" in found[0]


def test_full_attention_is_never_halved():
    causal = compute_flops({**SEM11, "attention": "causal"}, mode="inference", seq_len=64, sequences=1)
    full = compute_flops(SEM11, mode="inference", seq_len=64, sequences=1)
    assert rows(full)["attn_scores"].forward_flops == 2 * rows(causal)["attn_scores"].forward_flops


def test_model_convention_key_and_argument_override():
    model = {"preset": "llama-3-8b", "convention": "palm"}
    assert compute_flops(model, mode="training", seq_len=64, sequences=1).convention == "palm"
    assert compute_flops(model, mode="training", seq_len=64, sequences=1,
                         convention="megatron").convention == "megatron"



def test_convention_note_states_what_was_applied_to_this_model():
    """docs/figures.md §7: the report states causal halving yes/no, LM head in or out, active experts only.

    The note describes this model: SEM11 has full attention and no LM head, so nothing is halved
    and no LM head is counted, whatever the convention would do for a causal decoder.
    """
    full = compute_flops(SEM11, mode="training", seq_len=8192, sequences=1).convention_note
    assert "not halved" in full and "LM head not counted (lm_head: false)" in full
    assert "counted at half" not in full and "LM head included" not in full
    causal = compute_flops({"preset": "llama-3-8b"}, mode="training", seq_len=8192, sequences=1)
    assert "counted at half (s²/2 query-key pairs)" in causal.convention_note
    assert "LM head included" in causal.convention_note and "3× forward" in causal.convention_note
    palm = compute_flops({"preset": "llama-3-8b"}, mode="inference", seq_len=8192, sequences=1,
                         convention="palm").convention_note
    assert "counted whole (s² query-key pairs), not halved" in palm and "1× forward" in palm
    moe = compute_flops({"preset": "deepseek-v3"}, mode="training", seq_len=16, sequences=1).convention_note
    assert "only the active experts (top-8 of 256 routed + 1 shared)" in moe
    assert "MoE" not in causal.convention_note
    gemma = compute_flops({"preset": "gemma-2-9b"}, mode="inference", seq_len=16, sequences=1).convention_note
    assert "sliding window 4096, one layer in 2 global" in gemma


@pytest.mark.parametrize("kwargs, said, attention_x", [
    ({}, "HFU: no recomputation declared, hardware FLOPs = model FLOPs", (3, 3)),
    ({"recompute": "full"}, "HFU: full recomputation re-runs every layer's forward (4× for the layers, the LM head "
                            "stays 3×)", (4, 4)),
    ({"recompute": "selective"}, "HFU: selective recomputation re-runs the attention core (QKᵀ and ×V at 4×)", (4, 4)),
    ({"flash_recompute": True}, "HFU: FlashAttention's backward recomputes QKᵀ once more (+1×)", (4, 3)),
    ({"recompute": "full", "flash_recompute": True}, "HFU: full recomputation re-runs every layer's forward (4× for "
     "the layers, the LM head stays 3×) and FlashAttention's backward recomputes QKᵀ once more (+1×)", (5, 4)),
])
def test_convention_note_says_what_hfu_counts(kwargs, said, attention_x):
    """docs/figures.md §7: HFU adds what is recomputed (full: each layer's forward again, 4×, the LM head 3×; selective:
    the attention core). The report printed HFU with no word on which recomputation it assumed; the note says it,
    and says what the multipliers in the breakdown are (QKᵀ, ×V and the LM head checked here)."""
    r = compute_flops({"preset": "llama-3-8b"}, mode="training", seq_len=128, sequences=1, **kwargs)
    assert r.convention_note.endswith("; " + said)
    by = rows(r)
    assert (by["attn_scores"].hardware_multiplier, by["attn_context"].hardware_multiplier) == attention_x
    assert by["lm_head"].hardware_multiplier == 3
    infer = compute_flops({"preset": "llama-3-8b"}, mode="inference", seq_len=128, sequences=1).convention_note
    assert "HFU" not in infer                                   # nothing is recomputed without a backward pass


# --- explicit numerator, presets, resolution ------------------------------------------

def test_explicit_numerator_passes_through():
    r = compute_flops({"flops_per_step": "3.9e15"}, mode="training", seq_len=4096, sequences=8,
                      recompute="full")
    assert r.model_flops_per_step == 3_900_000_000_000_000 == r.hardware_flops_per_step
    assert r.convention == "explicit" and len(r.breakdown) == 1
    assert r.params_total is None and r.params_active is None and r.six_n_flops_per_step is None
    assert any("HFU = MFU" in w for w in r.warnings)
    hw = compute_flops({"flops_per_step": 100, "hardware_flops_per_step": 130}, mode="training",
                       seq_len=10, sequences=1)
    assert hw.hardware_flops_per_step == 130 and hw.flops_per_token == 10.0
    packed = compute_flops({"flops_per_step": 1000}, mode="training", seq_len=100, sequences=2, seq_lens=[50, 30])
    assert packed.tokens_per_step == 80 and packed.flops_per_token == 12.5     # the documents' tokens, not 2 x 100


def test_per_occurrence_rounds_exactly():
    """Whole FLOPs, rounded (not truncated), from exact integers and fractions (no float on the way)."""
    assert per_occurrence(7, Fraction(1, 4)) == 2                       # 1.75
    assert per_occurrence(10**18 + 3, Fraction(1, 2)) == 5 * 10**17 + 2  # ...001.5 to even; a float would lose it
    assert per_occurrence(3_900_000_000_000_000, Fraction(5)) == 19_500_000_000_000_000


def test_unknown_preset_names_close_matches():
    with pytest.raises(ConfigError) as err:
        resolve_model({"preset": "llama3-8b"})
    problem = err.value.problems[0]
    assert problem.pointer == "/model/preset" and "llama-3-8b" in problem.hint


def test_preset_with_override():
    r = compute_flops({"preset": "llama-3-8b", "vocab": 32000}, mode="training", seq_len=64, sequences=1)
    assert r.params_total == 8_030_261_248 - 2 * (128256 - 32000) * 4096  # untied: embedding and head


def test_nested_override_merges_key_by_key():
    m = resolve_model({"preset": "mixtral-8x7b", "moe": {"top_k": 1}})
    assert m["moe"] == {"experts": 8, "top_k": 1, "expert_ffn": 14336}


def test_numeric_strings_and_bad_numbers():
    assert resolve_model({"preset": "llama-3-8b", "vocab": "1.28256e5"})["vocab"] == 128256
    with pytest.raises(ConfigError):
        resolve_model({"preset": "llama-3-8b", "layers": 1.5})
    with pytest.raises(ConfigError) as err:
        resolve_model({"hidden": 64, "layers": 2, "mlp": "gelu", "ffn": 256, "typo": 1})
    assert "typo" in str(err.value)
    with pytest.raises(ConfigError) as err:
        resolve_model({"hidden": 64, "layers": 2, "mlp": "gelu", "ffn": 256,
                       "moe": {"experts": "4", "top_k": 8, "expert_ffn": 64}})
    messages = " ".join(p.message for p in err.value.problems)
    assert "heads" in messages and "vocab" in messages and "top_k" in messages  # all at once


def test_shape_rules_beyond_the_schema():
    with pytest.raises(ConfigError) as err:
        resolve_model({**SEM11, "heads": 48, "kv_heads": 5})
    assert {p.pointer for p in err.value.problems} == {"/model/head_dim", "/model/kv_heads"}


def test_model_from_flags():
    assert model_from_flags(preset="mixtral-8x7b", vocab=None, moe_top_k=1, sliding_window_window=64) \
        == {"preset": "mixtral-8x7b", "moe": {"top_k": 1}, "sliding_window": {"window": 64}}


def test_to_dict_is_json_ready():
    d = compute_flops({"preset": "llama-3-8b"}, mode="training", seq_len=64, sequences=1).to_dict()
    assert {"model_flops_per_step", "hardware_flops_per_step", "flops_per_token", "tokens_per_step",
            "params_total", "params_active", "convention", "six_n_flops_per_step", "breakdown",
            "warnings"} <= d.keys()
    assert {"component", "forward_flops", "multiplier", "total"} <= d["breakdown"][0].keys()
    assert json.loads(json.dumps(d)) == d


# --- schema and presets ---------------------------------------------------------------

def schema() -> dict:
    return json.loads((ROOT / "schemas" / "model.schema.json").read_text(encoding="utf-8"))


def test_schema_is_valid_2020_12():
    s = schema()
    jsonschema.Draft202012Validator.check_schema(s)
    assert s["$id"] == "model.schema.json" and s["additionalProperties"] is False


def test_every_schema_property_is_described():
    missing = []

    def walk(node: dict, where: str) -> None:
        for name, sub in node.get("properties", {}).items():
            if not sub.get("description"):
                missing.append(f"{where}/{name}")
            walk(sub, f"{where}/{name}")
    walk(schema(), "")
    assert not missing


@pytest.mark.parametrize("name", sorted(presets()))
def test_preset_validates_and_matches_published_params(name):
    entry = presets()[name]
    jsonschema.Draft202012Validator(schema()).validate(entry["model"])
    assert entry["source"].startswith("https://")
    r = compute_flops({"preset": name}, mode="training", seq_len=4096, sequences=1)
    assert r.params_total == pytest.approx(entry["published_params"], rel=entry["params_tolerance"], abs=0)
    if "published_active_params" in entry:
        assert r.params_active == pytest.approx(entry["published_active_params"],
                                                rel=entry["active_tolerance"], abs=0)


def test_required_presets_present():
    required = {"llama-3-8b", "llama-3-70b", "llama-3.1-405b", "llama-3.1-8b", "llama-3.2-1b",
                "llama-3.2-3b", "mixtral-8x7b", "mixtral-8x22b", "qwen2.5-7b", "qwen2.5-72b",
                "qwen3-30b-a3b", "qwen3-235b-a22b", "deepseek-v3", "gpt-3-175b", "palm-540b",
                "gemma-2-9b", "gemma-2-27b"}
    assert required <= presets().keys()


def test_a_broken_preset_names_its_line_in_the_presets_file(tmp_path, monkeypatch):
    """configs/models.yaml is read like a job file: a wrong key is located, not just refused."""
    from pipeline.model import presets as module
    text = module.PRESETS_FILE.read_text(encoding="utf-8").replace("      ffn: 14336\n", "      fnn: 14336\n", 1)
    broken = tmp_path / "models.yaml"
    broken.write_text(text, encoding="utf-8")
    monkeypatch.setattr(module, "PRESETS_FILE", broken)
    module.presets.cache_clear()
    try:
        with pytest.raises(ConfigError) as err:
            module.presets()
    finally:
        module.presets.cache_clear()
    line = text.splitlines().index("      fnn: 14336") + 1        # presets sharing it through an alias: same line
    assert err.value.problems and all(p.pointer.endswith("/model/fnn") and p.line == line for p in err.value.problems)


def test_model_defaults_come_from_the_schema_only(monkeypatch):
    """Constant model defaults live in model.schema.json (`default`), nowhere else: the architecture built from
    a minimal model has them, and a changed schema default changes the architecture and the FLOPs."""
    import copy
    from pipeline.job import documents
    from pipeline.model.flops import flops_of
    schema = documents._schema("model.schema.json")
    minimal = {"hidden": 1024, "layers": 2, "heads": 8, "ffn": 4096, "mlp": "gelu", "vocab": 1000,
               "moe": {"experts": 4, "top_k": 1, "expert_ffn": 512}, "sliding_window": {"window": 64}}
    arch = Arch.from_model(minimal)
    assert (schema["properties"]["lm_head"]["default"], schema["properties"]["attention"]["default"]) == (True, "causal")
    assert (arch.lm_head, arch.causal, arch.tied_embeddings, arch.position_embeddings, arch.norms_per_layer,
            arch.mtp_layers, arch.global_every) == (True, True, False, 0, 2, 0, 0)
    assert (arch.moe.shared_experts, arch.moe.first_dense_layers, arch.moe.every) == (0, 0, 1)
    work = dict(mode="inference", seq_len=16, sequences=1)
    lm_head = 2 * 16 * 1024 * 1000                                   # 2·T·h·vocab, forward
    with_head = flops_of(minimal, **work).model_flops_per_step
    changed = copy.deepcopy(schema)
    changed["properties"]["lm_head"]["default"] = False
    original = documents._schema
    monkeypatch.setattr(documents, "_schema", lambda name: changed if name == "model.schema.json" else original(name))
    assert Arch.from_model(minimal).lm_head is False
    assert with_head - flops_of(minimal, **work).model_flops_per_step == lm_head
