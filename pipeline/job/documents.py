"""YAML documents checked against our JSON Schemas, every problem located by file:line:col.

Job files, the GPU catalog and model definitions are all user-edited YAML; they share one
loader (989e12 is a number, duplicate keys are errors) and one way of turning schema
violations into Problems with a JSON pointer, a position and a hint.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from pipeline.bundled import schema_paths
from pipeline.errors import ConfigError, Problem


# YAML 1.1 reads 989e12 and 8.0e9 as strings; FLOP counts are written exactly like that.
_FLOAT = re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$")


class _Loader(yaml.SafeLoader):
    """SafeLoader that also reads 989e12 / 8.0e9 as floats."""


_Loader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT, list("-+0123456789"))


@cache
def schema_registry() -> Registry:
    resources = [(p.name, Resource.from_contents(json.loads(p.read_text(encoding="utf-8"))))
                 for p in schema_paths()]
    return Registry().with_resources(resources)


def validator(name: str) -> Draft202012Validator:
    schema = schema_registry().contents(name)
    return Draft202012Validator(schema, registry=schema_registry())


def parse_yaml(text: str, file: str) -> tuple[Any, dict[str, tuple[int, int]], list[Problem]]:
    """Parse YAML keeping (line, col) per JSON pointer; duplicate keys are problems, not silent."""
    try:
        node = yaml.compose(text, Loader=_Loader)
        data = yaml.load(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        msg = f"invalid YAML: {exc.problem or exc.context}"
        line, col = (mark.line + 1, mark.column + 1) if mark else (None, None)
        raise ConfigError([Problem(msg, "", file, line, col, "check indentation, quotes and ':' after keys")])
    except yaml.YAMLError as exc:
        raise ConfigError([Problem(f"invalid YAML: {exc}", "", file)])
    positions: dict[str, tuple[int, int]] = {}
    problems: list[Problem] = []
    if node is not None:
        _walk(node, "", positions, problems, file)
    return data, positions, problems


def _walk(node: yaml.Node, pointer: str, positions: dict, problems: list[Problem], file: str) -> None:
    positions.setdefault(pointer, (node.start_mark.line + 1, node.start_mark.column + 1))
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            name = str(key.value)
            child = f"{pointer}/{escape(name)}"
            if name in seen:
                problems.append(Problem(f"duplicate key '{name}'", child, file, key.start_mark.line + 1,
                                        key.start_mark.column + 1, "keep one of them"))
            seen.add(name)
            positions[child + "#key"] = (key.start_mark.line + 1, key.start_mark.column + 1)
            _walk(value, child, positions, problems, file)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, f"{pointer}/{i}", positions, problems, file)


def escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def locate(problem: Problem, positions: dict[str, tuple[int, int]], key: bool = False) -> Problem:
    """Fill line/col from the nearest enclosing node that has a position."""
    pointer = problem.pointer
    if key and pointer + "#key" in positions:
        problem.line, problem.col = positions[pointer + "#key"]
        return problem
    if not positions:                   # no file behind the data: the pointer alone locates it
        return problem
    while pointer not in positions and pointer:
        pointer = pointer.rsplit("/", 1)[0]
    problem.line, problem.col = positions.get(pointer, (1, 1))
    return problem


def schema_problems(data: Any, schema_name: str, file: str,
                    positions: dict[str, tuple[int, int]], prefix: str = "") -> list[Problem]:
    """Every schema violation as a located Problem; unknown keys point at the key itself.

    `prefix`: the pointer of `data` inside its file (e.g. /model for a job's model section).
    """
    out: list[Problem] = []
    for err in validator(schema_name).iter_errors(data):
        base = prefix + "".join(f"/{escape(str(p))}" for p in err.absolute_path)
        if err.validator == "additionalProperties":
            allowed = sorted(err.schema.get("properties", {}))
            for extra in sorted(set(err.instance) - set(allowed)):
                out.append(locate(Problem(f"unknown key '{extra}'", f"{base}/{escape(extra)}", file,
                                           hint=f"allowed here: {', '.join(allowed)}"), positions, key=True))
            continue
        out.append(locate(Problem(_message(err), base, file, hint=_hint(err)), positions))
    return sorted(out, key=lambda p: (p.line or 0, p.col or 0, p.pointer))


def _message(err) -> str:
    if err.validator == "required":
        return err.message.replace("is a required property", "is required here")
    if err.validator == "enum":
        return f"{err.instance!r} is not one of {', '.join(map(str, err.validator_value))}"
    if err.validator in ("type", "oneOf", "anyOf"):
        return f"{err.instance!r} is not valid here: {err.schema.get('description', err.message)}"
    return err.message


def _hint(err) -> str:
    if err.validator == "required":
        return f"add the key; {err.schema.get('properties', {}).get(err.message.split(chr(39))[1], {}).get('description', '')}".rstrip("; ")
    return ""
