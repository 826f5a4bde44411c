"""Model presets and the resolution of a job's `model` section.

Presets live in data (configs/models.yaml), each with its source and published
parameter count, so adding a model is a reviewed data change, not a code change.
Resolution merges a preset under the user's keys, validates the result against
schemas/model.schema.json and turns numeric strings into exact integers.
"""

from __future__ import annotations

import re
from decimal import Decimal
from functools import lru_cache
from typing import Any, Mapping

from pipeline.bundled import config_path
from pipeline.job.documents import read_config, schema_problems, with_defaults
from pipeline.errors import ConfigError, Problem

PRESETS_FILE = config_path("models.yaml")
NESTED = ("moe", "mla", "sliding_window")
NUMERIC = re.compile(r"^\s*\+?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$")  # same pattern as the schema
# Sizes no model reaches, far beyond the largest published (under 200 layers, widths and vocabularies under 10^6,
# a step under 10^22 FLOPs): FLOPs are counted layer by layer, and every total must stay a finite float.
MAX_LAYERS = 10_000
MAX_COUNT = 2 ** 31
MAX_FLOPS = 1e30                   # a float: `flops_per_step: 1e30` reads as 1e30 exactly as written


@lru_cache(maxsize=1)
def presets() -> dict[str, dict]:
    """All presets by name: {source, published_params, params_tolerance, model}.

    Read like a job file (job/parsing.py: positions, duplicate keys, 989e12 as a number) and checked
    against schemas/models.schema.json, so a mistake in a preset names its line in configs/models.yaml.
    """
    return read_config(PRESETS_FILE, "models.schema.json", "model presets")[0]["presets"]


def resolve_model(model: Mapping[str, Any]) -> dict:
    """Preset merged under the given keys (nested sections merged key by key), validated, numbers exact.

    Raises ConfigError listing every problem; an unknown preset names the closest presets.
    """
    merged: dict[str, Any] = {}
    name = model.get("preset")
    if name is not None:
        table = presets()
        if name not in table:
            import difflib                  # an unknown preset only: 2 ms of every run's start-up else
            close = difflib.get_close_matches(str(name), table, n=3, cutoff=0.4)
            hint = f"did you mean {', '.join(close)}?" if close else "`mfu models` lists the presets"
            raise ConfigError([Problem(message=f"unknown model preset {name!r}",
                                       pointer="/model/preset", hint=hint)])
        merged = {k: (dict(v) if isinstance(v, dict) else v) for k, v in table[name]["model"].items()}
    for key, value in model.items():
        if key in NESTED and isinstance(value, Mapping) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    _raise_if(schema_problems(merged, "model.schema.json", "", {}, prefix="/model"))
    exact = _exact_numbers(merged, "/model")
    _raise_if(_size_problems(exact, "/model"))
    if "flops_per_step" not in exact:
        _raise_if(_architecture_problems(exact))
    return exact


def _raise_if(problems: list[Problem]) -> None:
    if problems:
        raise ConfigError(problems)


def _architecture_problems(model: Mapping[str, Any]) -> list[Problem]:
    """Rules a schema cannot state clearly: keys needed to count FLOPs, vocab when there is an LM head."""
    problems = [Problem(message=f"missing required key {k!r}", pointer="/model",
                        hint="give it, a `preset`, or an explicit `flops_per_step`")
                for k in ("hidden", "layers", "heads", "mlp") if k not in model]
    filled = with_defaults(model, "model.schema.json")
    moe = filled.get("moe")
    all_moe = moe is not None and moe["first_dense_layers"] == 0 and moe["every"] == 1
    if "ffn" not in model and not all_moe:
        problems.append(Problem(message="missing 'ffn' (dense MLP width)", pointer="/model",
                                hint="add ffn: <intermediate size>"))
    if filled["lm_head"] and "vocab" not in model:
        problems.append(Problem(message="an LM head needs 'vocab'", pointer="/model",
                                hint="add vocab: <size>, or lm_head: false"))
    hidden, heads = model.get("hidden"), model.get("heads")
    if hidden and heads and "head_dim" not in model and "mla" not in model and hidden % heads:
        problems.append(Problem(message=f"hidden {hidden} is not a multiple of heads {heads}",
                                pointer="/model/head_dim", hint="give head_dim explicitly"))
    if heads and heads % model.get("kv_heads", heads):
        problems.append(Problem(message="heads must be a multiple of kv_heads (GQA groups)",
                                pointer="/model/kv_heads"))
    if moe is not None and moe.get("top_k", 0) > moe.get("experts", 0):
        problems.append(Problem(message="top_k exceeds the number of experts", pointer="/model/moe/top_k"))
    return problems


def _size_problems(value: Any, pointer: str) -> list[Problem]:
    """Counts too large for any model: `layers: 1e12` looped for hours and `position_embeddings: 1e308` or
    `flops_per_step: 1.7e308` overflowed a float, each a traceback; the limits are far beyond any real model."""
    if isinstance(value, Mapping):
        return [p for k, v in value.items() for p in _size_problems(v, f"{pointer}/{k}")]
    if isinstance(value, bool) or not isinstance(value, int):
        return []
    key = pointer.rsplit("/", 1)[-1]
    limit, what = (MAX_FLOPS, "FLOPs") if key.endswith("flops_per_step") else \
        (MAX_LAYERS, "layers") if key in ("layers", "mtp_layers") else (MAX_COUNT, "")
    if value <= limit:
        return []
    most = f"{limit:,}" if limit < 10 ** 12 else f"{limit:.0e}"
    return [Problem(message=f"{value:.3g} is more than any model has (at most {most}{' ' + what if what else ''})",
                    pointer=pointer, hint="check the value and its unit: the largest published models have under 200 "
                                          "layers, widths and vocabularies under 10^6, a step under 10^22 FLOPs")]


def _exact_numbers(value: Any, pointer: str) -> Any:
    """Numeric strings ("989e12") and integral floats become int; YAML 1.1 reads 989e12 as a string."""
    if isinstance(value, Mapping):
        return {k: _exact_numbers(v, f"{pointer}/{k}") for k, v in value.items()}
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return value
    if isinstance(value, str) and not NUMERIC.match(value):
        return value  # a name (preset, mlp, ...), already checked by the schema
    number = Decimal(value.strip() if isinstance(value, str) else value)
    if number != number.to_integral_value():
        raise ConfigError([Problem(message=f"{value!r} is not a whole number", pointer=pointer)])
    return int(number)


def model_from_flags(**flags: Any) -> dict:
    """CLI flags to a model mapping: None means not given; moe_/mla_/sliding_window_ go to sections.

    Example: model_from_flags(preset="llama-3-8b", moe_top_k=None, sliding_window_window=4096).
    """
    model: dict[str, Any] = {}
    for key, value in flags.items():
        if value is None:
            continue
        section = next((s for s in NESTED if key.startswith(s + "_")), None)
        if section is None:
            model[key] = value
        else:
            model.setdefault(section, {})[key[len(section) + 1:]] = value
    return model
