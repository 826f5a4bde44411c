"""Hardware catalog and GPU detection.

Expected figures are typed from vendor datasheets/whitepapers, not captured
from the module's output: a test fails if the catalog or the logic drifts.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from pipeline.errors import ConfigError, ExitCode, HardwareError
from pipeline.bundled import schema_path
from pipeline.hardware.catalog import DEFAULT_CATALOG, catalog_rows, load_catalog
from pipeline.hardware.detect import detect, peak_at, resolve_job_peak, resolve_peak

ROOT = Path(__file__).resolve().parents[1]
GPU_COLUMNS = ("id", "name", "chipName", "totalMemory", "memoryBandwidth", "smCount", "clockRate")


def _traces_dir() -> Path | None:
    configured = os.environ.get("MFU_TRACES_DIR")
    path = Path(configured) if configured else ROOT.parent / "shared" / "traces"
    return path if path.is_dir() else None


TRACES = _traces_dir()
needs_traces = pytest.mark.skipif(
    TRACES is None, reason="real traces absent: set MFU_TRACES_DIR or provide ../shared/traces")


def read_gpus(path: Path) -> tuple[list[dict] | None, set[int] | None]:
    """TARGET_INFO_GPU rows (missing columns as None) and the deviceIds that ran kernels."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        rows = None
        if "TARGET_INFO_GPU" in tables:
            cur = con.execute("SELECT * FROM TARGET_INFO_GPU")
            cols = [d[0] for d in cur.description]
            rows = [{c: dict(zip(cols, r)).get(c) for c in GPU_COLUMNS} for r in cur]
        used = None
        if "CUPTI_ACTIVITY_KIND_KERNEL" in tables:
            used = {r[0] for r in con.execute(
                "SELECT DISTINCT deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL")}
        return rows, used
    finally:
        con.close()


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def hw(**kw):
    """A job file's hardware section with the defaults the config layer applies."""
    base = {"gpu": "auto", "num_gpus": 1, "precision": "bf16", "peak_tflops": None,
            "hbm_gbps": None, "sparsity": False, "fp8_fraction": None, "achievable_tflops": None}
    base.update(kw)
    return base


def row(id=0, name="NVIDIA H100 80GB HBM3", chip="GH100", mem=None, bw=None, sm=None, clock=None):
    return {"id": id, "name": name, "chipName": chip, "totalMemory": mem,
            "memoryBandwidth": bw, "smCount": sm, "clockRate": clock}


H100_ROW = row(mem=84942979072, bw=3352320000000, sm=132, clock=1980000000)
A100_80_ROW = row(id=1, name="NVIDIA A100-SXM4-80GB", chip="GA100", mem=84990623744,
                  bw=2039040000000, sm=108, clock=1410000000)

# ------------------------------------------------------------------ real traces

# trace file -> (catalog key, datasheet memory bandwidth GB/s)
EXPECTED = {
    "NVIDIA__Fuser__8fa9ec29_report1.sqlite": ("h100-sxm", 3350),
    "NVIDIA__Fuser__a0498920_report1.sqlite": ("h200-sxm", 4800),
    "hpcgroup__pipit__saxpy-mpi-cuda_nsys_perlmutter0.sqlite": ("a100-sxm4-40gb", 1555),
    "hpcgroup__pipit__perlmutter-cloverleaf-cuda.sqlite": ("a100-sxm4-80gb", 2039),
    "mamedov-artem-rafaelevich__parallel_course_2__report4.sqlite": ("v100-sxm2-32gb", 900),
    "LeiWang1999__memfusion_artifact__report1.sqlite": ("rtx-3090", 936),
    "cestwc__balinski-and-gomory-cuda__report19.sqlite": ("rtx-3090", 936),
    "MohanadOdema__DLProf__nsys_profile.sqlite": ("rtx-2070-super", 448),
    "bwyogatama__Mordred-Deprecated__03527a5d_report1.sqlite": ("quadro-rtx-6000", 672),
    "amir-ghz__DynamicViT__nsys_profile.sqlite": ("rtx-a2000-12gb", 288),
    "YoonKyonghwan__EfficientCenterFormer__baseline.sqlite": ("titan-rtx", 672),
    "nsysai__mock.sqlite": ("rtx-3080", 760),
    "nsysai__healthy_1pct.sqlite": ("h100-sxm", 3350),
    "jsun-012__assignment2-systems__43119569_result.sqlite": ("rtx-3070-ti", 608),
    "lizhieffe__assignment2-systems__2f6fc30e_ddp53_profile.sqlite": ("rtx-3090", 936),
    "zx3xyy__assignment2-systems__9359e384_result_2_7B_compile_ro.sqlite": ("a100-sxm4-80gb", 2039),
}
NO_GPU_TABLE = ["StellaWava__benchmarking-n-profiling-__report1.sqlite",
                "nsysai__mfu_2gpu_before.sqlite", "nsysai__h100_2gpu_1s.sqlite"]


@needs_traces
def test_every_trace_with_a_gpu_table_is_covered():
    with_table = {p.name for p in TRACES.glob("*.sqlite") if read_gpus(p)[0] is not None}
    assert with_table, "no trace with TARGET_INFO_GPU found"
    assert with_table <= set(EXPECTED), f"new traces need expectations: {with_table - set(EXPECTED)}"


@needs_traces
@pytest.mark.parametrize("trace", sorted(EXPECTED))
def test_detects_gpu_in_real_trace(catalog, trace):
    path = TRACES / trace
    if not path.exists():
        pytest.skip(f"{trace} not in {TRACES}")
    key, hbm = EXPECTED[trace]
    rows, used = read_gpus(path)
    found = detect(catalog, rows, used)
    assert found.entry.key == key
    assert found.entry.hbm_gbps == hbm
    assert found.mig_fraction == 1.0
    assert trace_name_in(found.reason, rows)


def trace_name_in(reason: str, rows: list[dict]) -> bool:
    return any(r["name"] in reason for r in rows)


@needs_traces
def test_h200_gets_h200_bandwidth_not_h100(catalog):
    rows, used = read_gpus(TRACES / "NVIDIA__Fuser__a0498920_report1.sqlite")
    peak = resolve_peak(catalog, hw(), rows, used)
    assert (peak.key, peak.peak_tflops, peak.hbm_gbps) == ("h200-sxm", 989.4, 4800)
    assert "h200-nvl" in peak.detection_reason  # says why not the NVL variant
    found = detect(catalog, rows, used)
    assert found.trace_hbm_gbps == pytest.approx(4916.736)


@needs_traces
def test_cloverleaf_ignores_listed_but_unused_gpus(catalog):
    rows, used = read_gpus(TRACES / "hpcgroup__pipit__perlmutter-cloverleaf-cuda.sqlite")
    assert len(rows) == 4 and used == {0}
    found = detect(catalog, rows, used)
    assert found.device_ids == (0,)
    assert "3 listed GPU(s) ran no kernels" in found.reason


@needs_traces
@pytest.mark.parametrize("trace", NO_GPU_TABLE)
def test_trace_without_gpu_table_needs_override(catalog, trace):
    path = TRACES / trace
    if not path.exists():
        pytest.skip(f"{trace} not in {TRACES}")
    rows, used = read_gpus(path)
    assert rows is None
    with pytest.raises(HardwareError) as err:
        resolve_peak(catalog, hw(), rows, used)
    assert "TARGET_INFO_GPU" in str(err.value)
    assert "hardware.gpu" in str(err.value) and "hardware.peak_tflops" in str(err.value)
    assert err.value.code == ExitCode.CONFIG
    peak = resolve_peak(catalog, hw(gpu="h100-sxm"), rows, used)
    assert (peak.peak_tflops, peak.hbm_gbps) == (989.4, 3350)


# ------------------------------------------------------------------ synthetic rows

def test_plain_h200_with_nvl_clock_is_nvl(catalog):
    nvl = row(name="NVIDIA H200", mem=150121545728, bw=4.8e12, sm=132, clock=1785000000)
    peak = resolve_peak(catalog, hw(), [nvl])
    assert (peak.key, peak.peak_tflops, peak.hbm_gbps) == ("h200-nvl", 835.5, 4800)


def test_h200_nvl_by_own_name(catalog):
    assert detect(catalog, [row(name="NVIDIA H200 NVL")]).entry.key == "h200-nvl"


def test_plain_h200_without_measurements_is_ambiguous(catalog):
    with pytest.raises(HardwareError, match="h200-sxm.*h200-nvl|h200-nvl.*h200-sxm"):
        detect(catalog, [row(name="NVIDIA H200")])


def test_h100_nvl(catalog):
    peak = resolve_peak(catalog, hw(), [row(name="NVIDIA H100 NVL")])
    assert (peak.key, peak.peak_tflops, peak.hbm_gbps) == ("h100-nvl", 835.5, 3900)


def test_gh200_is_not_h100_despite_chip(catalog):
    gh = row(name="NVIDIA GH200 480GB", mem=102005473280, bw=4.0e12, sm=132, clock=1980000000)
    peak = resolve_peak(catalog, hw(), [gh])
    assert (peak.key, peak.peak_tflops, peak.hbm_gbps) == ("gh200-96gb", 989.4, 4000)


def test_b200(catalog):
    b200 = row(name="NVIDIA B200", chip="GB100", mem=191_500_000_000, bw=7.7e12, sm=148)
    assert resolve_peak(catalog, hw(), [b200]).peak_tflops == 2250
    assert resolve_peak(catalog, hw(precision="fp8"), [b200]).peak_tflops == 4500
    assert resolve_peak(catalog, hw(), [b200]).hbm_gbps == 7700


def test_mig_slice_scales_peak_by_sm_share(catalog):
    mig = row(name="NVIDIA A100-SXM4-40GB MIG 3g.20gb", chip="GA100", mem=20937965568,
              bw=777.6e9, sm=42, clock=1410000000)
    peak = resolve_peak(catalog, hw(), [mig])
    assert peak.key == "a100-sxm4-40gb"
    assert peak.peak_tflops == pytest.approx(312 * 42 / 108)
    assert peak.mig_fraction == pytest.approx(42 / 108)
    assert peak.hbm_gbps == pytest.approx(777.6)
    assert "MIG" in peak.hbm_source and "MIG" in peak.detection_reason


def test_h100_mig_1g(catalog):
    mig = row(name="NVIDIA H100 80GB HBM3 MIG 1g.10gb", mem=10_200_000_000, bw=0.42e12, sm=16,
              clock=1980000000)
    assert resolve_peak(catalog, hw(), [mig]).peak_tflops == pytest.approx(989.4 * 16 / 132)


def test_mig_without_sm_count_refuses(catalog):
    with pytest.raises(HardwareError, match="MIG"):
        detect(catalog, [row(name="NVIDIA A100-SXM4-40GB MIG 3g.20gb")])
    with pytest.raises(HardwareError, match="SM count \\(200\\) cannot be compared"):   # more SMs than the card
        detect(catalog, [row(name="NVIDIA A100-SXM4-40GB MIG 3g.20gb", sm=200)])


def test_mig_slice_of_a_shared_name_is_told_apart_by_clock(catalog):
    """'NVIDIA H200' names SXM and NVL; a slice reports its own memory and bandwidth (18 GiB, 0.6 TB/s fit
    neither card), so only the card's clock (1980 MHz: SXM) separates them."""
    mig = row(name="NVIDIA H200 MIG 1g.18gb", mem=18 * 2**30, bw=0.6e12, sm=16, clock=1980000000)
    peak = resolve_peak(catalog, hw(), [mig])
    assert peak.key == "h200-sxm" and peak.peak_tflops == pytest.approx(989.4 * 16 / 132)


def test_unknown_gpu_is_an_error_naming_it_and_the_override(catalog):
    odd = row(name="NVIDIA Quantum X9000", chip="GQ999", mem=1, bw=1, sm=1, clock=1)
    with pytest.raises(HardwareError) as err:
        resolve_peak(catalog, hw(), [odd])
    text = str(err.value)
    assert "NVIDIA Quantum X9000" in text
    assert "hardware.gpu: <catalog name>" in text and "hardware.peak_tflops" in text


def test_unknown_gpu_with_job_peak_is_fine(catalog):
    peak = resolve_peak(catalog, hw(peak_tflops=123.0), [row(name="NVIDIA Quantum X9000")])
    assert (peak.peak_tflops, peak.peak_source, peak.key) == (123.0, "from job file", None)
    assert peak.hbm_gbps is None


def test_mixed_gpu_types_among_used_devices_is_an_error(catalog):
    with pytest.raises(HardwareError) as err:
        detect(catalog, [H100_ROW, A100_80_ROW], used_device_ids={0, 1})
    assert "NVIDIA H100 80GB HBM3" in str(err.value) and "NVIDIA A100-SXM4-80GB" in str(err.value)
    assert "hardware.gpu" in str(err.value)


def test_unused_other_gpu_is_ignored(catalog):
    found = detect(catalog, [H100_ROW, A100_80_ROW], used_device_ids={0})
    assert (found.entry.key, found.device_ids) == ("h100-sxm", (0,))


def test_no_attributed_kernel_claims_no_device(catalog):
    """Occurrences without GPU work: the type still comes from the listed GPUs, but no device ran anything,
    so nothing may say kernels ran on the 8 listed GPUs (nor that no id matches the deviceIds [])."""
    eight = [{**H100_ROW, "id": i} for i in range(8)]
    found = detect(catalog, eight, used_device_ids=set())
    assert (found.entry.key, found.device_ids, found.warnings) == ("h100-sxm", (), [])
    assert "no kernel was attributed, so all 8 listed GPU(s) were identified" in found.reason
    peak = resolve_peak(catalog, hw(num_gpus=1), eight, set())
    assert peak.warnings == ()
    with pytest.raises(HardwareError) as err:
        detect(catalog, [H100_ROW, A100_80_ROW], used_device_ids=set())
    assert "The listed GPUs (no kernel was attributed to tell which ran the work) are of different types" \
        in str(err.value)


def test_mixed_gpus_resolved_by_explicit_choice(catalog):
    peak = resolve_peak(catalog, hw(gpu="a100-sxm4-80gb"), [H100_ROW, A100_80_ROW], {0, 1})
    assert peak.peak_tflops == 312 and peak.warnings


def test_explicit_gpu_wins_over_trace_with_warning(catalog):
    peak = resolve_peak(catalog, hw(gpu="NVIDIA A100-SXM4-80GB"), [H100_ROW])
    assert (peak.key, peak.peak_tflops, peak.hbm_gbps) == ("a100-sxm4-80gb", 312, 2039)
    assert any("h100-sxm" in w for w in peak.warnings)


def test_name_match_with_odd_measurements_warns(catalog):
    odd = row(bw=2.0e12, mem=84942979072, sm=132, clock=1980000000)
    found = detect(catalog, [odd])
    assert found.entry.key == "h100-sxm" and any("bandwidth" in w for w in found.warnings)


@pytest.mark.parametrize("changed, words", [
    ({"bw": 2.68e12}, "bandwidth 2680 GB/s vs 3350"),          # 20 % below the datasheet: beyond 10 %
    ({"mem": 40 * 2**30}, "memory 40 GiB vs 80"),              # GiB, as the catalog's 80 (84.9e9 bytes ~ 79.1 GiB)
    ({"sm": 131}, "sm 131 SMs vs 132"),                        # an SM count is exact: one off is another part
    ({"clock": 1850e6}, "clock 1850 MHz vs 1980"),             # 6.6 % below: beyond 5 %
])
def test_each_measurement_has_its_tolerance(catalog, changed, words):
    """A name match still says which measurement disagrees, each against its own tolerance (memory and
    bandwidth 10 %, clock 5 %, SMs exact); within them nothing is said."""
    h100 = dict(mem=84942979072, bw=3352320000000, sm=132, clock=1980000000)
    (warning,) = detect(catalog, [row(**{**h100, **changed})]).warnings
    assert words in warning and warning.count(" vs ") == 1
    near = dict(mem=int(84942979072 * 1.09), bw=3.35e12 * 0.91, sm=132, clock=1980e6 * 0.96)
    assert detect(catalog, [row(**near)]).warnings == []


# ------------------------------------------------------------------ precision, sparsity, overrides

def test_dense_unless_sparsity_requested(catalog):
    dense = resolve_peak(catalog, hw(), [H100_ROW])
    assert dense.peak_tflops == 989.4 and not dense.sparsity
    assert dense.peak_source.startswith("configs/hardware.yaml: h100-sxm (")
    sparse = resolve_peak(catalog, hw(sparsity=True), [H100_ROW])
    assert sparse.peak_tflops == 1978.9 and sparse.sparsity and "sparse" in sparse.peak_source


def test_sparsity_on_card_without_sparse_figures_refuses(catalog):
    with pytest.raises(HardwareError, match="sparse"):
        resolve_peak(catalog, hw(gpu="v100-sxm2-32gb", precision="fp16", sparsity=True), None)


def test_fp8_blend_is_time_weighted_harmonic(catalog):
    half = resolve_peak(catalog, hw(precision="fp8", fp8_fraction=0.5), [H100_ROW])
    # 1 / (0.5/1978.9 + 0.5/989.4) = 1319.2, below the arithmetic mean 1484.2
    assert half.peak_tflops == pytest.approx(1319.2, abs=0.1)
    assert half.blended and half.fp8_fraction == 0.5 and "blended" in half.peak_source
    mostly = resolve_peak(catalog, hw(precision="fp8", fp8_fraction=0.8), [H100_ROW])
    assert mostly.peak_tflops == pytest.approx(1649.1, abs=0.1)
    pure = resolve_peak(catalog, hw(precision="fp8"), [H100_ROW])
    assert (pure.peak_tflops, pure.blended) == (1978.9, False)
    every = resolve_peak(catalog, hw(precision="fp8", fp8_fraction=1.0), [H100_ROW])   # all fp8: no blend
    assert (every.peak_tflops, every.blended) == (1978.9, False)
    none = resolve_peak(catalog, hw(precision="fp8", fp8_fraction=0.0), [H100_ROW])    # all bf16: 1 / (1/989.4)
    assert none.peak_tflops == pytest.approx(989.4) and none.blended


def test_fp8_fraction_only_with_fp8(catalog):
    with pytest.raises(HardwareError, match="fp8_fraction"):
        resolve_peak(catalog, hw(fp8_fraction=0.5), [H100_ROW])
    with pytest.raises(HardwareError, match="between 0 and 1"):
        resolve_peak(catalog, hw(precision="fp8", fp8_fraction=1.5), [H100_ROW])


def test_tf32_and_fp32_are_distinct(catalog):
    a100 = [A100_80_ROW]
    assert resolve_peak(catalog, hw(precision="tf32"), a100).peak_tflops == 156
    assert resolve_peak(catalog, hw(precision="fp32"), a100).peak_tflops == 19.5


def test_missing_precision_names_what_exists(catalog):
    with pytest.raises(HardwareError) as err:
        resolve_peak(catalog, hw(gpu="v100-sxm2-32gb"), None)
    assert "bf16" in str(err.value) and "fp64, fp32, fp16" in str(err.value)
    with pytest.raises(HardwareError, match="fp8"):
        resolve_peak(catalog, hw(precision="fp8", gpu="a100-sxm4-80gb"), None)


def test_job_overrides_win(catalog):
    peak = resolve_peak(catalog, hw(peak_tflops=500.0, hbm_gbps=1000.0,
                                    achievable_tflops=400.0), [H100_ROW])
    assert (peak.peak_tflops, peak.peak_source) == (500.0, "from job file")
    assert (peak.hbm_gbps, peak.hbm_source) == (1000.0, "from job file")
    assert peak.achievable_tflops == 400.0 and peak.key == "h100-sxm"
    assert json.loads(json.dumps(peak.to_dict()))["peak_source"] == "from job file"


def test_achievable_passes_through_and_is_checked(catalog):
    peak = resolve_peak(catalog, hw(achievable_tflops=700), [H100_ROW])
    assert (peak.peak_tflops, peak.achievable_tflops) == (989.4, 700)
    high = resolve_peak(catalog, hw(achievable_tflops=1200), [H100_ROW])
    assert any("exceeds" in w for w in high.warnings)


# ------------------------------------------------------------------ catalog content

@pytest.mark.parametrize("key,bf16,hbm", [
    ("h100-sxm", 989.4, 3350), ("h200-sxm", 989.4, 4800), ("h100-pcie", 756.5, 2000),
    ("h100-nvl", 835.5, 3900), ("h200-nvl", 835.5, 4800), ("a100-sxm4-40gb", 312, 1555),
    ("a100-sxm4-80gb", 312, 2039), ("l40s", 362.05, 864), ("b200", 2250, 7700),
    ("mi300x", 1307.4, 5300), ("gh200-96gb", 989.4, 4000), ("gb200", 2500, 8000),
])
def test_known_datasheet_values(catalog, key, bf16, hbm):
    entry = catalog.entries[key]
    assert (entry.dense["bf16"], entry.hbm_gbps) == (bf16, hbm)


REQUIRED_KEYS = """v100-sxm2-16gb v100-sxm2-32gb v100-pcie-16gb v100-pcie-32gb a100-sxm4-40gb
a100-sxm4-80gb a100-pcie-40gb a100-pcie-80gb a10 a10g l4 l40 l40s rtx-3080 rtx-3090 rtx-4090
rtx-6000-ada h100-sxm h100-pcie h100-nvl h200-sxm h200-nvl gh200-96gb b100 b200 gb200 b300 gb300
mi250x-gcd mi300x mi325x mi355x rtx-2070-super quadro-rtx-6000 rtx-a2000 titan-rtx""".split()


def test_catalog_has_required_entries_with_sources(catalog):
    assert set(REQUIRED_KEYS) <= set(catalog.entries)
    for entry in catalog.entries.values():
        assert entry.source_url.startswith("https://") and entry.source_title
        if entry.sparse:
            assert entry.note, entry.key


@pytest.mark.parametrize(("name", "key"), [
    ("NVIDIA H100 80GB HBM3", "h100-sxm"),            # HBM3 is the SXM5 board; the PCIe card has HBM2e
    ("NVIDIA A100-SXM4-40GB", "a100-sxm4-40gb"), ("Tesla V100-SXM2-32GB", "v100-sxm2-32gb"),
    ("NVIDIA GeForce RTX 3090", "rtx-3090"), ("NVIDIA GeForce RTX 2070 SUPER", "rtx-2070-super"),
    ("Quadro RTX 6000", "quadro-rtx-6000"), ("NVIDIA RTX A2000", "rtx-a2000"), ("NVIDIA TITAN RTX", "titan-rtx"),
    ("nvidia h100 80gb hbm3", "h100-sxm"), ("h100-sxm", "h100-sxm")])
def test_lookup_by_name_or_key(catalog, name, key):
    assert catalog.lookup(name).key == key


def test_lookup_errors(catalog):
    with pytest.raises(HardwareError, match="close names"):
        catalog.lookup("NVIDIA H100 80GB")
    with pytest.raises(HardwareError, match="h200-nvl"):
        catalog.lookup("NVIDIA H200")


@pytest.mark.parametrize(("typed", "first"), [
    ("A100", {"a100-sxm4-40gb", "a100-sxm4-80gb", "a100-pcie-40gb", "a100-pcie-80gb"}),
    ("v100", {"v100-sxm2-16gb", "v100-sxm2-32gb", "v100-pcie-16gb", "v100-pcie-32gb"}),
    ("h100", {"h100-sxm", "h100-pcie", "h100-nvl"}),
    ("4090", {"rtx-4090"})])
def test_a_gpu_typed_by_its_short_name_is_pointed_at_its_entries_first(catalog, typed, first):
    """`gpu: A100` is the commonest way to name a GPU. Spelling alone suggested 'a10, b100, a10g, nvidia b100,
    h100-sxm' (no A100 at all), and for 'v100' no V100: the entries whose names hold what was typed come
    first, as keys a job file can use."""
    with pytest.raises(HardwareError) as err:
        catalog.lookup(typed)
    close = str(err.value).split("; close names: ", 1)[1].split(". Use a key", 1)[0].split(", ")
    assert set(close[:len(first)]) == first
    assert all(name in catalog.entries for name in close)


def test_a_gpu_outside_the_catalog_is_said_in_words_true_for_a_wheel(catalog):
    """The catalog is built in: an installed wheel has it only inside the package, not as configs/hardware.yaml.
    A GPU outside it points to `mfu gpus` and to the job's own peak, not to an entry added to the catalog file (in
    a wheel that is editing the installed package, lost at the next upgrade); the message also lands in status
    records and, as a warning, in reports, so it names no path."""
    with pytest.raises(HardwareError) as err:
        catalog.lookup("Acme X1")
    assert str(err.value) == ("GPU 'Acme X1' is not in the GPU catalog. Use a key from `mfu gpus`, or set "
                              "hardware.peak_tflops to the GPU's dense TFLOP/s at the job's precision")
    with pytest.raises(HardwareError) as err:
        detect(catalog, [row(name="Acme X1", chip="AX1")])
    assert str(err.value) == ("GPU 'Acme X1' (chip AX1, which never decides alone) from the trace is not in the GPU "
                              "catalog (`mfu gpus`); there is no fallback peak. To continue, set `hardware.gpu: "
                              "<catalog name>` (list them with `mfu gpus`) or `hardware.peak_tflops` in the job file.")


def test_catalog_rows(catalog):
    rows = {r["key"]: r for r in catalog_rows(catalog)}
    assert rows["h100-sxm"]["bf16_tflops"] == 989.4 and rows["h100-sxm"]["fp8_tflops"] == 1978.9
    assert rows["v100-sxm2-32gb"]["bf16_tflops"] is None
    assert rows["mi300x"]["hbm_gbps"] == 5300 and rows["mi300x"]["memory_gb"] == 192
    json.dumps(list(rows.values()))


# ------------------------------------------------------------------ catalog validation

def broken_copy(tmp_path: Path, old: str, new: str) -> Path:
    text = DEFAULT_CATALOG.read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "hardware.yaml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


def test_flops_figure_in_a_tflops_field_is_refused_at_its_line(tmp_path):
    """362.05e12 is read as a number (as in job files), and as FLOP/s it is far above any TFLOP/s peak."""
    path = broken_copy(tmp_path, "{fp32: 91.6, tf32: 183, bf16: 362.05,",
                       "{fp32: 91.6, tf32: 183, bf16: 362.05e12,")
    with pytest.raises(ConfigError) as err:
        load_catalog(path)
    (p,) = err.value.problems
    assert p.pointer == "/gpus/l40s/dense_tflops/bf16" and "100000" in p.message
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if "362.05e12" in t)
    assert p.line == line


def test_exponent_figure_is_a_number(tmp_path):
    path = broken_copy(tmp_path, "{fp32: 91.6, tf32: 183, bf16: 362.05,", "{fp32: 91.6, tf32: 183, bf16: 3.6205e2,")
    assert load_catalog(path).entries["l40s"].dense["bf16"] == 362.05


def test_duplicate_key_is_an_error_at_its_line(tmp_path):
    path = broken_copy(tmp_path, "  a10g:\n", "  a10g:\n    vendor: nvidia\n")
    with pytest.raises(ConfigError) as err:
        load_catalog(path)
    assert any("duplicate key 'vendor'" in p.message and p.line for p in err.value.problems)


def test_unknown_fields_are_reported_together_at_their_keys(tmp_path):
    path = broken_copy(tmp_path, "  a10g:\n", "  a10g:\n    tdp_watts: 300\n")
    text = path.read_text().replace("  rtx-3080:\n", "  rtx-3080:\n    note_typo: x\n", 1)
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_catalog(path)
    found = {p.pointer: p.line for p in err.value.problems}
    lines = path.read_text().splitlines()
    assert found == {"/gpus/a10g/tdp_watts": lines.index("    tdp_watts: 300") + 1,
                     "/gpus/rtx-3080/note_typo": lines.index("    note_typo: x") + 1}


def test_sparse_not_above_dense_is_rejected(tmp_path):
    path = broken_copy(tmp_path, "sparse_tflops: {tf32: 366,", "sparse_tflops: {tf32: 100,")
    with pytest.raises(ConfigError) as err:
        load_catalog(path)
    assert err.value.problems[0].pointer == "/gpus/l40s/sparse_tflops/tf32"
    equal = broken_copy(tmp_path, "sparse_tflops: {tf32: 366,", "sparse_tflops: {tf32: 183,")   # the dense tf32
    with pytest.raises(ConfigError) as err:
        load_catalog(equal)
    assert err.value.problems[0].pointer == "/gpus/l40s/sparse_tflops/tf32"


def test_yaml_syntax_error_has_line(tmp_path):
    path = tmp_path / "hardware.yaml"
    path.write_text("version: 1\ngpus: {a: [\n")
    with pytest.raises(ConfigError) as err:
        load_catalog(path)
    assert (err.value.problems[0].line, err.value.problems[0].col) == (3, 1)   # the '[' of line 2 is never closed


def test_every_schema_property_is_described():
    schema = json.loads(schema_path("hardware.schema.json").read_text())
    missing = []

    def walk(node, where):
        if isinstance(node, dict):
            for group in ("properties", "patternProperties"):
                for name, sub in node.get(group, {}).items():
                    if "description" not in sub:
                        missing.append(f"{where}/{group}/{name}")
            if "properties" in node:
                assert node.get("additionalProperties") is False, where
            for k, v in node.items():
                walk(v, f"{where}/{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{where}/{i}")

    walk(schema, "")
    assert not missing


def test_explicit_gpu_agreeing_with_mig_slice_keeps_the_scaling(catalog):
    mig = row(name="NVIDIA H100 80GB HBM3 MIG 1g.10gb", sm=16, bw=0.42e12, clock=1980000000)
    peak = resolve_peak(catalog, hw(gpu="h100-sxm"), [mig])
    assert peak.peak_tflops == pytest.approx(989.4 * 16 / 132)
    assert peak.hbm_gbps == pytest.approx(420)


@pytest.mark.parametrize(("hardware", "pointer", "needle"), [
    ({"gpu": "auto"}, "/hardware/gpu", "no TARGET_INFO_GPU table"),
    ({"gpu": "rtx-2070-super", "precision": "bf16"}, "/hardware/precision", "has no dense bf16 peak"),
])
def test_a_peak_the_trace_cannot_give_is_located_in_the_job_file(tmp_path, hardware, pointer, needle):
    """Found only once the trace is read, but the fix is a job key: file:line:col and pointer, like a schema error."""
    from nsys_export import Export, gpid, gtid
    from pipeline.job.config import load_job
    from pipeline.run import run_job
    from test_run_synth import write_job
    e = Export()                                     # no TARGET_INFO_GPU rows
    e.range(100, 200, gtid(1, 1), "train_step")
    e.launch(110, gtid(1, 1), 1)
    e.kernel(120, 180, gpid(1), 1)
    job = write_job(tmp_path, e.write(tmp_path / "t.sqlite"), hardware=hardware)
    with pytest.raises(ConfigError) as err:
        run_job(load_job(job))
    (problem,) = err.value.problems
    assert problem.file == str(job) and problem.line == 1 and problem.pointer == pointer and needle in problem.message
    assert err.value.code == ExitCode.CONFIG


def test_the_catalog_note_travels_with_a_catalog_peak(catalog):
    """A GeForce fp16 peak is the FP32-accumulate rate: the report must say so beside the figure."""
    peak = resolve_peak(catalog, hw(gpu="rtx-3090", precision="fp16"), None)
    assert peak.peak_tflops == 71 and "FP32-accumulate" in peak.catalog_note
    assert peak.catalog_note == catalog.lookup("rtx-3090").note
    own = resolve_peak(catalog, hw(gpu="rtx-3090", precision="fp16", peak_tflops=142), None)
    assert own.peak_tflops == 142 and own.catalog_note is None        # the job's figure: the catalog's caveat is moot


def test_peak_at_other_precisions(catalog):
    """The job's GPU at another precision (the precision matrix): dense, or sparse when the job is; fp64 on
    the tensor cores where the GPU has them; scaled like the job's peak for a MIG slice."""
    dense = resolve_peak(catalog, hw(), [H100_ROW])
    assert [peak_at(catalog, dense, p) for p in ("fp64", "tf32", "fp8", "fp4")] == [66.9, 494.7, 1978.9, None]
    sparse = resolve_peak(catalog, hw(sparsity=True), [H100_ROW])
    assert peak_at(catalog, sparse, "fp8") == 3957.8
    mig = resolve_peak(catalog, hw(), [row(name="NVIDIA A100-SXM4-40GB MIG 3g.20gb", chip="GA100",
                                           mem=20937965568, bw=777.6e9, sm=42, clock=1410000000)])
    assert peak_at(catalog, mig, "fp64") == pytest.approx(19.5 * 42 / 108)
    assert peak_at(catalog, resolve_peak(catalog, hw(peak_tflops=123.0), [row(name="NVIDIA Quantum X9000")]),
                   "bf16") is None


def test_files_with_one_gpu_type_but_other_peaks_are_refused(catalog):
    """Two ranks on differently sized MIG slices of one card type: one key, two peaks, no one denominator."""
    def slice_of(profile, sms):
        return [row(name=f"NVIDIA A100-SXM4-40GB MIG {profile}", chip="GA100", sm=sms, clock=1410000000)]
    files = [{"label": "r0.sqlite", "gpu_rows": slice_of("3g.20gb", 42), "devices": [0]},
             {"label": "r1.sqlite", "gpu_rows": slice_of("2g.10gb", 28), "devices": [0]}]
    with pytest.raises(HardwareError, match="different GPUs or peaks"):
        resolve_job_peak(catalog, hw(num_gpus=2), files)


def test_several_files_say_what_each_file_identified(catalog):
    """A job over rank files gets one peak, but each file names its own devices and unused GPUs: the reason
    is no longer file 0's sentence as if it described every file."""
    node = [row(id=i, mem=84942979072, bw=3352320000000, sm=132, clock=1980000000) for i in range(4)]
    same = [{"label": f"r{i}.sqlite", "gpu_rows": node[:1], "devices": [0]} for i in range(2)]
    peak = resolve_job_peak(catalog, hw(num_gpus=2), same)
    assert peak.detection_reason.startswith("in each of the 2 files: TARGET_INFO_GPU name 'NVIDIA H100 80GB HBM3'")
    apart = [{"label": "r0.sqlite", "gpu_rows": node, "devices": [0]},
             {"label": "r1.sqlite", "gpu_rows": node, "devices": [1, 2, 3]}]
    reason = resolve_job_peak(catalog, hw(num_gpus=4), apart).detection_reason
    assert reason.startswith("r0.sqlite: ") and "(device 0); 3 listed GPU(s) ran no kernels" in reason
    assert "; r1.sqlite: " in reason and "(devices 1, 2, 3); 1 listed GPU(s) ran no kernels" in reason
