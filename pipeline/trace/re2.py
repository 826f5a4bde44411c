"""Regular expressions are checked by the engine that runs them: DuckDB's RE2, not Python's `re`.

Python accepts lookarounds and backreferences that RE2 refuses, so a pattern that passed a
`re.compile` check used to fail later, inside a query, as an internal error. Checking with
RE2 itself makes it a job-file problem (exit 3) with RE2's own words.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from importlib import resources
from pathlib import Path

import duckdb

from pipeline.bundled import kept_folder
from pipeline.job.documents import remember


@lru_cache(maxsize=1)
def _con() -> duckdb.DuckDBPyConnection:
    from pipeline.trace.connection import duckdb_connect
    return duckdb_connect()


def problems(patterns: list[str]) -> list[str | None]:
    """RE2's complaint about each pattern (None where RE2 accepts it): all in one query when every one is
    valid, the usual case, else one by one. The shipped kernel classes are checked on every run, so a list
    found valid is remembered (bundled.kept_folder, like schema verdicts) and not checked again."""
    key = "\0".join([duckdb.__version__, *patterns]).encode()
    verdict = kept_folder(Path(str(resources.files("pipeline.trace")))) / f"re2-{hashlib.sha256(key).hexdigest()[:32]}"
    if verdict.is_file():
        return [None] * len(patterns)
    try:
        _con().execute("SELECT count(*) FROM unnest(?::VARCHAR[]) AS t(p) WHERE regexp_matches('', p)",
                       [patterns]).fetchone()
    except duckdb.Error:
        return [problem(p) for p in patterns]
    remember(verdict)
    return [None] * len(patterns)


def problem(pattern: str) -> str | None:
    """RE2's complaint about `pattern`, or None when RE2 accepts it."""
    try:
        _con().execute("SELECT regexp_matches('', ?)", [pattern]).fetchone()
    except duckdb.Error as exc:
        text = str(exc).splitlines()[0]
        return text.removeprefix("Invalid Input Error: ")
    return None
