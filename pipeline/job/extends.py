"""`extends: base.yaml`: jobs share defaults through one explicit base file, one level deep.

The base is merged under the job (mappings merge key by key, the job wins; lists
and scalars are replaced whole), then the merged document is validated as one
job. A base cannot extend another file: no hidden cascades. Every problem still
points into the file that holds the offending value — the job or the base.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pipeline.errors import ConfigError, Problem

Positions = dict[str, tuple[int, int]]


def merge(path: Path, data: dict[str, Any], positions: Positions) -> tuple[dict[str, Any], str, Positions, bytes]:
    """The job merged over its base; returns (data, base file, base positions, base bytes)."""
    from pipeline.job.config import read_job_text
    from pipeline.job.parsing import parse_yaml
    ref = data["extends"]
    if not isinstance(ref, str) or not ref:
        raise ConfigError([Problem("extends must be the path of a base job file", "/extends", str(path),
                                   *positions.get("/extends", (1, 1)), "e.g. extends: base.yaml")])
    if "\0" in ref:                    # no file system takes one: open() would raise ValueError, not OSError
        raise ConfigError([Problem("a path cannot hold a NUL character (\\0)", "/extends", str(path),
                                   *positions.get("/extends", (1, 1)), "write the base file's path")])
    if Path(ref).suffix.lower() not in (".yaml", ".yml"):     # never read: its words would reach the message
        raise ConfigError([Problem(f"extends: {ref!r} is not named as a YAML job file (*.yaml or *.yml), so it is "
                                   "not read: a path to another file would print its lines here",
                                   "/extends", str(path), *positions.get("/extends", (1, 1)),
                                   "e.g. extends: base.yaml")])
    base_path = path.parent / ref
    raw, text = read_job_text(base_path, hint=f"extends: {ref} in {path} (relative to that file)")
    base_file = str(base_path)
    base, base_pos, problems = parse_yaml(text, base_file)
    if problems:
        raise ConfigError(problems)
    if not isinstance(base, dict):
        raise ConfigError([Problem("a base job file must be a YAML mapping of keys", "", base_file, 1, 1)])
    if "extends" in base:
        raise ConfigError([Problem("a base file cannot extend another (one level only: no hidden cascades)",
                                   "/extends", base_file, *base_pos.get("/extends#key", (1, 1)),
                                   "copy the shared keys into this base file")])
    base = {k: v for k, v in base.items() if k != "kind"}     # `kind: base` describes the file, not the job
    if "trace" in base and "trace" not in data:    # the base's trace paths are relative to the base
        base["trace"] = _rebase(base["trace"], base_path.parent, path.parent)
    merged = _deep_merge(base, {k: v for k, v in data.items() if k != "extends"})
    return merged, base_file, base_pos, raw


def is_base(path: Path) -> bool:
    """A file marked `kind: base`: shared defaults for `extends:`, never run on its own.

    Unreadable or broken files are not bases: loading them as jobs reports the problem.
    """
    from pipeline.job.parsing import MAX_BYTES, parse_yaml
    from pipeline.job.reading import read_regular
    try:
        raw = read_regular(path, MAX_BYTES)
        if b"kind" not in raw:        # no `kind:` key, no base: a job file is not parsed twice (40,000 keys)
            return False
        data, _, problems = parse_yaml(raw.decode("utf-8"), str(path))
    except (OSError, UnicodeDecodeError, ConfigError):
        return False
    return not problems and isinstance(data, dict) and data.get("kind") == "base"


BASE_NOTE = "skipped: a base file (kind: base) holds defaults for jobs that `extends:` it; it is not run on its own"


def relocate(problem: Problem, positions: Positions, base: tuple[str, Positions] | None) -> Problem:
    """Point a problem at the base file when the value it is about comes from there."""
    if base is None:
        return problem
    pointer = problem.pointer
    if pointer in positions or pointer + "#key" in positions:
        return problem
    base_file, base_pos = base
    for key in (pointer + "#key", pointer) if problem.message.startswith("unknown key") else (pointer,):
        if key in base_pos:
            problem.file = base_file
            problem.line, problem.col = base_pos[key]
            break
    return problem


def _deep_merge(base: Any, over: Any) -> Any:
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for key, value in over.items():
            out[key] = _deep_merge(base[key], value) if key in base else value
        return out
    return over


def _rebase(value: Any, base_dir: Path, job_dir: Path) -> Any:
    if isinstance(value, str):
        return os.path.relpath(base_dir / value, job_dir) if not os.path.isabs(value) else value
    if isinstance(value, list):
        return [_rebase(v, base_dir, job_dir) for v in value]
    return value
