"""`TODO` placeholders, as `mfu init` writes them: each one is a problem at its own line until filled in.

A skeleton must not validate while it still holds guesses the user has not confirmed, and the
user should see every gap at once, not one schema error after another.
"""

from __future__ import annotations

from typing import Any

from pipeline.errors import Problem

MARK = "TODO"


def todo_problems(data: Any, file: str, pointer: str = "") -> list[Problem]:
    """One problem per value written as TODO, pointing at it."""
    if isinstance(data, dict):
        return [p for k, v in data.items() for p in todo_problems(v, file, f"{pointer}/{k}")]
    if isinstance(data, list):
        return [p for i, v in enumerate(data) for p in todo_problems(v, file, f"{pointer}/{i}")]
    if isinstance(data, str) and data.strip() == MARK:
        return [Problem("not filled in yet (TODO)", pointer, file,
                        hint="replace TODO with a value; the comment on this line says what it needs")]
    return []


def covered(problem: Problem, todos: list[Problem]) -> bool:
    """A schema complaint about a value already reported ('TODO' is not an integer; .inf is above the
    maximum) adds nothing."""
    return any(problem.pointer == t.pointer or problem.pointer.startswith(t.pointer + "/") for t in todos)
