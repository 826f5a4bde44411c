"""The declared architecture as weight matrices and attention shapes.

One description serves both parameter counting and FLOP counting: a matmul with
W weight elements costs 2·W FLOPs per token in the forward pass (docs/figures.md §7),
so listing the matrices once keeps the two numbers consistent by construction.
Only the attention core (QKᵀ and ×V) depends on sequence length and is described
separately. Everything here is pure arithmetic on a resolved model mapping.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from pipeline.job.documents import with_defaults

GATED_MLPS = frozenset({"swiglu", "geglu"})


@dataclass(frozen=True)
class Matmul:
    """One weight matrix family in a layer: elements held and elements used per token."""

    component: str
    total: int       # weight elements stored (all experts)
    active: int      # weight elements a single token multiplies by (top-k experts only)
    bias: int = 0         # bias elements stored (parameters, but no matmul FLOPs)
    active_bias: int = 0  # bias elements a single token uses


@dataclass(frozen=True)
class Moe:
    experts: int
    top_k: int
    expert_ffn: int
    shared_experts: int
    shared_ffn: int
    first_dense_layers: int
    every: int
    router_bias: bool


@dataclass(frozen=True)
class Mla:
    q_lora_rank: int
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int


@dataclass(frozen=True)
class Arch:
    """A resolved model with every default filled in, so formulas never guess."""

    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int | None
    mlp: str
    vocab: int | None
    causal: bool
    lm_head: bool
    tied_embeddings: bool
    position_embeddings: int
    linear_bias: bool
    qkv_bias: bool
    layernorm: bool
    norms_per_layer: int
    qk_norm: bool
    moe: Moe | None
    mla: Mla | None
    window: int | None
    global_every: int
    mtp_layers: int

    @classmethod
    def from_model(cls, model: Mapping[str, Any]) -> "Arch":
        """Constant defaults come from model.schema.json (its `default`s, the only copy); those derived from
        other keys are filled here: kv_heads = heads (MHA), head_dim = hidden / heads, shared_ffn = expert_ffn."""
        m = with_defaults(model, "model.schema.json")
        heads = m["heads"]
        moe, mla, sw = m.get("moe"), m.get("mla"), m.get("sliding_window")
        return cls(
            hidden=m["hidden"], layers=m["layers"], heads=heads,
            kv_heads=m.get("kv_heads", heads), head_dim=m.get("head_dim", m["hidden"] // heads),
            ffn=m.get("ffn"), mlp=m["mlp"], vocab=m.get("vocab"),
            causal=m["attention"] == "causal", lm_head=m["lm_head"], tied_embeddings=m["tied_embeddings"],
            position_embeddings=m["position_embeddings"],
            linear_bias=m["linear_bias"], qkv_bias=m["qkv_bias"], layernorm=m["norm"] == "layernorm",
            norms_per_layer=m["norms_per_layer"], qk_norm=m["qk_norm"],
            moe=None if moe is None else Moe(
                experts=moe["experts"], top_k=moe["top_k"], expert_ffn=moe["expert_ffn"],
                shared_experts=moe["shared_experts"], shared_ffn=moe.get("shared_ffn", moe["expert_ffn"]),
                first_dense_layers=moe["first_dense_layers"], every=moe["every"], router_bias=moe["router_bias"]),
            mla=None if mla is None else Mla(
                q_lora_rank=mla["q_lora_rank"], kv_lora_rank=mla["kv_lora_rank"],
                qk_nope_head_dim=mla["qk_nope_head_dim"], qk_rope_head_dim=mla["qk_rope_head_dim"],
                v_head_dim=mla["v_head_dim"]),
            window=None if sw is None else sw["window"],
            global_every=0 if sw is None else sw["global_every"],
            mtp_layers=m["mtp_layers"],
        )

    @property
    def mlp_matrices(self) -> int:
        """Gated MLPs (SwiGLU/GeGLU) have gate, up and down matrices; GELU/ReLU have two."""
        return 3 if self.mlp in GATED_MLPS else 2

    def is_moe_layer(self, i: int) -> bool:
        """HF/Megatron layout: first k layers dense, then every n-th layer (1-based) is MoE."""
        if self.moe is None or i < self.moe.first_dense_layers:
            return False
        return (i - self.moe.first_dense_layers + 1) % self.moe.every == 0

    def window_of(self, i: int) -> int | None:
        """Window of layer i, None for global; every `global_every`-th layer is global (Gemma 2: 2)."""
        if self.window is None:
            return None
        if self.global_every and (i + 1) % self.global_every == 0:
            return None
        return self.window

    def attention_dims(self) -> tuple[int, int]:
        """Widths of QKᵀ and of ×V summed over query heads (GQA/MQA do not shrink them)."""
        if self.mla is not None:
            a = self.mla
            return self.heads * (a.qk_nope_head_dim + a.qk_rope_head_dim), self.heads * a.v_head_dim
        return self.heads * self.head_dim, self.heads * self.head_dim


def attention_matmuls(a: Arch) -> list[Matmul]:
    """Q, K/V and output projections; MLA per DeepSeek-V2/V3 (arXiv:2405.04434, 2412.19437)."""
    h = a.hidden
    if a.mla is not None:
        m = a.mla
        qk = m.qk_nope_head_dim + m.qk_rope_head_dim
        q = h * m.q_lora_rank + m.q_lora_rank * a.heads * qk if m.q_lora_rank else h * a.heads * qk
        kv = h * (m.kv_lora_rank + m.qk_rope_head_dim) \
            + m.kv_lora_rank * a.heads * (m.qk_nope_head_dim + m.v_head_dim)
        out = a.heads * m.v_head_dim * h
        return [Matmul("q_proj", q, q), Matmul("kv_proj", kv, kv), Matmul("out_proj", out, out)]
    q_dim, kv_dim = a.heads * a.head_dim, a.kv_heads * a.head_dim
    qkv_bias = a.linear_bias or a.qkv_bias
    q, kv, out = h * q_dim, 2 * h * kv_dim, q_dim * h
    q_bias = q_dim if qkv_bias else 0
    kv_bias = 2 * kv_dim if qkv_bias else 0
    out_bias = h if a.linear_bias else 0
    return [
        Matmul("q_proj", q, q, q_bias, q_bias),
        Matmul("kv_proj", kv, kv, kv_bias, kv_bias),
        Matmul("out_proj", out, out, out_bias, out_bias),
    ]


def ffn_matmuls(a: Arch, moe_layer: bool) -> list[Matmul]:
    """Dense MLP, or router + routed experts (top-k active) + shared experts (docs/figures.md §7)."""
    h, m = a.hidden, a.mlp_matrices
    bias = a.linear_bias

    def mlp(name: str, width: int, stored: int, used: int) -> Matmul:
        w = m * h * width
        b = ((m - 1) * width + h) if bias else 0
        return Matmul(name, stored * w, used * w, stored * b, used * b)

    if not moe_layer:
        return [mlp("mlp", a.ffn or 0, 1, 1)]
    e = a.moe
    assert e is not None
    router_bias = e.experts if e.router_bias else 0
    rows = [Matmul("router", h * e.experts, h * e.experts, router_bias, router_bias),
            mlp("experts", e.expert_ffn, e.experts, e.top_k)]
    if e.shared_experts:
        rows.append(mlp("shared_experts", e.shared_ffn, e.shared_experts, e.shared_experts))
    return rows


def layer_norm_params(a: Arch) -> int:
    """Norm weights in one layer: RMSNorm has a scale, LayerNorm scale and bias; plus QK/MLA norms."""
    width = 2 if a.layernorm else 1
    n = a.norms_per_layer * a.hidden * width
    if a.qk_norm:
        n += 2 * a.head_dim * width
    if a.mla is not None:
        n += (a.mla.q_lora_rank + a.mla.kv_lora_rank) * width
    return n


def layer_matmuls(a: Arch, i: int) -> list[Matmul]:
    """All weight matrices of layer i (attention then FFN)."""
    return attention_matmuls(a) + ffn_matmuls(a, a.is_moe_layer(i))


def mtp_matmuls(a: Arch) -> list[Matmul]:
    """One DeepSeek-V3 MTP module: projection of [h; emb] (2h→h) plus one more layer like the last."""
    proj = 2 * a.hidden * a.hidden
    return [Matmul("eh_proj", proj, proj)] + layer_matmuls(a, a.layers - 1)


def embedding_params(a: Arch) -> int:
    """Token (and learned position) tables; an untied LM head is a second vocab×hidden matrix."""
    if a.vocab is None:
        return a.position_embeddings * a.hidden
    tables = a.vocab * a.hidden + a.position_embeddings * a.hidden
    if a.lm_head and not a.tied_embeddings:
        tables += a.vocab * a.hidden
    return tables


def lookup_params(a: Arch) -> dict[str, int]:
    """Parameters of N that no matmul uses (docs/figures.md §7: an input embedding is a lookup, 0 FLOPs), by table:
    the token table unless it is also the LM head's matrix (tied, LM head counted), learned positions."""
    token = "the token embedding table" + ("" if a.lm_head else " (lm_head: false, so no LM head multiplies it)")
    tables = {token: a.vocab * a.hidden if a.vocab is not None and not (a.lm_head and a.tied_embeddings) else 0,
              "the learned position table": a.position_embeddings * a.hidden}
    return {name: n for name, n in tables.items() if n}


def param_counts(a: Arch) -> tuple[int, int]:
    """(total, active) parameters: active keeps only the top-k routed experts of each MoE layer."""
    norm_width = 2 if a.layernorm else 1
    total = active = embedding_params(a) + a.hidden * norm_width  # + final norm
    mtp_extra = 3 * a.hidden * norm_width  # DeepSeek-V3 MTP: enorm, hnorm, own final norm
    blocks = [(layer_matmuls(a, i), layer_norm_params(a)) for i in range(a.layers)]
    blocks += [(mtp_matmuls(a), layer_norm_params(a) + mtp_extra)] * a.mtp_layers
    for matmuls, norms in blocks:
        total += norms + sum(mm.total + mm.bias for mm in matmuls)
        active += norms + sum(mm.active + mm.active_bias for mm in matmuls)
    return total, active
