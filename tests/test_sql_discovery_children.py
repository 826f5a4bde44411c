"""discovery_children.sql: what a once-per-process range holds (loops and one-step ranges), by hand."""

from __future__ import annotations

from nsys_export import Export, gpid, gtid
from pipeline.trace import chain, queries
from pipeline.trace.discovery import FILES

P1, P2 = gtid(1, 1), gtid(2, 2)
PARAMS = {"limit": 10, "min_repeats": 2, "min_share": 0.5, "max_period_cv": 0.2, "warmup_factor": 1.2,
          "max_warmup_held": 0.1}


def _children(con) -> dict[tuple[str, str], dict]:
    chain.run(con, {"inspect_read", *FILES}, **PARAMS)
    rows = queries.run(con, "discovery_children", limit=50, max_warmup_held=0.1)
    return {(r["parent_name"], r["name_group"]): r for r in rows}


def test_a_loop_of_repeats_in_two_processes(open_export) -> None:
    """pid 1: 'loop' 0-1000 around 'fwd' at 100, 300, 500 (100 ns each; periods 200, 200), each launching one
    50 ns kernel; a 'setup' kernel of 100 ns launched at 1100, outside. pid 2: 'loop' 0-1000 around 'fwd' at 100,
    300, 600 (periods 200, 300), 50 ns kernels. By hand: 3 repeats in each process, occurrences 1-3; kernel time
    inside the loops 300 of the loops' 300, of the trace's 400; pooled periods 200, 200, 200, 300: mean 225,
    population sd 43.30, CV 0.19245."""
    e = Export()
    corr = 0
    for tid, starts in ((P1, (100, 300, 500)), (P2, (100, 300, 600))):
        e.range(0, 1000, tid, "loop")
        for s in starts:
            corr += 1
            e.range(s, s + 100, tid, "fwd")
            e.launch(s + 10, tid, corr)
            e.kernel(s + 20, s + 70, gpid(tid >> 24), corr)
    e.launch(1100, P1, 99)
    e.kernel(1110, 1210, gpid(1), 99)
    got = _children(open_export(e).con)
    assert list(got) == [("loop", "fwd")]
    r = got[("loop", "fwd")]
    assert (r["repeats_min"], r["repeats_max"], r["first_min"], r["first_max"], r["last_min"], r["last_max"]) == (
        3, 3, 1, 1, 3, 3)
    assert (r["kernel_ns"], r["parent_kernel_ns"], r["in_every_process"], r["parent_depth"]) == (300, 300, True, 0)
    assert r["parent_share"] == 300 / 400 and r["periods"] == 4
    assert abs(r["period_cv"] - (1875 ** 0.5) / 225) < 1e-12
    assert (r["numbered"], r["warmup_named"], r["parent_numbered"]) == (False, False, False)


def test_parents_held_warm_up_and_step_parts(open_export) -> None:
    """'run' 0-1000 holds 'warmup' 0-400 (a 100 ns kernel) and 'forward pass' 500-600 (a 50 ns kernel, no
    repeat: a step part named so, kept even without GPU work it would be), 'optimizer step' 700-800 (no kernel).
    The warm-up holds 100 of run's 150 ns: over a tenth, so run is no parent. 'step' 1100-1500 holds
    'forward pass' 1200-1300 (kernel 40 ns) and 'optimizer step' 1400-1450 (none)."""
    e = Export()
    for corr, (s, name, ks, ke) in enumerate(((0, "warmup", 10, 110), (500, "forward pass", 510, 560),
                                              (1200, "forward pass", 1210, 1250)), 1):
        e.launch(s + 5, P1, corr)
        e.kernel(ks, ke, gpid(1), corr)
    e.range(0, 1000, P1, "run")
    e.range(0, 400, P1, "warmup")
    e.range(500, 600, P1, "forward pass")
    e.range(700, 800, P1, "optimizer step")
    e.range(1100, 1500, P1, "step")
    e.range(1200, 1300, P1, "forward pass")
    e.range(1400, 1450, P1, "optimizer step")
    got = _children(open_export(e).con)
    assert sorted(got) == [("step", "forward pass"), ("step", "optimizer step")]
    fwd = got[("step", "forward pass")]
    assert (fwd["repeats_min"], fwd["first_min"], fwd["kernel_ns"], fwd["parent_kernel_ns"]) == (1, 2, 40, 40)
    # the trace's kernel time after the warm-up: 190 less the 100 launched in 'warmup'
    assert fwd["parent_share"] == 40 / 90
    assert got[("step", "optimizer step")]["kernel_ns"] == 0 and fwd["period_cv"] is None
