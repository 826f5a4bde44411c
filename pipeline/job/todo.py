"""`TODO` placeholders, as `mfu init` writes them: each one is a problem at its own line until filled in.

A skeleton must not validate while it still holds guesses the user has not confirmed, and the
user should see every gap at once, not one schema error after another.
"""

from __future__ import annotations

from typing import Any

from pipeline.errors import Problem

MARK = "TODO"


# Token counts an explicit model.flops_per_step does without (checks.job_file.token_counts_given): tokens/s only.
TOKEN_COUNTS = ("/workload/seq_len", "/workload/global_batch")


def todo_problems(data: Any, file: str) -> list[Problem]:
    """One problem per value written as TODO, pointing at it. A skeleton whose model became a flops_per_step
    still holds `mfu init`'s seq_len and global_batch TODOs: the fix there is also to delete the line."""
    found = _todos(data, file, "")
    model = data.get("model") if isinstance(data, dict) else None
    if isinstance(model, dict) and "flops_per_step" in model:
        for p in found:
            if p.pointer in TOKEN_COUNTS:
                p.hint = ("with model.flops_per_step it is optional: delete the line, or replace TODO with a "
                          "value (seq_len and global_batch together give tokens/s)")
    return found


def _todos(data: Any, file: str, pointer: str) -> list[Problem]:
    if isinstance(data, dict):
        return [p for k, v in data.items() for p in _todos(v, file, f"{pointer}/{k}")]
    if isinstance(data, list):
        return [p for i, v in enumerate(data) for p in _todos(v, file, f"{pointer}/{i}")]
    if isinstance(data, str) and data.strip() == MARK:
        return [Problem("not filled in yet (TODO)", pointer, file,
                        hint="replace TODO with a value; the comment on this line says what it needs")]
    return []


def covered(problem: Problem, todos: list[Problem]) -> bool:
    """A schema complaint about a value already reported ('TODO' is not an integer; .inf is above the
    maximum) adds nothing."""
    return any(problem.pointer == t.pointer or problem.pointer.startswith(t.pointer + "/") for t in todos)
