"""The GPU catalog (configs/hardware.yaml): product variants, their dense peaks and sources.

Loading validates the file against schemas/hardware.schema.json and refuses sparse
figures that are not paired with a smaller dense one, so a mislabelled datasheet number
cannot reach an MFU denominator. Detection and peak choice live in hardware/detect.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

from pipeline.bundled import citation, config_path
from pipeline.errors import ConfigError, HardwareError, Problem
from pipeline.job.documents import locate, read_config

DEFAULT_CATALOG = config_path("hardware.yaml")
PRECISIONS = ("fp64", "fp64_tensor", "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4")   # hardware.precision's


@dataclass(frozen=True)
class GpuEntry:
    """One catalog entry: a product variant with its dense (and printed sparse) peaks."""

    key: str
    display_name: str
    vendor: str
    names: tuple[str, ...]
    dense: Mapping[str, float]
    sparse: Mapping[str, float]
    fp16_accumulate: float | None
    hbm_gbps: float
    memory_gb: float
    sm_count: int | None
    cu_count: int | None
    boost_clock_mhz: float | None
    source_title: str
    source_url: str
    note: str | None

    def expected(self) -> dict[str, float]:
        """Catalog values comparable with TARGET_INFO_GPU columns (same units as _measure)."""
        values = {"memory": self.memory_gb, "bandwidth": self.hbm_gbps,
                  "sm": self.sm_count, "clock": self.boost_clock_mhz}
        return {k: float(v) for k, v in values.items() if v is not None}


def _norm(name: str) -> str:
    return " ".join(name.split()).casefold()


def _letters_digits(name: str) -> str:
    """'NVIDIA H100-SXM5 80GB' -> 'nvidiah100sxm580gb': a name as typed, without its separators."""
    return re.sub(r"[^0-9a-z]", "", name.casefold())


@dataclass
class Catalog:
    """Entries by key, plus a case-insensitive index of keys and name strings."""

    entries: dict[str, GpuEntry]
    label: str = "configs/hardware.yaml"        # as a report cites it (bundled.citation)
    _index: dict[str, list[str]] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        for entry in self.entries.values():
            for alias in {entry.key, entry.display_name, *entry.names}:
                keys = self._index.setdefault(_norm(alias), [])
                if entry.key not in keys:
                    keys.append(entry.key)

    def matching(self, name: str) -> list[GpuEntry]:
        """Every entry a key or name string refers to (several when variants share a name)."""
        return [self.entries[k] for k in self._index.get(_norm(name), [])]

    def close_names(self, name: str, n: int = 5) -> list[str]:
        """Catalog keys resembling `name`, for error messages: first the entries one of whose names holds
        it (letters and digits only, in catalog order), then those spelled alike. Spelling alone put 'a10'
        and 'b100' before any A100 for `gpu: A100`, and no V100 at all for `gpu: v100`."""
        typed = _letters_digits(name)
        holding = [e.key for e in self.entries.values() if len(typed) >= 2
                   and any(typed in _letters_digits(a) for a in (e.key, e.display_name, *e.names))]
        import difflib                      # a name not in the catalog only: 2 ms of every run's start-up else
        alike = difflib.get_close_matches(_norm(name), list(self._index), n=len(self._index), cutoff=0.5)
        return list(dict.fromkeys(holding + [k for alias in alike for k in self._index[alias]]))[:n]

    def lookup(self, name: str) -> GpuEntry:
        """The one entry a job's `hardware.gpu` names; an error lists close names otherwise."""
        found = self.matching(name)
        if len(found) == 1:
            return found[0]
        if found:
            keys = ", ".join(e.key for e in found)
            raise HardwareError(f"GPU name {name!r} fits several catalog entries ({keys}); "
                                f"set hardware.gpu to one of these keys")
        close = self.close_names(name)
        hint = f"; close names: {', '.join(close)}" if close else ""
        raise HardwareError(f"GPU {name!r} is not in the GPU catalog{hint}. Use a key from `mfu gpus`, or set "
                            f"hardware.peak_tflops to the GPU's dense TFLOP/s at the job's precision")


def load_catalog(path: Path | None = None) -> Catalog:
    """Read and validate the catalog; every problem is reported with its entry's pointer.

    Parsed once per process and path: a batch of jobs must not re-read it per job.
    """
    return _load_catalog(Path(path) if path else DEFAULT_CATALOG)


@lru_cache(maxsize=8)
def _load_catalog(path: Path) -> Catalog:
    """Read like a job file (job/parsing.py: positions, duplicate keys, 989e12 as a number), then the schema."""
    data, positions, label = read_config(path, "hardware.schema.json", "catalog")
    problems = [locate(p, positions) for p in _sparse_problems(data["gpus"], label)]
    if problems:
        raise ConfigError(problems)
    return Catalog({key: _entry(key, raw) for key, raw in data["gpus"].items()}, citation(path))


def _sparse_problems(gpus: Mapping[str, Any], label: str) -> list[Problem]:
    """Sparse figures must sit beside a dense one and exceed it, or they were mislabelled."""
    problems = []
    for key, raw in gpus.items():
        for prec, value in raw.get("sparse_tflops", {}).items():
            dense = raw["dense_tflops"].get(prec)
            if dense is None or value <= dense:
                problems.append(Problem(
                    f"sparse {prec} {value} needs a smaller dense {prec} figure beside it "
                    f"(dense is {dense})", pointer=f"/gpus/{key}/sparse_tflops/{prec}", file=label,
                    hint="store the dense figure in dense_tflops; sparse is the vendor's 2:4 number"))
    return problems


def _entry(key: str, raw: Mapping[str, Any]) -> GpuEntry:
    return GpuEntry(
        key=key, display_name=raw["display_name"], vendor=raw["vendor"], names=tuple(raw["names"]),
        dense={k: float(v) for k, v in raw["dense_tflops"].items()},
        sparse={k: float(v) for k, v in raw.get("sparse_tflops", {}).items()},
        fp16_accumulate=None if "fp16_accumulate_tflops" not in raw else float(raw["fp16_accumulate_tflops"]),
        hbm_gbps=float(raw["hbm_gbps"]), memory_gb=float(raw["memory_gb"]),
        sm_count=raw.get("sm_count"), cu_count=raw.get("cu_count"),
        boost_clock_mhz=raw.get("boost_clock_mhz"), source_title=raw["source"]["title"],
        source_url=raw["source"]["url"], note=raw.get("note"))


def catalog_rows(catalog: Catalog) -> list[dict[str, Any]]:
    """One flat row per entry for `mfu gpus` (table or JSON): a dense peak for every precision a job may
    declare (missing: None), fp32 and int8 too, since a job declaring them is measured against them."""
    return [{"key": e.key, "name": e.display_name,
             **{f"{p}_tflops": e.dense.get(p) for p in PRECISIONS},
             "hbm_gbps": e.hbm_gbps, "memory_gb": e.memory_gb,
             "source": e.source_title, "source_url": e.source_url}
            for e in catalog.entries.values()]
