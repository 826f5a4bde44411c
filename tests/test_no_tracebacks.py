"""Hostile inputs and a hostile machine end in a documented exit code, never a traceback (issue 33): JSON nested
past Python's parser given to `mfu compare`, a damaged history row, a memory limit (`ulimit -v`)."""

from __future__ import annotations

import json
import resource
import signal
import subprocess
import sys

import duckdb
import pytest

from pipeline.cli import main
from pipeline.errors import ExitCode, environment_error
from tests.test_history import fake
from pipeline.history import append


def test_json_nested_past_the_parser_is_a_damaged_input(tmp_path, capsys):
    deep = tmp_path / "deep.json"
    deep.write_text('{"a":' * 100_000 + "1" + "}" * 100_000)
    assert main(["compare", str(deep), str(deep), "--out", str(tmp_path / "cmp")]) == 3
    err = capsys.readouterr().err
    assert "deep.json: cannot read as result JSON: nested deeper than Python's JSON parser goes" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("stored", ["{broken", "[1, 2]"])
def test_a_damaged_history_row_is_named(tmp_path, capsys, stored):
    db = tmp_path / "h.duckdb"
    append(db, [fake("a", 40.0)])
    append(db, [fake("a", 41.0)])
    with duckdb.connect(str(db)) as con:
        con.execute("UPDATE history SET comparability_inputs = ? WHERE run = 2", [stored])
    assert main(["history", str(db), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "h.duckdb: run 2 of job 'a' is damaged (its comparability inputs are not" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("exc", [ImportError("numpy failed\nOriginal error was: libopenblas.so: failed to map segment "
                                             "from shared object"), RuntimeError("can't start new thread"),
                                 duckdb.Error("out of memory")])     # a batch worker's query under ulimit -v 300000
def test_memory_met_outside_an_allocation_is_exit_2(exc):
    found = environment_error(exc)
    assert found is not None and found.code == ExitCode.USAGE and str(found).startswith("out of memory (")


def _limited(megabytes: int):
    return lambda: resource.setrlimit(resource.RLIMIT_AS, (megabytes << 20, megabytes << 20))


# 250 and 300 MB: exit 2 here; from ~340 on a run passes (one malloc arena, DuckDB's memory from what is left). The
# quick tier runs the lowest (out of memory, said as such); the slow tier the others too.
@pytest.mark.parametrize("megabytes, command", [(250, "inspect"), (300, "run"),
                                                pytest.param(400, "run", marks=pytest.mark.slow),
                                                pytest.param(450, "run", marks=pytest.mark.slow)])
def test_a_run_under_memory_limits_ends_in_a_documented_code(synth_trace, tmp_path, megabytes, command):
    """Under `ulimit -v` numpy's import, DuckDB's LOAD or a thread failed with a traceback (exit 5), or OpenBLAS
    exited 1 (a threshold's code; `mfu inspect` at 250 MB, numpy imported once DuckDB held the memory); each limit
    now ends in exit 2 saying memory ran out, or the command passes."""
    trace, _ = synth_trace()
    job = {"name": "limited", "trace": str(trace), "region": {"name": "train_step"},
           "hardware": {"num_gpus": 2, "precision": "bf16"}, "model": {"flops_per_step": 4.0e+13},
           "workload": {"mode": "training", "seq_len": 2048, "global_batch": 8}}
    (tmp_path / "job.yaml").write_text(json.dumps(job))
    args = ["inspect", str(trace)] if command == "inspect" else ["run", str(tmp_path / "job.yaml"), "--out",
                                                                   str(tmp_path / "out")]
    done = subprocess.run([sys.executable, "-m", "pipeline.cli", *args], capture_output=True, text=True, timeout=300,
                          preexec_fn=_limited(megabytes))
    assert "Traceback" not in done.stderr, (megabytes, done.stderr)
    # DuckDB can run out inside one of its own threads, where its std::bad_alloc escapes its error handling and
    # the C++ runtime aborts the process (seen at 400 MB in a fresh CI venv): no Python code
    # runs to catch it, so that abort is the one outcome accepted besides the documented ones (issue 33).
    aborted = done.returncode == -signal.SIGABRT and "St9bad_alloc" in done.stderr
    assert done.returncode == 0 or (done.returncode == 2 and "out of memory" in done.stderr) or aborted, \
        (megabytes, done.returncode, done.stderr)


def _address_space_script(body: str, gigabytes: int = 3) -> str:
    return ("import os, resource, threading\n"
            "def vm(): return int(open('/proc/self/statm').read().split()[0]) * os.sysconf('SC_PAGE_SIZE')\n"
            f"resource.setrlimit(resource.RLIMIT_AS, ({gigabytes} << 30, {gigabytes} << 30))\n" + body)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's arenas, /proc/self/statm")
def test_under_a_memory_limit_threads_share_one_malloc_arena():
    """glibc gives each thread that allocates a 64 MB arena of address space: DuckDB's threads and the hashing
    thread took 185 MB of a 400 MB `ulimit -v` before a row was read (issue 33). Under a limit `mfu` keeps one
    arena; eight threads then cost their stacks (8 MB each here), not 8 x 72 MB."""
    threads = ("from pipeline.cli import main\n"
               "try: main(['--version'])\n"
               "except SystemExit: pass\n"
               "before, gate = vm(), threading.Barrier(9)\n"
               "def work(): bytearray(100_000); gate.wait(); gate.wait()\n"
               "ts = [threading.Thread(target=work) for _ in range(8)]\n"
               "[t.start() for t in ts]; gate.wait(); print((vm() - before) >> 20); gate.wait()\n")
    done = subprocess.run([sys.executable, "-c", _address_space_script("threading.stack_size(8 << 20)\n" + threads)],
                          capture_output=True, text=True, timeout=60)
    grown_mb = int(done.stdout.split()[-1])
    assert grown_mb < 8 * (8 + 16), done.stdout + done.stderr


def test_duckdb_takes_half_the_address_space_left_under_a_limit():
    """DuckDB took 512 MB as its own under a 400 MB limit, then failed to allocate, or aborted on std::bad_alloc
    in a thread of its own (issue 33): under a limit its memory is half of what the process has left."""
    body = ("from pipeline.trace.connection import memory_limit\n"
            "left = (1 << 30) - vm(); print(memory_limit(), min(512, max(16, left >> 21)))\n")
    done = subprocess.run([sys.executable, "-c", _address_space_script(body, gigabytes=1)], capture_output=True,
                          text=True, timeout=60)
    said, expected = done.stdout.split()
    assert said.endswith("MB") and abs(int(said[:-2]) - int(expected)) <= 1 and 256 < int(expected) < 512, \
        done.stdout + done.stderr                                      # 1 MB: a page allocated between the two reads
    from pipeline.trace.connection import MEMORY_LIMIT, memory_limit
    assert memory_limit() == MEMORY_LIMIT                             # no limit here: the fixed one


def test_too_little_address_space_for_duckdb_is_refused_before_it_opens():
    """With 34 MB of a `ulimit -v` left, DuckDB loaded its SQLite scanner and the process crashed (SIGSEGV) at
    once; with less, it crashed closing the connection. Neither can be caught: connect() refuses first."""
    body = ("import duckdb\n"
            "from pipeline.trace.connection import connect\n"
            "soft = vm() + (40 << 20); resource.setrlimit(resource.RLIMIT_AS, (soft, soft))\n"
            "try: connect()\n"
            "except MemoryError as exc: print('refused:', exc)\n")
    done = subprocess.run([sys.executable, "-c", _address_space_script(body)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and "MB needed to open DuckDB with its SQLite scanner" in done.stdout, \
        (done.returncode, done.stdout, done.stderr)
