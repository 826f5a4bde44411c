"""docs/cli.md and docs/job-file.md, generated: `--help` and the job schema stay the only copies.

`python -m pipeline.cli.reference docs` rewrites both; tests/test_docs.py fails when the committed
files differ from what this produces, so a new option or schema key cannot go undocumented.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pipeline import bundled
from pipeline.cli.parser import build_parser

WIDTH = "100"      # help is wrapped to the terminal; the reference is wrapped to one fixed width


def cli_reference() -> str:
    """Every command's --help, in the order `mfu --help` lists them."""
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        top = build_parser()
        sub = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
        parts = ["# Command-line reference", "",
                 "Generated from `mfu --help` by `python -m pipeline.cli.reference docs`; do not edit by hand.", "",
                 "## mfu", "", "```", top.format_help().rstrip(), "```"]
        for name, parser in sub.choices.items():
            parts += ["", f"## mfu {name}", "", "```", parser.format_help().rstrip(), "```"]
        return "\n".join(parts) + "\n"
    finally:
        if previous is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = previous


def job_file_reference() -> str:
    """One row per key of the job schema, with its type, default and description."""
    schema = json.loads(bundled.schema_path("job.schema.json").read_text(encoding="utf-8"))
    lines = ["# Job file reference", "",
             "Generated from schemas/job.schema.json by `python -m pipeline.cli.reference docs`; do not edit by hand.",
             "", schema["description"], ""]
    for key, prop in schema["properties"].items():
        required = " (required)" if key in schema.get("required", []) else ""
        lines += [f"## `{key}`{required}", "", "| key | type | default | description |", "|---|---|---|---|"]
        lines += [_row(path, p, req) for path, p, req in _keys(key, prop, key in schema.get("required", []))]
        lines.append("")
    return "\n".join(lines)


def _keys(path: str, prop: dict[str, Any], required: bool) -> Iterator[tuple[str, dict[str, Any], bool]]:
    """The property and, for an object, its properties (also inside each oneOf/anyOf alternative), depth first."""
    yield path, prop, required
    for alternative in [prop] + prop.get("oneOf", []) + prop.get("anyOf", []):
        for key, child in alternative.get("properties", {}).items():
            yield from _keys(f"{path}.{key}", child, key in alternative.get("required", []))
        if isinstance(alternative.get("items"), dict):
            for key, child in alternative["items"].get("properties", {}).items():
                yield from _keys(f"{path}[].{key}", child, key in alternative["items"].get("required", []))


def _row(path: str, prop: dict[str, Any], required: bool) -> str:
    default = "required" if required else (f"`{json.dumps(prop['default'])}`" if "default" in prop else "")
    return f"| `{path}` | {_type(prop)} | {default} | {_cell(prop.get('description', ''))} |"


def _type(prop: dict[str, Any]) -> str:
    if "enum" in prop:
        return " \\| ".join(f"`{json.dumps(v)}`" for v in prop["enum"])
    if "oneOf" in prop or "anyOf" in prop:
        return " or ".join(_type(p) for p in prop.get("oneOf", prop.get("anyOf", [])))
    kind = prop.get("type", "")
    return " or ".join(kind) if isinstance(kind, list) else str(kind)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def write(folder: Path) -> None:
    """Both references into `folder` (docs/)."""
    (folder / "cli.md").write_text(cli_reference(), encoding="utf-8")
    (folder / "job-file.md").write_text(job_file_reference(), encoding="utf-8")


if __name__ == "__main__":
    write(Path(sys.argv[1] if len(sys.argv) > 1 else "docs"))
