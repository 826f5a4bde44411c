"""region_domains.sql: per NVTX domain, its ranges and those matching the region's name."""

from __future__ import annotations

import pytest

from nsys_export import Export, gpid, gtid
from pipeline.trace import queries

P1, P2 = gtid(10, 10), gtid(20, 20)


def _export() -> Export:
    e = Export()
    e.domain(P1, 1, "TensorRT", via_text_id=True)
    e.range(100, 200, P1, "execute", domain_id=1)
    e.range(300, 400, P1, "execute, seq = 1", domain_id=1)
    e.range(500, 600, P1, "build", domain_id=1)
    e.range(700, 800, P1, "execute")                         # default domain
    e.domain(P2, 1, "NCCL")                                  # domainId 1 is another domain in process 20
    e.range(150, 250, P2, "allreduce", domain_id=1)
    e.launch(110, P1, 1)
    e.kernel(120, 190, gpid(10), 1)
    return e


@pytest.mark.parametrize(("name", "match", "expected"), [
    # TensorRT: 3 ranges, 1 named exactly 'execute'; default domain: 1 of 1; NCCL: 0 of 1
    ("execute", "exact", [("TensorRT", 1, 3), (None, 1, 1), ("NCCL", 0, 1)]),
    ("execute", "prefix", [("TensorRT", 2, 3), (None, 1, 1), ("NCCL", 0, 1)]),
    ("reduce", "contains", [("NCCL", 1, 1), ("TensorRT", 0, 3), (None, 0, 1)]),
    ("^b", "regex", [("TensorRT", 1, 3), (None, 0, 1), ("NCCL", 0, 1)]),
    ("Execute", "exact", [("TensorRT", 0, 3), (None, 0, 1), ("NCCL", 0, 1)]),    # case-sensitive
])
def test_matching_ranges_per_domain(open_export, name, match, expected) -> None:
    trace = open_export(_export())
    got = queries.run(trace.con, "region_domains", name=name, match=match)
    assert [(r["domain"], r["matching"], r["ranges"]) for r in got] == expected


def test_a_job_whose_domain_holds_no_match_is_told_where_the_name_is(tmp_path) -> None:
    """A real TensorRT trace: region.domain 'tensorrt' for the domain 'TensorRT'. The error used to suggest
    `match: prefix`, which fails the same way; it now names the domain holding the ranges."""
    from pipeline.errors import TraceError
    from pipeline.job.config import load_job
    from pipeline.run import run_job
    from test_run_synth import write_job
    trace = _export().write(tmp_path / "t.sqlite")
    for match in ("exact", "prefix"):
        job = write_job(tmp_path, trace, region={"name": "execute", "domain": "tensorrt", "match": match})
        with pytest.raises(TraceError) as info:
            run_job(load_job(job))
        assert "in domain 'tensorrt'. Ranges with that name are in 'TensorRT' (%d ranges), the default domain (1 " \
               "ranges): NVTX domain names are case-sensitive" % (1 if match == "exact" else 2) in str(info.value)
    job = write_job(tmp_path, trace, region={"name": "nothing", "domain": "tensorrt"})
    with pytest.raises(TraceError) as info:
        run_job(load_job(job))
    assert ("Domains in this trace: 'TensorRT', the default domain, 'NCCL'. "        # by ranges: 4, 1, 1
            "Most frequent range names: 'allreduce', 'build', 'execute'.")   # 1 range per group, by name in str(info.value)


def test_an_unnamed_domain_is_not_the_default_one(open_export) -> None:
    """domainId 3 with no eventType 75 row (a trimmed export) has no name, like the default domain (id 0),
    but is another domain: the rows keep them apart by id."""
    e = _export()
    e.range(900, 950, P2, "allreduce", domain_id=3)
    e.range(960, 990, P2, "allreduce", domain_id=3)
    got = queries.run(open_export(e).con, "region_domains", name="allreduce", match="exact")
    assert [(r["domain"], r["unnamed_id"], r["matching"], r["ranges"]) for r in got] == [
        (None, 3, 2, 2), ("NCCL", None, 1, 1), ("TensorRT", None, 0, 3), (None, 0, 0, 1)]


def test_real_nccl_ranges_of_an_unnamed_domain(real_trace, tmp_path) -> None:
    """nsysai__mfu_2gpu_before: NCCL's ranges (ncclGroupEnd: 66, both ranks) carry domainId 1, and the export
    has no eventType 75 row naming it. Asked for domain 'NCCL', the error said they were in "the default
    domain", which they are not (that is domainId 0)."""
    import sqlite3

    from pipeline.errors import TraceError
    from pipeline.job.config import load_job
    from pipeline.run import run_job
    from test_run_synth import write_job
    path = real_trace("nsysai__mfu_2gpu_before.sqlite")
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    assert con.execute("SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 75").fetchone() == (0,)
    assert con.execute("SELECT domainId, count(*) FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId "
                       "WHERE coalesce(n.text, s.value) = 'ncclGroupEnd' GROUP BY 1").fetchall() == [(1, 66)]
    job = write_job(tmp_path, path, region={"name": "ncclGroupEnd", "domain": "NCCL"},
                    hardware={"gpu": "h100-sxm"}, model={"flops_per_step": 1.0e6}, workload={"mode": "inference"})
    with pytest.raises(TraceError) as info:
        run_job(load_job(job))
    assert "Ranges with that name are in domain id 1 (the export records no name for it, so region.domain " \
           "cannot select it) (66 ranges)" in str(info.value)
    assert "default domain" not in str(info.value)
