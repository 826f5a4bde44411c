"""GPU detection and the peak: where the MFU denominator comes from, and why (the catalog is catalog.py).

A wrong peak silently scales every MFU, so this module never guesses: the GPU is
identified from `TARGET_INFO_GPU.name` (variants sharing a name are separated by
memory, bandwidth, SM count and clock), an unknown or ambiguous GPU is an error
that says how to override it, and every peak carries the sentence and the
source that justify it (docs/figures.md §8). Jobs mixing fp8 and bf16 get a
blended peak, the time-weighted harmonic mean by FLOP share (see _catalog_peak).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Collection, Mapping, Sequence


from pipeline.hardware.catalog import PRECISIONS, Catalog, GpuEntry
from pipeline.errors import HardwareError

OVERRIDE_HINT = ("set `hardware.gpu: <catalog name>` (list them with `mfu gpus`) "
                 "or `hardware.peak_tflops` in the job file")
_MIG = re.compile(r"^(?P<base>.+?)\s+MIG\s+(?P<profile>\d+g\.\d+gb)$", re.IGNORECASE)
# Relative tolerance per measurement when a name fits several variants; trace
# values are boost/peak figures, a few percent off the datasheet (H200: 4.92 vs 4.8 TB/s).
_TOLERANCE = {"memory": 0.10, "bandwidth": 0.10, "clock": 0.05}
_UNITS = {"memory": "GiB", "bandwidth": "GB/s", "sm": "SMs", "clock": "MHz"}


@dataclass(frozen=True)
class Detection:
    """Which catalog entry the trace's GPUs are, and the sentence that says why."""

    entry: GpuEntry
    reason: str
    device_ids: tuple[int, ...]
    mig_fraction: float = 1.0
    trace_hbm_gbps: float | None = None
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _RowMatch:
    entry: GpuEntry
    name: str
    why: str
    profile: str | None
    mig_fraction: float
    trace_hbm_gbps: float | None
    warnings: list[str]


def detect(catalog: Catalog, gpus: Sequence[Mapping[str, Any]] | None,
           used_device_ids: Collection[int] | None = None) -> Detection:
    """Identify the GPU type of the devices that ran kernels; refuse rather than guess."""
    if not gpus:
        raise HardwareError("The trace has no TARGET_INFO_GPU table (or it is empty), so the "
                            f"GPU cannot be identified; {OVERRIDE_HINT}")
    rows, ignored, warnings = _used_rows(gpus, used_device_ids)
    # No kernel attributed (occurrences without GPU work): every listed GPU is a candidate, none ran anything.
    idle = used_device_ids is not None and not set(used_device_ids)
    matches = [(row.get("id"), _match_row(catalog, row)) for row in rows]
    kinds = {(m.entry.key, m.profile) for _, m in matches}
    if len(kinds) > 1:
        listing = "; ".join(f"device {i}: {m.name!r} -> {m.entry.key}" for i, m in matches)
        which = "listed GPUs (no kernel was attributed to tell which ran the work)" if idle \
            else "GPUs that ran kernels"
        raise HardwareError(f"The {which} are of different types ({listing}); one "
                            f"peak cannot describe them. Choose the type to report against with "
                            f"`hardware.gpu: <catalog name>` or set `hardware.peak_tflops`")
    first = matches[0][1]
    ids = () if idle else tuple(sorted(i for i, _ in matches if i is not None))
    where = (f" (no kernel was attributed, so all {len(rows)} listed GPU(s) were identified; all are this type)"
             if idle else f" (device{'s' if len(ids) > 1 else ''} {', '.join(map(str, ids))})" if ids else "")
    mig = (f"; it is MIG slice {first.profile} with {first.mig_fraction:.3f} of the card's SMs, "
           f"so the peak is scaled by that share" if first.profile else "")
    skipped = f"; {len(ignored)} listed GPU(s) ran no kernels and were ignored" if ignored else ""
    return Detection(entry=first.entry, reason=first.why + where + mig + skipped, device_ids=ids,
                     mig_fraction=first.mig_fraction, trace_hbm_gbps=first.trace_hbm_gbps,
                     warnings=warnings + [w for _, m in matches for w in m.warnings])


def _used_rows(gpus: Sequence[Mapping[str, Any]], used: Collection[int] | None
               ) -> tuple[list[Mapping[str, Any]], list[Any], list[str]]:
    """Keep the GPUs that ran kernels: a node lists every GPU, used or not."""
    if used is None:
        return list(gpus), [], []
    used = set(used)
    if not used:
        return list(gpus), [], []
    rows = [r for r in gpus if r.get("id") in used]
    if not rows:
        return list(gpus), [], [f"no TARGET_INFO_GPU id matches the kernel deviceIds "
                                f"{sorted(used)}; identified from all listed GPUs"]
    return rows, [r.get("id") for r in gpus if r.get("id") not in used], []


def _match_row(catalog: Catalog, row: Mapping[str, Any]) -> _RowMatch:
    """Name first; measurements only separate variants that share a name."""
    name = " ".join(str(row.get("name") or "").split())
    if not name:
        raise HardwareError(f"TARGET_INFO_GPU row for device {row.get('id')} has no name; "
                            f"{OVERRIDE_HINT}")
    mig = _MIG.match(name)
    base, profile = (mig["base"], mig["profile"]) if mig else (name, None)
    candidates = catalog.matching(base)
    if not candidates:
        raise HardwareError(_unknown_message(catalog, name, row))
    # A MIG slice reports its own memory, bandwidth and SMs; only its clock is the card's.
    measured = _measure(row, only=("clock",) if profile else None)
    entry, why = _pick(candidates, base, measured)
    if not profile:
        misfit = _misfits(entry, measured)
        warnings = [f"{name!r} matched {entry.key} by name, but the trace reports "
                    f"{'; '.join(misfit)}: check the catalog entry or override"] if misfit else []
        bandwidth = row.get("memoryBandwidth")
        return _RowMatch(entry, name, why, None, 1.0,
                         bandwidth / 1e9 if bandwidth else None, warnings)
    fraction, hbm = _mig_share(entry, row, name)
    return _RowMatch(entry, name, why, profile, fraction, hbm, [])


def _measure(row: Mapping[str, Any], only: Sequence[str] | None = None) -> dict[str, float]:
    """TARGET_INFO_GPU columns in catalog units; columns missing in old exports are skipped."""
    raw = {"memory": (row.get("totalMemory"), 2 ** 30), "bandwidth": (row.get("memoryBandwidth"), 1e9),
           "sm": (row.get("smCount"), 1), "clock": (row.get("clockRate"), 1e6)}
    return {k: float(v) / scale for k, (v, scale) in raw.items()
            if v and (only is None or k in only)}


def _misfits(entry: GpuEntry, measured: Mapping[str, float]) -> list[str]:
    """Measurements that disagree with the entry, worded for a message."""
    expected = entry.expected()
    out = []
    for key, value in measured.items():
        want = expected.get(key)
        if want is None:
            continue
        off = value != want if key == "sm" else abs(value - want) / want > _TOLERANCE[key]
        if off:
            out.append(f"{key} {value:g} {_UNITS[key]} vs {want:g} in the catalog")
    return out


def _describe(measured: Mapping[str, float]) -> str:
    return ", ".join(f"{v:.1f} {_UNITS[k]}".replace(".0 ", " ") for k, v in measured.items())


def _pick(candidates: list[GpuEntry], base: str, measured: Mapping[str, float]
          ) -> tuple[GpuEntry, str]:
    """One candidate wins by name alone; several must be separated by the trace's numbers."""
    if len(candidates) == 1:
        entry = candidates[0]
        return entry, f"TARGET_INFO_GPU name {base!r} is listed by catalog entry {entry.key}"
    keys = ", ".join(c.key for c in candidates)
    if not measured:
        raise HardwareError(f"GPU name {base!r} fits several catalog entries ({keys}) and the "
                            f"trace has no memory, bandwidth, SM or clock columns to separate "
                            f"them; set hardware.gpu to one of these keys or hardware.peak_tflops")
    fitting = [c for c in candidates if not _misfits(c, measured)]
    if len(fitting) != 1:
        which = "none" if not fitting else "more than one"
        raise HardwareError(f"GPU name {base!r} fits several catalog entries ({keys}) and the "
                            f"trace's {_describe(measured)} match {which} of them; set "
                            f"hardware.gpu to one of these keys or hardware.peak_tflops")
    entry = fitting[0]
    others = "; ".join(f"not {c.key}: {', '.join(_misfits(c, measured))}"
                       for c in candidates if c is not entry)
    return entry, (f"TARGET_INFO_GPU name {base!r} is shared by {keys}; the trace's "
                   f"{_describe(measured)} fit {entry.key} ({others})")


def _mig_share(entry: GpuEntry, row: Mapping[str, Any], name: str) -> tuple[float, float | None]:
    """A MIG slice gets its SM share of the card's peak and its own reported bandwidth."""
    sms = row.get("smCount")
    if not sms or not entry.sm_count or sms > entry.sm_count:
        raise HardwareError(f"{name!r} is a MIG slice, but its SM count ({sms}) cannot be "
                            f"compared with {entry.key}'s ({entry.sm_count}), so its share of "
                            f"the peak is unknown; set hardware.peak_tflops for the slice")
    bandwidth = row.get("memoryBandwidth")
    return sms / entry.sm_count, bandwidth / 1e9 if bandwidth else None


def _unknown_message(catalog: Catalog, name: str, row: Mapping[str, Any]) -> str:
    chip = f" (chip {row['chipName']}, which never decides alone)" if row.get("chipName") else ""
    close = catalog.close_names(name, n=3)
    near = f" Close catalog names: {', '.join(close)}." if close else ""
    return (f"GPU {name!r}{chip} from the trace is not in the GPU catalog (`mfu gpus`); there is no fallback "
            f"peak.{near} To continue, {OVERRIDE_HINT}.")


@dataclass(frozen=True)
class Peak:
    """The denominator as the report shows it: value, where it came from, and caveats."""

    gpu: str
    key: str | None
    precision: str
    peak_tflops: float
    peak_source: str
    hbm_gbps: float | None
    hbm_source: str
    sparsity: bool
    fp8_fraction: float | None
    blended: bool
    achievable_tflops: float | None
    detection_reason: str
    warnings: tuple[str, ...] = ()
    mig_fraction: float = 1.0
    catalog_note: str | None = None      # the catalog entry's caveats (e.g. which accumulate rate), with its peak

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (tuples become lists)."""
        out = asdict(self)
        out["warnings"] = list(self.warnings)
        return out


@dataclass(frozen=True)
class _Choice:
    entry: GpuEntry | None
    detection: Detection | None
    reason: str
    warnings: list[str]


def resolve_peak(catalog: Catalog, hardware: Mapping[str, Any],
                 gpus: Sequence[Mapping[str, Any]] | None,
                 used_device_ids: Collection[int] | None = None) -> Peak:
    """Job overrides first, then the named or detected entry at the job's precision."""
    precision = hardware.get("precision") or "bf16"
    sparsity = bool(hardware.get("sparsity") or False)
    fraction = hardware.get("fp8_fraction")
    _check_precision(precision, fraction)
    job_peak, job_hbm = hardware.get("peak_tflops"), hardware.get("hbm_gbps")
    gpu = hardware.get("gpu") or "auto"
    choice = _choose(catalog, gpu, gpus, used_device_ids, need_entry=job_peak is None)
    entry, detection = choice.entry, choice.detection
    # the trace's detection, when it is of the entry used: only then do its MIG share and bandwidth apply
    same = detection if detection is not None and entry is not None and detection.entry.key == entry.key else None
    mig = same.mig_fraction if same is not None else 1.0
    if job_peak is not None:
        value, source, blended = float(job_peak), "from job file", False
    else:
        assert entry is not None                 # need_entry: _choose raised rather than return no entry
        value, source, blended = _catalog_peak(catalog, entry, precision, sparsity, fraction)
        if mig < 1.0:
            value *= mig
            source += f"; x {mig:.3f} for the MIG slice's share of SMs"
    if job_hbm is not None:
        hbm, hbm_source = float(job_hbm), "from job file"
    elif same is not None and mig < 1.0 and same.trace_hbm_gbps:
        hbm, hbm_source = same.trace_hbm_gbps, "trace TARGET_INFO_GPU.memoryBandwidth (MIG slice)"
    elif entry is not None:
        hbm, hbm_source = entry.hbm_gbps, _cite(catalog, entry)
    else:
        hbm, hbm_source = None, "unknown: set hardware.hbm_gbps"
    achievable = hardware.get("achievable_tflops")
    warnings = list(choice.warnings)
    if achievable is not None and achievable > value:
        warnings.append(f"achievable_tflops {achievable:g} exceeds the peak {value:g}")
    display = entry.display_name if entry else (gpu if gpu != "auto" else "unknown GPU")
    return Peak(gpu=display, key=entry.key if entry else None, precision=precision,
                peak_tflops=value, peak_source=source, hbm_gbps=hbm, hbm_source=hbm_source,
                sparsity=sparsity, fp8_fraction=fraction, blended=blended,
                achievable_tflops=None if achievable is None else float(achievable),
                detection_reason=choice.reason, warnings=tuple(warnings), mig_fraction=mig,
                catalog_note=entry.note if entry is not None and job_peak is None else None)


def resolve_job_peak(catalog: Catalog, hardware: Mapping[str, Any], files: Sequence[Mapping[str, Any]]) -> Peak:
    """One peak for a job over several trace files: each must resolve to the same GPU and figure.

    `files`: per trace file, its `label`, TARGET_INFO_GPU `gpu_rows` and the `devices` that ran kernels.
    """
    peaks = [_file_peak(catalog, hardware, f) for f in files]
    if len({(p.key, p.peak_tflops) for p in peaks}) > 1:
        seen = "; ".join(f"{f['label']}: {p.gpu} {p.peak_tflops:g} TFLOP/s" for f, p in zip(files, peaks))
        raise HardwareError(f"the trace files ran on different GPUs or peaks ({seen}); one MFU needs one "
                            "denominator: run one job per GPU type, or set hardware.gpu / peak_tflops")
    return replace(peaks[0], detection_reason=_files_reason(files, [p.detection_reason for p in peaks]),
                   warnings=tuple(dict.fromkeys(w for p in peaks for w in p.warnings)))


def _file_peak(catalog: Catalog, hardware: Mapping[str, Any], file: Mapping[str, Any]) -> Peak:
    """One file's peak; when its GPU table lacks a column identification needs (`gpu_lacking`, trace/open.py
    NEEDED_FOR), a failure says that, not that a row has no name."""
    try:
        return resolve_peak(catalog, hardware, file["gpu_rows"], file["devices"])
    except HardwareError as exc:
        if file.get("gpu_lacking"):
            raise HardwareError(f"{file['label']}: the GPU cannot be identified: {file['gpu_lacking']}; or "
                                f"{OVERRIDE_HINT}") from exc
        raise


def _files_reason(files: Sequence[Mapping[str, Any]], reasons: list[str]) -> str:
    """Each file identifies its own GPUs (its device ids, the GPUs it lists unused): say which file says what,
    not file 0's sentence as if it were the job's."""
    if len(files) == 1:
        return reasons[0]
    if len(set(reasons)) == 1:
        return f"in each of the {len(files)} files: {reasons[0]}"
    return "; ".join(f"{f['label']}: {r}" for f, r in zip(files, reasons))


def peak_at(catalog: Catalog, peak: Peak, precision: str) -> float | None:
    """The per-GPU peak the job's GPU has at `precision` (dense unless the job chose sparse); None when
    the GPU is not in the catalog or the precision is unknown. fp64 names run on the tensor cores if any."""
    if peak.key not in catalog.entries:
        return None
    entry = catalog.entries[peak.key]
    table = entry.sparse if peak.sparsity else entry.dense
    value = table.get("fp64_tensor", table.get("fp64")) if precision == "fp64" else table.get(precision)
    return None if value is None else value * peak.mig_fraction


def fp16_accumulate_at(catalog: Catalog, peak: Peak) -> float | None:
    """The dense FP16-accumulate peak of the job's GPU where the catalog gives one above its fp16 figure
    (GeForce: twice); None otherwise, and with sparsity, whose figures the catalog does not pair with it."""
    entry = catalog.entries.get(peak.key) if peak.key else None
    if entry is None or entry.fp16_accumulate is None or peak.sparsity:
        return None
    return entry.fp16_accumulate * peak.mig_fraction


def _check_precision(precision: str, fraction: Any) -> None:
    if precision not in PRECISIONS:
        raise HardwareError(f"precision {precision!r} is not one of {', '.join(PRECISIONS)}", "/hardware/precision")
    if fraction is None:
        return
    if precision != "fp8":
        raise HardwareError(f"fp8_fraction applies to precision fp8 only (job says {precision})", "/hardware/fp8_fraction")
    if not isinstance(fraction, (int, float)) or not 0.0 <= fraction <= 1.0:
        raise HardwareError(f"fp8_fraction must be a share between 0 and 1, got {fraction!r}", "/hardware/fp8_fraction")


def _choose(catalog: Catalog, gpu: str, gpus: Sequence[Mapping[str, Any]] | None,
            used: Collection[int] | None, need_entry: bool) -> _Choice:
    """An explicit GPU wins over the trace (a mismatch warns); auto needs detection to succeed."""
    if gpu == "auto":
        try:
            found = detect(catalog, gpus, used)
        except HardwareError as exc:
            if need_entry:
                raise
            return _Choice(None, None, f"GPU not identified from the trace ({exc})", [])
        return _Choice(found.entry, found, found.reason, list(found.warnings))
    try:
        entry = catalog.lookup(gpu)
    except HardwareError:
        if need_entry:
            raise
        return _Choice(None, None, f"hardware.gpu: {gpu} in the job file (not in the catalog)", [])
    reason = f"hardware.gpu: {gpu} in the job file selects {entry.key}"
    if not gpus:
        return _Choice(entry, None, reason, [])
    try:
        found = detect(catalog, gpus, used)
    except HardwareError as exc:
        return _Choice(entry, None, reason, [f"trace GPU not identified, using the job's choice: {exc}"])
    if found.entry.key != entry.key:
        return _Choice(entry, found, reason, [f"job names {entry.key} but the trace shows "
                                              f"{found.entry.key}: {found.reason}"])
    return _Choice(entry, found, f"{reason}; the trace agrees: {found.reason}", list(found.warnings))


def _cite(catalog: Catalog, entry: GpuEntry) -> str:
    return f"{catalog.label}: {entry.key} ({entry.source_title}, {entry.source_url})"


def _catalog_peak(catalog: Catalog, entry: GpuEntry, precision: str, sparsity: bool,
                  fraction: float | None) -> tuple[float, str, bool]:
    """Dense peak (sparse only on request), fp8 optionally blended with bf16 by FLOP share.

    Blend: if a share f of the FLOPs runs at P_fp8 and the rest at P_bf16, the ideal time
    per FLOP is f/P_fp8 + (1-f)/P_bf16, so the peak is the time-weighted harmonic mean
    1 / (f/P_fp8 + (1-f)/P_bf16), never the arithmetic mean (which overstates it).
    """
    kind = "sparse" if sparsity else "dense"
    table = entry.sparse if sparsity else entry.dense
    value = _figure(entry, table, precision, kind)
    source = _cite(catalog, entry) + ("; sparse figure (sparsity: true)" if sparsity else "")
    if fraction is None or fraction >= 1.0:
        return value, source, False
    bf16 = _figure(entry, table, "bf16", kind)
    blended = 1.0 / (fraction / value + (1.0 - fraction) / bf16)
    return blended, (f"{source}; blended {fraction:.0%} fp8 at {value:g} with "
                     f"{1 - fraction:.0%} bf16 at {bf16:g} (harmonic, by FLOP share)"), True


def _figure(entry: GpuEntry, table: Mapping[str, float], precision: str, kind: str) -> float:
    if precision in table:
        return table[precision]
    has = ", ".join(table) or "none"
    raise HardwareError(f"{entry.key} ({entry.display_name}) has no {kind} {precision} peak in "
                        f"the catalog; it has: {has}. Choose one of those precisions or set "
                        f"hardware.peak_tflops", "/hardware/precision")
