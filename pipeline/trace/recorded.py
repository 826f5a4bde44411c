"""The rows SQL files returned to one run, answered again to a later run that asks the same (kept_window.py).

A warm run over a kept window asks the very queries, with the very parameters, that the run
which kept the window asked, and their rows are a function of the window's tables, the SQL
text and the parameters, all of which the window's key stands for. So the run that analyses a
window records each call's rows (`recording`), they are kept beside the window's tables, and a
later run is answered from them (`replaying`) instead of loading the tables and running the SQL
again. A call that no earlier run made raises NotRecorded: the caller then loads the tables and
runs its analysis for real, recording it. Only plain JSON values are kept (None, bool, int,
float, text, and lists and text-keyed dicts of them), so a replay returns exactly what DuckDB
returned; a row holding anything else makes the whole recording unkeepable.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

_PLAIN = (type(None), bool, int, float, str)


class NotRecorded(LookupError):
    """A replaying run asked for rows that no recorded run asked for (other code, other parameters)."""


@dataclass
class Recording:
    """Each call's rows as JSON text, by call (query name and parameters); `keepable` false when one was not plain."""

    calls: dict[str, str] = field(default_factory=dict)
    keepable: bool = True


_active: ContextVar[Recording | dict[str, str] | None] = ContextVar("recorded", default=None)


@contextmanager
def recording() -> Iterator[Recording]:
    """Record the rows of every query run (trace/queries.py) inside the block."""
    rec = Recording()
    token = _active.set(rec)
    try:
        yield rec
    finally:
        _active.reset(token)


@contextmanager
def replaying(calls: dict[str, str]) -> Iterator[None]:
    """Answer every query inside the block from `calls` (a Recording's); a call not there raises NotRecorded."""
    token = _active.set(calls)
    try:
        yield
    finally:
        _active.reset(token)


def answer(query: str, params: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The recorded rows when replaying (fresh objects each time); None when not replaying."""
    calls = _active.get()
    if not isinstance(calls, dict):
        return None
    rows = calls.get(_key(query, params) or "")
    if rows is None:
        raise NotRecorded(query)
    return json.loads(rows)


def note(query: str, params: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    """Keep the rows a query just returned, when recording (a copy: callers may change theirs)."""
    rec = _active.get()
    if not isinstance(rec, Recording) or not rec.keepable:
        return
    key = _key(query, params)
    if key is None or not _plain(rows):
        rec.keepable = False
        return
    rec.calls[key] = json.dumps(rows)


def not_replayable(query: str) -> None:
    """A call whose effect is not rows (a table kept in Python between calls): no recording can stand for it."""
    calls = _active.get()
    if isinstance(calls, Recording):
        calls.keepable = False
    elif calls is not None:
        raise NotRecorded(query)


def _key(query: str, params: dict[str, Any]) -> str | None:
    if not _plain(params):
        return None
    return json.dumps([query, params], sort_keys=True)


def _plain(value: Any) -> bool:
    """JSON gives this value back as it is: no tuple, Decimal, date, numpy scalar or non-text key."""
    kind = type(value)
    if kind in _PLAIN:
        return True
    if kind is list:
        return all(_plain(v) for v in value)
    if kind is dict:
        return all(type(k) is str and _plain(v) for k, v in value.items())
    return False
