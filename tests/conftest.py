"""Shared fixtures: the real-trace folder (skipped with a reason when absent) and synthetic traces."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from nsys_export import Export
from pipeline.trace import queries
from pipeline.trace.synth import SynthSpec, generate
from pipeline.trace import connection as trace_connection
from pipeline.trace.open import Trace, open_trace

REPO = Path(__file__).resolve().parents[1]


def pytest_configure(config: pytest.Config) -> None:
    """The test workers and every `mfu` a test starts run as an installed package does, with bytecode, whatever
    PYTHONDONTWRITEBYTECODE says (some machines, this project's among them, set it): each of them compiled the
    package again, 305 CPU s for the quick tier against 253 with bytecode (issue #35). Tests of what mfu does
    under that variable set it themselves (test_compiled_templates, test_schema_verdicts)."""
    if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:    # before pytest-xdist starts its workers
        sys.dont_write_bytecode = False


def traces_dir() -> Path | None:
    """$MFU_TRACES_DIR, else ../shared/traces beside the repository; None when neither exists."""
    env = os.environ.get("MFU_TRACES_DIR")
    for candidate in ([Path(env)] if env else []) + [REPO.parent / "shared" / "traces"]:
        if candidate.is_dir() and any(candidate.glob("*.sqlite")):
            return candidate
    return None


@pytest.fixture(autouse=True)
def _cache_in_tmp(tmp_path_factory, monkeypatch):
    """Batches cache by default in the user's cache folder; tests keep theirs in a temp folder."""
    monkeypatch.setenv("MFU_CACHE_DIR", str(tmp_path_factory.mktemp("mfu-cache")))


@pytest.fixture(autouse=True, scope="session")
def _duckdb_threads_per_worker():
    """pytest-xdist's workers share the cores as `mfu run -j N`'s pool workers do (executor.py): each DuckDB
    connection gets cores // workers threads, not every core each. Two workers on two cores, each starting two
    DuckDB threads per statement, spent about a fifth more CPU on the same runs (issue #35)."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 0)
    if workers > 1:
        trace_connection.set_worker_threads(max(1, (os.cpu_count() or 1) // workers))


@pytest.fixture
def every_core(monkeypatch):
    """DuckDB's own default, every core, as a command run alone gets it: for tests of the thread counts, and of
    results that must not depend on the order threads finish in (which one thread cannot show)."""
    monkeypatch.setattr(trace_connection, "_worker_threads", [None])


@pytest.fixture(autouse=True)
def _no_signal_carried_over():
    """A command starts in a fresh process, with no signal seen (interrupts.handled clears them); a test that
    signalled this process must not leave its Interrupted for a later test's run, which calls the stages
    without `handled` and re-raised it there (the slow tier stopped at the next test after such a test)."""
    yield
    from pipeline import interrupts
    interrupts._received.clear()
    interrupts._owed[0] = False


@pytest.fixture(scope="session")
def shared_traces() -> Path:
    found = traces_dir()
    if found is None:
        pytest.skip("real Nsight Systems traces not found: set MFU_TRACES_DIR or place them in ../shared/traces")
    return found


@pytest.fixture(scope="session")
def real_trace(shared_traces: Path):
    """Path of one named shared trace; skips with the name when that file is missing."""
    def get(name: str) -> Path:
        path = shared_traces / name
        if not path.is_file():
            pytest.skip(f"shared trace {name} not present in {shared_traces}")
        return path
    return get


@pytest.fixture(scope="session")
def synth_trace(tmp_path_factory):
    """Build (and cache per spec) a synthetic trace; returns (path, ground truth)."""
    made: dict[str, tuple[Path, dict]] = {}

    def build(**kw) -> tuple[Path, dict]:
        key = repr(sorted(kw.items()))
        if key not in made:
            path = tmp_path_factory.mktemp("synth") / "trace.sqlite"
            made[key] = (path, generate(SynthSpec(**kw), path))
        return made[key]
    return build


@pytest.fixture
def open_views():
    """Open a trace file like a user's trace and create the views; closed after the test."""
    opened: list[Trace] = []

    def open_(path: Path) -> Trace:
        trace = open_trace(path)
        opened.append(trace)
        queries.run(trace.con, "views")
        return trace
    yield open_
    for trace in opened:
        trace.con.close()


@pytest.fixture
def open_export(open_views, tmp_path):
    """Write a hand-made Export into tmp_path and open it with the views."""
    written = iter(range(1_000))
    return lambda export: open_views(export.write(tmp_path / f"export{next(written)}.sqlite"))
