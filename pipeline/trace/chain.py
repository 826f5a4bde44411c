"""Run several SQL files in the order their headers imply: the one place that orders the chain.

Every file in pipeline/trace/sql starts with two header lines,

    -- reads: selected_ranges, kernels
    -- creates: attributed

naming the tables and views it reads and the ones it creates ('-' for none).
A caller names the files a stage needs, in any order; `run` executes each after the
files of the same call that create what it reads. Names no file of the call creates
must already exist on the connection (the raw_* views of open.py, an earlier stage's
tables, or a table a test planted by hand), so one file still runs on its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any

import duckdb

from pipeline.trace import queries


@cache
def header(name: str) -> tuple[frozenset[str], frozenset[str]]:
    """(reads, creates) declared by `name`.sql; a file without both lines is a bug in the package."""
    found: dict[str, frozenset[str]] = {}
    for line in queries.sql_text(name).splitlines()[:2]:
        key, _, names = line.removeprefix("--").partition(":")
        found[key.strip()] = frozenset(n.strip() for n in names.split(",") if n.strip() not in ("", "-"))
    if set(found) != {"reads", "creates"}:
        raise ValueError(f"sql/{name}.sql: the first two lines must be '-- reads: ...' and '-- creates: ...'")
    return found["reads"], found["creates"]


def order(files: Iterable[str]) -> list[str]:
    """The files in dependency order (creators before readers; ties by name, so runs are repeatable)."""
    todo = sorted(set(files))
    creator: dict[str, str] = {}
    for f in todo:
        for made in header(f)[1]:
            if creator.setdefault(made, f) != f:
                raise ValueError(f"both {creator[made]}.sql and {f}.sql create '{made}': run them in separate calls")
    needs = {f: {creator[r] for r in header(f)[0] if r in creator and creator[r] != f} for f in todo}
    out: list[str] = []
    while todo:
        ready = [f for f in todo if needs[f] <= set(out)]
        if not ready:
            raise ValueError(f"the SQL files {todo} read each other's tables in a cycle")
        out += ready
        todo = [f for f in todo if f not in ready]
    return out


def run(con: duckdb.DuckDBPyConnection, files: Iterable[str], /, **params: Any) -> dict[str, list[dict[str, Any]]]:
    """Execute `files` in dependency order; each file's last statement's rows, by file name."""
    return {f: queries.run(con, f, **params) for f in order(files)}
