"""Analytic FLOPs and minimum HBM bytes per model operator, for the roofline (docs/figures.md §9).

FLOPs of the matrix multiplies are the MFU numerator's own components (flops.py), so
the roofline and the headline describe the same work. Bytes are the minimum traffic:
every input and weight read once, every output written once, per kernel call of
`tokens_per_call` tokens (one micro-batch on one rank: a bigger global batch means
more calls, not a larger arithmetic intensity). Training moves 3x the forward bytes:
the input-gradient and weight-gradient GEMMs each read two of A, W, dC and write the
third, exactly the forward's traffic; for norms, elementwise ops and attention the
same 3x is an approximation (their backward is about twice the forward).
Norms and elementwise ops are not model FLOPs (docs/figures.md §7) but do take time, so
they appear with estimated FLOPs per element, named in `note`.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.model.transformer import Arch

BYTES_PER_ELEMENT = {"fp64": 8, "fp64_tensor": 8, "fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2,
                     "fp8": 1, "int8": 1, "fp4": 0.5}
NORM_FLOPS_PER_ELEMENT = {"rmsnorm": 4, "layernorm": 7}   # square+sum+scale+weight; mean, var, +shift
ACT_FLOPS_PER_ELEMENT = {"gated": 5, "plain": 8}          # silu (exp, add, div, mul) x up; tanh-GELU


@dataclass(frozen=True)
class Operator:
    """One roofline row before measurement: totals over the selected work (all GPUs)."""

    operator: str
    kernel_class: str | None    # None: no single class (a whole-region figure)
    flops: int
    bytes: int
    note: str = ""
    combined: bool = False    # the sum of every operator of its class: claims the whole class's time


def gemm_bytes(tokens: int, k: int, n: int, bpe: float) -> float:
    """C[T,N] = A[T,K] W[K,N]: read A and W once, write C once. docs/figures.md §9 (square GEMM: AI N/3)."""
    return (tokens * k + k * n + tokens * n) * bpe


def elementwise_bytes(elements: int, tensors: int, bpe: float) -> float:
    """`tensors` tensors of `elements` each read or written once (add: 2 read + 1 written = 3)."""
    return elements * tensors * bpe


def attention_io_bytes(seq: int, q: int, k: int, v: int, o: int, bpe: float) -> float:
    """One sequence, one layer: read Q, K, V and write O once (widths summed over heads); FlashAttention's
    whole traffic, the scores staying on chip."""
    return seq * (q + k + v + o) * bpe


@dataclass(frozen=True)
class Work:
    """The selected work: tokens over all occurrences, tokens per kernel call, and the multipliers."""

    tokens: int
    tokens_per_call: int
    seq_len: int
    multiplier: int           # 3 training, 1 inference
    bpe: float
    attention: str            # flash | naive


def operators(arch: Arch, components: dict[str, int], w: Work) -> list[Operator]:
    """Roofline operators of a declared transformer; `components` are model FLOPs of the selected work."""
    calls = w.tokens // w.tokens_per_call
    t = w.tokens_per_call
    mult, bpe = w.multiplier, w.bpe

    def gemm(name: str, flops: int, layers: int, k: int, n: int, note: str = "") -> Operator:
        return Operator(name, "gemm", flops, round(mult * calls * layers * gemm_bytes(t, k, n, bpe)), note)

    h, L = arch.hidden, arch.layers
    moe_layers = sum(arch.is_moe_layer(i) for i in range(L))
    dense_layers = L - moe_layers
    m = arch.mlp_matrices
    qkv = components.get("q_proj", 0) + components.get("kv_proj", 0)
    if arch.mla is not None:
        rows = [_mla_projections(arch, qkv, w, calls)]
        out_width = arch.heads * arch.mla.v_head_dim
    else:
        q_dim, kv_dim = arch.heads * arch.head_dim, arch.kv_heads * arch.head_dim
        rows = [gemm("QKV projection", qkv, L, h, q_dim + 2 * kv_dim, "fused Q, K, V weights read once")]
        out_width = q_dim
    rows.append(_attention(arch, components, w))
    rows.append(gemm("output projection", components.get("out_proj", 0), L, out_width, h))
    mlp = components.get("mlp", 0)
    if mlp and arch.ffn:
        rows.append(gemm("MLP up" + (" + gate" if m == 3 else ""), mlp * (m - 1) // m, dense_layers,
                         h, (m - 1) * arch.ffn))
        rows.append(gemm("MLP down", mlp // m, dense_layers, arch.ffn, h))
    if moe_layers and arch.moe:
        rows += _moe(arch, components, w, moe_layers, calls)
    if components.get("lm_head"):
        rows.append(gemm("LM head", components["lm_head"], 1, h, arch.vocab or 0))
    rows += _memory_bound(arch, w, dense_layers, moe_layers)
    return [r for r in rows if r.flops > 0]


def _mla_projections(arch: Arch, flops: int, w: Work, calls: int) -> Operator:
    """MLA (DeepSeek-V2 §2.1): h -> [q latent; kv latent; rope key] in one GEMM, then the two
    up-projections (q latent -> per-head q, kv latent -> per-head k_nope and v)."""
    a, h, t, bpe = arch.mla, arch.hidden, w.tokens_per_call, w.bpe
    assert a is not None
    qk = arch.heads * (a.qk_nope_head_dim + a.qk_rope_head_dim)
    kv_up = gemm_bytes(t, a.kv_lora_rank, arch.heads * (a.qk_nope_head_dim + a.v_head_dim), bpe)
    if a.q_lora_rank:
        down = gemm_bytes(t, h, a.q_lora_rank + a.kv_lora_rank + a.qk_rope_head_dim, bpe)
        q_up = gemm_bytes(t, a.q_lora_rank, qk, bpe)
    else:
        down = gemm_bytes(t, h, qk + a.kv_lora_rank + a.qk_rope_head_dim, bpe)
        q_up = 0
    per_call = down + q_up + kv_up
    return Operator("QKV projection", "gemm", flops, round(w.multiplier * calls * arch.layers * per_call),
                    "MLA: fused down-projections, then the q and kv up-projections")


def _attention(arch: Arch, components: dict[str, int], w: Work) -> Operator:
    """QKᵀ and x V together; bytes follow the declared implementation (flash or naive).

    Widths over all heads: Q and K (query heads x QK head width; GQA/MQA: kv heads for K and V),
    V and O (value head width). MLA's per-head K and V are materialised from the latent (DeepSeek-V2).
    """
    sequences = w.tokens // w.seq_len
    if arch.mla is not None:
        a = arch.mla
        q = k = arch.heads * (a.qk_nope_head_dim + a.qk_rope_head_dim)
        v = o = arch.heads * a.v_head_dim
    else:
        q = o = arch.heads * arch.head_dim
        k = v = arch.kv_heads * arch.head_dim
    per = attention_io_bytes(w.seq_len, q, k, v, o, w.bpe)
    if w.attention == "naive":
        # unfused: the heads x s x s scores written, read by softmax, probabilities written, read by x V
        per += 4 * arch.heads * w.seq_len * w.seq_len * w.bpe
        cls, note = "gemm", "naive: scores materialised in HBM; runs as batched GEMMs plus softmax"
    else:
        cls, note = "attention", "flash: Q, K, V read and O written once; scores stay on chip"
    flops = components.get("attn_scores", 0) + components.get("attn_context", 0)
    return Operator("attention core", cls, flops, round(w.multiplier * sequences * arch.layers * per), note)


def _moe(arch: Arch, components: dict[str, int], w: Work, layers: int, calls: int) -> list[Operator]:
    """Routed experts: every expert's weights read once per call (T·k ≥ E tokens reach them all),
    each routed token's activations in and out of both matrices; router and shared experts as GEMMs."""
    e, t, h, m, bpe = arch.moe, w.tokens_per_call, arch.hidden, arch.mlp_matrices, w.bpe
    assert e is not None
    routed = t * e.top_k
    per_call = (routed * (h + (m - 1) * e.expert_ffn) + routed * (e.expert_ffn + h)
                + e.experts * m * h * e.expert_ffn) * bpe
    scale = w.multiplier * calls * layers
    rows = [Operator("MoE router", "gemm", components.get("router", 0),
                     round(scale * gemm_bytes(t, h, e.experts, bpe))),
            Operator("MoE routed experts", "gemm", components.get("experts", 0), round(scale * per_call),
                     f"top-{e.top_k} of {e.experts} experts active per token")]
    if e.shared_experts:
        width = e.shared_experts * e.shared_ffn
        shared = gemm_bytes(t, h, (m - 1) * width, bpe) + gemm_bytes(t, width, h, bpe)
        rows.append(Operator("MoE shared experts", "gemm", components.get("shared_experts", 0),
                             round(scale * shared)))
    return rows


def _memory_bound(arch: Arch, w: Work, dense_layers: int, moe_layers: int) -> list[Operator]:
    """Norms, residual adds and the MLP activation: per-element FLOPs, one pass over their tensors."""
    T, h, mult, bpe = w.tokens, arch.hidden, w.multiplier, w.bpe
    kind = "layernorm" if arch.layernorm else "rmsnorm"
    norms = arch.norms_per_layer * arch.layers + 1                      # + the final norm
    gated = arch.mlp_matrices == 3
    width = dense_layers * (arch.ffn or 0)
    if arch.moe:
        width += moe_layers * (arch.moe.top_k * arch.moe.expert_ffn + arch.moe.shared_experts * arch.moe.shared_ffn)
    act_flops = ACT_FLOPS_PER_ELEMENT["gated" if gated else "plain"]
    return [
        Operator("norms", "normalization", mult * NORM_FLOPS_PER_ELEMENT[kind] * T * h * norms,
                 round(mult * elementwise_bytes(T * h * norms, 2, bpe)),
                 f"{kind}: ~{NORM_FLOPS_PER_ELEMENT[kind]} FLOP per element (estimate; not model FLOPs)"),
        Operator("residual adds", "elementwise", mult * T * h * 2 * arch.layers,
                 round(mult * elementwise_bytes(T * h * 2 * arch.layers, 3, bpe)),
                 "1 FLOP per element, 2 read + 1 written (not model FLOPs)"),
        Operator("MLP activation", "elementwise", mult * act_flops * T * width,
                 round(mult * elementwise_bytes(T * width, 3 if gated else 2, bpe)),
                 f"~{act_flops} FLOP per element (estimate; not model FLOPs)"),
    ]
