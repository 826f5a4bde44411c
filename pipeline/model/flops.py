"""Model FLOPs (the MFU numerator) from a declared architecture, component by component.

Counting follows docs/figures.md §7: forward matmul FLOPs per component, times 3 for
training (forward, input gradient, weight gradient) or 1 for inference. The
convention that produced the figure is always recorded, together with the
6·N·tokens cross-check, because well-known implementations disagree by >10 %.
Integer arithmetic throughout, so published exact figures reproduce exactly.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Any, Callable, Mapping, Optional, Sequence

from pipeline.analysis import metrics
from pipeline.errors import ConfigError, Problem
from pipeline.job.documents import with_defaults
from pipeline.model.presets import resolve_model
from pipeline.model.transformer import Arch, Matmul, layer_matmuls, lookup_params, mtp_matmuls, param_counts

MODES = ("training", "inference", "decode")
RECOMPUTE = ("none", "selective", "full")
CONVENTIONS = {
    "megatron": "component-wise (Megatron-LM since 2025, MaxText)",
    "palm": "component-wise, never halved = 6N + 12·L·H·Q·T per token (PaLM App. B, nanoGPT, torchtitan); "
            "N = all matmul weights, excl. the input-embedding lookup",
    "6n": "6·N·tokens (2·N·tokens forward-only), N = active parameters incl. embeddings; "
          "ignores attention",
}
EXPLICIT = "explicit"
ATTENTION_CORE = ("attn_scores", "attn_context")
SIX_N_TOLERANCE = 0.20  # dense models: beyond this, 6N and the chosen figure disagree enough to check inputs


@dataclass(frozen=True)
class Component:
    """One row of the breakdown: forward FLOPs, the MFU multiplier and the HFU (hardware) multiplier."""

    component: str
    forward_flops: int
    multiplier: int
    total: int
    hardware_multiplier: int
    hardware_total: int


@dataclass(frozen=True)
class FlopsResult:
    """The numerator for one unit of work and how it was obtained."""

    model_flops_per_step: int
    hardware_flops_per_step: int
    flops_per_token: float | None         # None: an explicit numerator with no seq_len/global_batch
    tokens_per_step: int | None
    params_total: int | None
    params_active: int | None
    convention: str
    convention_note: str
    mode: str
    recompute: str
    flash_recompute: bool
    breakdown: list[Component]
    six_n_flops_per_step: int | None
    warnings: list[str] = field(default_factory=list)
    quick_check_factor: int | None = None   # k of the k·N·tokens cross-check: 6 training, 2 forward only
    pct_of_quick_check: float | None = None  # model FLOPs per step as a percentage of that cross-check

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready copy (ints stay exact; JSON has no integer size limit)."""
        return asdict(self)


def compute_flops(model: Mapping[str, Any], *, mode: str, seq_len: int | None, sequences: int | None,
                  recompute: str = "none", flash_recompute: bool = False,
                  convention: str | None = None, seq_lens: Sequence[int] | None = None,
                  context_len: int | None = None, generated_tokens: int | None = None) -> FlopsResult:
    """Model and hardware FLOPs of `sequences` sequences of `seq_len` tokens (the caller's unit of work).

    seq_lens: lengths of every packed document in the unit (attention uses Σ Lᵢ²).
    decode: `generated_tokens` (default 1) new tokens per sequence after `context_len`
    (default seq_len) cached ones: projections for the new tokens, attention over the cache.
    """
    return flops_of(resolve_model(model), mode=mode, seq_len=seq_len, sequences=sequences, recompute=recompute,
                    flash_recompute=flash_recompute, convention=convention, seq_lens=seq_lens,
                    context_len=context_len, generated_tokens=generated_tokens)


def flops_of(resolved: Mapping[str, Any], *, mode: str, seq_len: int | None, sequences: int | None,
             recompute: str = "none", flash_recompute: bool = False,
             convention: str | None = None, seq_lens: Sequence[int] | None = None,
             context_len: int | None = None, generated_tokens: int | None = None) -> FlopsResult:
    """compute_flops for a model presets.resolve_model already resolved (a job resolves it once)."""
    _check_workload(mode, recompute, flash_recompute, seq_len, sequences, seq_lens,
                    context_len, generated_tokens)
    if "flops_per_step" in resolved:
        return _explicit(resolved, mode, recompute, flash_recompute, seq_len, sequences, seq_lens)
    if seq_len is None or sequences is None:     # a job file is refused earlier (job_file.token_counts_given)
        raise ConfigError([Problem(message="counting the model's FLOPs needs seq_len and the number of sequences",
                                   pointer="/workload", hint="add workload.seq_len and workload.global_batch, "
                                                             "or give model.flops_per_step")])
    chosen = convention or with_defaults(resolved, "model.schema.json")["convention"]
    if chosen not in CONVENTIONS:
        raise ConfigError([Problem(message=f"unknown convention {chosen!r}",
                                   pointer="/model/convention", hint="one of " + ", ".join(CONVENTIONS))])
    arch = Arch.from_model(resolved)
    warnings: list[str] = []
    if mode == "decode":
        tokens = sequences * (generated_tokens or 1)
        core_x2 = _decode_core(sequences, seq_len if context_len is None else context_len,
                               generated_tokens or 1)
    else:
        lengths = Counter(seq_lens) if seq_lens else Counter({seq_len: sequences})
        tokens = sum(n * length for length, n in lengths.items())
        if seq_lens and tokens != seq_len * sequences:
            warnings.append(f"seq_lens sum to {tokens} tokens, not sequences × seq_len = "
                            f"{sequences * seq_len}; padding is not counted as model FLOPs")
        core_x2 = _prefill_core(lengths, halved=arch.causal and chosen == "megatron")
    total, active = param_counts(arch)
    if arch.vocab is None:
        warnings.append("vocab not declared: parameter counts exclude the embedding")
    if chosen == "6n":
        forward = {"6n": six_n_flops(active, tokens, mode="inference")}     # forward only: _row applies the mode
        if recompute != "none" or flash_recompute:
            warnings.append("the 6n convention cannot see recomputation: hardware FLOPs = model FLOPs")
    else:
        forward = forward_flops(arch, tokens, core_x2, with_mtp=mode == "training")
    rows = [_row(name, flops, mode, recompute, flash_recompute, chosen)
            for name, flops in forward.items()]
    model_flops = sum(r.total for r in rows)
    six_n = six_n_flops(active, tokens, mode=mode)
    factor = quick_check_factor(mode)
    if arch.moe is None and chosen != "6n" and abs(model_flops - six_n) > SIX_N_TOLERANCE * six_n:
        warnings.append(six_n_differs(arch, rows, model_flops, six_n, active, factor))
    return FlopsResult(
        model_flops_per_step=model_flops, hardware_flops_per_step=sum(r.hardware_total for r in rows),
        flops_per_token=model_flops / tokens, tokens_per_step=tokens, params_total=total,
        params_active=active, convention=chosen, mode=mode, recompute=recompute, flash_recompute=flash_recompute,
        convention_note=convention_note(arch, chosen, mode, recompute, flash_recompute), breakdown=rows,
        six_n_flops_per_step=six_n, warnings=warnings, quick_check_factor=factor,
        pct_of_quick_check=metrics.pct_of(model_flops, six_n))


def six_n_differs(arch: Arch, rows: list[Component], model_flops: int, six_n: int, active: int, factor: int) -> str:
    """Why a dense model's FLOPs are off the k·N·tokens check, by direction. Per token the components count
    k·(N − lookups − norms − biases) plus the attention core, so above comes from the core (grows with
    sequence length), below from what N counts but no matmul uses: the embedding lookups (docs/figures.md §7)."""
    said = f"model FLOPs {{}} the {factor}·N·tokens check by {model_flops / six_n - 1:+.0%} " \
           f"(tolerance ±{SIX_N_TOLERANCE:.0%}): "
    if model_flops > six_n:
        core = sum(r.total for r in rows if r.component.rsplit(".", 1)[-1] in ATTENTION_CORE)
        return (said.format("exceed") + f"{factor}·N·tokens leaves out the attention core (QKᵀ and ×V), "
                f"{core / model_flops:.0%} of the model FLOPs here, which grows with the sequence length: long "
                "sequences come out above it; otherwise check seq_len and the declared shape")
    tables = lookup_params(arch)
    if not tables:
        return said.format("fall short of") + "check the declared shape"
    lookups = sum(tables.values())
    return (said.format("fall short of") + f"N counts {lookups:,} parameters ({lookups / active:.0%} of N) that are "
            f"looked up, not multiplied ({' and '.join(tables)}; a lookup is 0 FLOPs, docs/figures.md §7): a small model "
            "with a large vocabulary comes out below it; otherwise check the declared shape (vocab, "
            "tied_embeddings, lm_head)")


def convention_note(arch: Arch, convention: str, mode: str, recompute: str = "none", flash: bool = False) -> str:
    """The counting choices behind this figure, as the report states them (docs/figures.md §7).

    Says what was applied to this model, not what the convention would do in general:
    causal halving yes/no (and why not), LM head counted or not, active vs total experts,
    and what HFU counts on top of MFU.
    """
    parts = [CONVENTIONS[convention]]
    if convention != "6n":
        if mode == "decode":
            parts.append("decode: each new token against every cached key, not halved")
        elif not arch.causal:
            parts.append("full (non-causal) attention: QKᵀ and ×V counted whole, not halved")
        elif convention == "megatron":
            parts.append("causal attention: QKᵀ and ×V counted at half (s²/2 query-key pairs)")
        else:
            parts.append("causal attention: QKᵀ and ×V counted whole (s² query-key pairs), not halved")
        if arch.window is not None:
            every = f", one layer in {arch.global_every} global" if arch.global_every else ""
            parts.append(f"sliding window {arch.window}{every}: at most {arch.window} keys per query")
        if arch.lm_head and arch.vocab:
            parts.append("LM head included")
        else:
            parts.append("LM head not counted (" + ("lm_head: false" if not arch.lm_head else "no vocab declared")
                         + ")")
    if arch.moe is not None:
        e = arch.moe
        shared = f" + {e.shared_experts} shared" if e.shared_experts else ""
        parts.append(f"MoE: only the active experts (top-{e.top_k} of {e.experts} routed{shared}), "
                     f"never all experts")
    multiplier = "training: 3× forward (forward, input gradient, weight gradient)" if mode == "training" \
        else f"{mode}: 1× forward"
    return "; ".join(parts + [multiplier] + _hardware_note(convention, mode, recompute, flash))


def _hardware_note(convention: str, mode: str, recompute: str, flash: bool) -> list[str]:
    """What HFU counts beyond MFU (docs/figures.md §7: the forwards run again, as _row multiplies them). Nothing for
    inference (nothing is recomputed) or for 6n, which cannot see it (a warning says so when it is declared)."""
    if mode != "training" or convention == "6n":
        return []
    again = []
    if recompute == "full":
        again.append("full recomputation re-runs every layer's forward (4× for the layers, the LM head stays 3×)")
    elif recompute == "selective":
        again.append("selective recomputation re-runs the attention core (QKᵀ and ×V at 4×)")
    if flash:
        again.append("FlashAttention's backward recomputes QKᵀ once more (+1×)")
    return ["HFU: " + " and ".join(again) if again else "HFU: no recomputation declared, hardware FLOPs = model FLOPs"]


def per_occurrence(per_step: int, steps: Fraction) -> int:
    """FLOPs (or tokens) of one occurrence: per-step figure x optimizer steps in it, rounded to whole FLOPs."""
    return round(per_step * steps)


CoreX2 = Callable[[Optional[int]], int]  # window → doubled (query, key) pairs in the unit of work


def _prefill_core(lengths: Counter, *, halved: bool) -> CoreX2:
    """Training/prefill: Σ over sequences (packed documents: Σ Lᵢ², not b·s²)."""
    return lambda window: sum(n * attention_pairs_x2(length, window, halved)
                              for length, n in lengths.items())


def _decode_core(sequences: int, context: int, generated: int) -> CoreX2:
    """Decode: each new token scores against every cached key, so nothing is halved."""
    return lambda window: sequences * 2 * decode_keys(context, generated, window)


def six_n_flops(params: int, tokens: int, *, mode: str) -> int:
    """Kaplan et al. 2020 quick check: 2·N FLOPs per token forward, 6·N with the backward pass (training)."""
    return quick_check_factor(mode) * params * tokens


def quick_check_factor(mode: str) -> int:
    """k of the k·N·tokens check (Kaplan et al. 2020): 6 with the backward pass, 2 for a forward only.
    Reports name the factor, so an inference check is not read as 6·N·tokens (3x what was computed)."""
    return 6 if mode == "training" else 2


def attention_pairs_x2(length: int, window: int | None, halved: bool) -> int:
    """Twice the (query, key) pairs of one sequence; 2·pairs·width = QKᵀ FLOPs (docs/figures.md §7).

    Halved (Megatron causal): s²/2 pairs, or the band w·s − w²/2 under a sliding window.
    Not halved (full attention, or PaLM counting): s·min(s, w) pairs.
    """
    if not halved:
        return 2 * length * min(length, window or length)
    if window is None or length <= window:
        return length * length
    return 2 * window * length - window * window


def decode_keys(context: int, generated: int, window: int | None) -> int:
    """Keys read by `generated` new tokens after `context` cached ones.

    New token i (0-based) sees the cache, the i tokens before it and itself: context+i+1 keys,
    at most `window` on a sliding-window layer.
    """
    first, last = context + 1, context + generated
    if window is None or last <= window:
        return (first + last) * generated // 2
    if first > window:
        return window * generated
    below = window - first + 1
    return (first + window) * below // 2 + window * (generated - below)


def forward_flops(arch: Arch, tokens: int, core_x2: CoreX2, *, with_mtp: bool) -> dict[str, int]:
    """Forward FLOPs per component summed over layers: 2·T per weight element, plus the attention core."""
    scores_dim, context_dim = arch.attention_dims()
    out: dict[str, int] = {}

    def add(prefix: str, matmuls: list[Matmul], window: int | None) -> None:
        x2 = core_x2(window)
        for mm in matmuls:
            if mm.component == "out_proj":  # keep the natural order: core before output projection
                out[prefix + "attn_scores"] = out.get(prefix + "attn_scores", 0) + x2 * scores_dim
                out[prefix + "attn_context"] = out.get(prefix + "attn_context", 0) + x2 * context_dim
            out[prefix + mm.component] = out.get(prefix + mm.component, 0) + 2 * tokens * mm.active

    for i in range(arch.layers):
        add("", layer_matmuls(arch, i), arch.window_of(i))
    head = 2 * tokens * arch.hidden * arch.vocab if arch.lm_head and arch.vocab else 0
    if head:
        out["lm_head"] = head
    if with_mtp:  # MTP modules train alongside the model and are dropped at inference
        for _ in range(arch.mtp_layers):
            add("mtp.", mtp_matmuls(arch), arch.window_of(arch.layers - 1))
            if head:
                out["mtp.lm_head"] = out.get("mtp.lm_head", 0) + head
    return out


def _row(name: str, forward: int, mode: str, recompute: str, flash: bool, convention: str) -> Component:
    """Multipliers: training 3× for MFU; HFU adds re-run forwards (docs/figures.md §7).

    full: every layer's forward again (the LM head is not checkpointed); selective:
    the attention core again; FlashAttention backward recomputes QKᵀ only (its
    backward is 5 matmuls vs 4 without recompute: Dao 2023, FlashAttention-2 §3.1.2).
    """
    if mode != "training":
        return Component(name, forward, 1, forward, 1, forward)
    base = name.rsplit(".", 1)[-1]
    hw = 3
    if convention != "6n":
        hw += recompute == "full" and base != "lm_head"
        hw += recompute == "selective" and base in ATTENTION_CORE
        hw += flash and base == "attn_scores"
    return Component(name, forward, 3, 3 * forward, hw, hw * forward)


def _explicit(model: Mapping[str, Any], mode: str, recompute: str, flash: bool, seq_len: int | None,
              sequences: int | None, seq_lens: Sequence[int] | None) -> FlopsResult:
    """A user-given numerator passes through unchanged; the report must say it was not computed."""
    flops = model["flops_per_step"]
    hardware = model.get("hardware_flops_per_step", flops)
    warnings = []
    if (recompute != "none" or flash) and "hardware_flops_per_step" not in model:
        warnings.append("recomputation declared but no hardware_flops_per_step: HFU = MFU")
    tokens = sum(seq_lens) if seq_lens else (seq_len * sequences if seq_len and sequences else None)
    row = Component(EXPLICIT, flops, 1, flops, 1, hardware)
    return FlopsResult(
        model_flops_per_step=flops, hardware_flops_per_step=hardware,
        flops_per_token=flops / tokens if tokens else None,
        tokens_per_step=tokens, params_total=None, params_active=None, convention=EXPLICIT,
        convention_note="flops_per_step given in the job file, not computed", mode=mode,
        recompute=recompute, flash_recompute=flash, breakdown=[row], six_n_flops_per_step=None,
        warnings=warnings)


def _check_workload(mode: str, recompute: str, flash: bool, seq_len: int | None, sequences: int | None,
                    seq_lens: Sequence[int] | None, context_len: int | None,
                    generated_tokens: int | None) -> None:
    """Reject combinations that have no meaning rather than silently counting something else."""
    def bad(key: str, message: str, hint: str = "") -> Problem:
        return Problem(message=message, pointer=f"/workload/{key}", hint=hint)

    problems = []
    if mode not in MODES:
        problems.append(bad("mode", f"unknown mode {mode!r}", "one of " + ", ".join(MODES)))
    if recompute not in RECOMPUTE:
        problems.append(bad("recompute", f"unknown recompute {recompute!r}",
                            "one of " + ", ".join(RECOMPUTE)))
    elif mode != "training" and (recompute != "none" or flash):
        problems.append(bad("recompute", f"{mode} has no backward pass, so nothing is recomputed",
                            "recompute: none and flash_recompute: false"))
    for key, value, low in (("seq_len", seq_len, 1), ("sequences", sequences, 1),
                            ("context_len", context_len, 0), ("generated_tokens", generated_tokens, 1)):
        if value is not None and (not isinstance(value, int) or value < low):
            problems.append(bad(key, f"{key} must be a whole number ≥ {low}, got {value!r}"))
    if seq_lens is not None and (mode == "decode" or not seq_lens
                                 or any(not isinstance(n, int) or n < 1 for n in seq_lens)):
        problems.append(bad("seq_lens", "seq_lens must be a non-empty list of lengths ≥ 1 "
                                        "(and is not for decode)"))
    if mode != "decode" and (context_len is not None or generated_tokens is not None):
        problems.append(bad("mode", "context_len and generated_tokens apply to decode only"))
    if problems:
        raise ConfigError(problems)
