"""files.Hashing: a trace's SHA-256 hashed in a low-priority thread; whoever needs it finishes it."""

from __future__ import annotations

import hashlib
import os
import sys
import threading

import pytest

from pipeline.trace.files import Hashing


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "trace.sqlite"
    path.write_bytes(os.urandom(3 * Hashing.BLOCK + 12345))           # several blocks and a partial one
    return path


def test_the_digest_is_the_files_sha256(data):
    expected = hashlib.sha256(data.read_bytes()).hexdigest()
    assert Hashing(data).result() == expected


def test_the_caller_finishes_what_the_thread_has_not(data, monkeypatch):
    """The thread never gets to run here: result() hashes every block itself."""
    monkeypatch.setattr(threading.Thread, "start", lambda self: None)
    assert Hashing(data).result() == hashlib.sha256(data.read_bytes()).hexdigest()


def _join_hashing_threads() -> None:
    for thread in [t for t in threading.enumerate() if t.name == "mfu-sha256"]:
        thread.join()


def test_a_reading_error_reaches_the_caller(tmp_path):
    pending = Hashing(tmp_path / "gone.sqlite")
    _join_hashing_threads()                                            # the thread met the error first
    with pytest.raises(FileNotFoundError):
        pending.result()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice values are Linux's")
def test_the_thread_runs_at_the_lowest_priority_and_the_caller_at_its_own(data, monkeypatch):
    seen: dict[str, set[int]] = {}
    real = Hashing._step

    def step(self):
        me = threading.current_thread()
        seen.setdefault(me.name, set()).add(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        return real(self)
    monkeypatch.setattr(Hashing, "_step", step)
    mine = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    pending = Hashing(data)
    _join_hashing_threads()
    assert pending.result() == hashlib.sha256(data.read_bytes()).hexdigest()
    assert seen["mfu-sha256"] == {19} and seen[threading.current_thread().name] == {mine}


def test_memory_running_out_in_the_thread_is_met_by_the_caller(data, monkeypatch):
    """Under `ulimit -v` the thread's read failed with MemoryError, printed as a traceback of thread mfu-sha256
    (issue 33). The thread stops quietly; the caller reads on, and meets the error itself if memory is still short."""
    seen: list[BaseException] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: seen.append(args.exc_value))
    step = Hashing._step

    def short_in_the_thread(self):
        if threading.current_thread().name == "mfu-sha256":
            raise MemoryError
        return step(self)
    monkeypatch.setattr(Hashing, "_step", short_in_the_thread)
    pending = Hashing(data)
    _join_hashing_threads()
    assert seen == [] and pending.result() == hashlib.sha256(data.read_bytes()).hexdigest()
