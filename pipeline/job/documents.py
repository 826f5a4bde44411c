"""YAML documents checked against our JSON Schemas, every problem located by file:line:col.

Job files, the GPU catalog and model definitions are all user-edited YAML; they share one
loader (parsing.py: 989e12 is a number, duplicate keys are errors) and one way of turning schema
violations into Problems with a JSON pointer, a position and a hint.
"""

from __future__ import annotations

import contextlib
import copy
import datetime
import hashlib
import json
from collections.abc import Mapping
from functools import cache
from importlib import metadata, resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:                     # imported when a schema is first used: `mfu inspect` never needs them
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError
    from referencing import Registry

from pipeline.bundled import kept_folder, label as bundled_label, schema_path, schema_paths
from pipeline.errors import ConfigError, Problem
from pipeline.job.parsing import escape, int64, parse_yaml


# Documents found valid are remembered as Python remembers bytecode: an empty file per schema and
# document in this package's __pycache__, or the user's cache folder when Python writes no bytecode
# (bundled.kept_folder; not beside the schemas: configs/ and schemas/ hold shipped files only), so an unchanged job file, catalog or preset list is not validated
# again by the next process (importing jsonschema alone is 0.03-0.07 s of every run). Only a
# document without problems is remembered; its name is a hash of everything the verdict depends on.
VERDICT_CODE = ("job/documents.py", "job/parsing.py")      # parsing.int64 decides "integer"
VERDICTS_KEPT = 4096               # then they are all forgotten: a sweep of generated job files must not fill a disk


@cache
def schema_registry() -> Registry:
    from referencing import Registry, Resource
    resources = [(p.name, Resource.from_contents(json.loads(p.read_text(encoding="utf-8"))))
                 for p in schema_paths()]
    return Registry().with_resources(resources)


@cache
def validator(name: str) -> Draft202012Validator:
    """One validator per schema and process (a batch validates many jobs against the same schema)."""
    from jsonschema import Draft202012Validator, validators
    schema = schema_registry().contents(name)
    checker = Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_integer)
    return validators.extend(Draft202012Validator, type_checker=checker)(schema, registry=schema_registry())


# What a schema's keywords do with "type" errors under them. jsonschema yields the errors of a subschema reached
# through these as they are, so a wrong type there is one of iter_errors' own ("type"):
_NAMED_SUBSCHEMAS = ("properties", "patternProperties", "$defs")
_ONE_SUBSCHEMA = ("items", "additionalProperties")       # a schema (additionalProperties false yields no type error)
_KEPT = ("type", "$ref", "$id", "$schema")
# ...and these yield errors of their own kind only (oneOf wraps its branches' errors in one oneOf error), so a
# validator looking for type errors can leave them out; a keyword in neither list stops type_validator.
_NO_TYPE_ERRORS = frozenset({"description", "title", "required", "enum", "const", "oneOf", "anyOf", "not",
                             "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
                             "minItems", "maxItems", "minLength", "maxLength", "pattern", "format",
                             "uniqueItems", "minProperties", "maxProperties", "default", "examples", "$comment"})


@cache
def type_validator(name: str) -> Draft202012Validator:
    """A validator of schema `name` whose iter_errors yields the same "type" errors as validator(name)'s, and
    only those. `mfu compare` names nothing else in a result.json (a value edited to another type); the whole
    schema also tried both branches of the timeline's oneOf and every required, minimum and enum: 57 ms per
    demo result, 13 ms cut down (issue #35)."""
    from jsonschema import Draft202012Validator, validators
    checker = Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_integer)
    return validators.extend(Draft202012Validator, type_checker=checker)(
        _types_only(schema_registry().contents(name)), registry=schema_registry())


def _types_only(schema: Mapping[str, Any]) -> dict[str, Any]:
    """`schema` with only the keywords that can yield a "type" error at the top of iter_errors (the same $id, so
    its "#/$defs/..." references resolve in it)."""
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _KEPT:
            out[key] = value
        elif key in _NAMED_SUBSCHEMAS:
            out[key] = {name: _types_only(sub) for name, sub in value.items()}
        elif key in _ONE_SUBSCHEMA and isinstance(value, Mapping):
            out[key] = _types_only(value)
        elif key == "allOf":
            out[key] = [_types_only(sub) for sub in value]
        elif key not in _NO_TYPE_ERRORS and key not in _ONE_SUBSCHEMA:
            raise ValueError(f"type_validator does not know what schema keyword {key!r} does with type errors")
    return out


def _is_integer(checker: Any, value: Any) -> bool:
    """JSON Schema's integer, as YAML's 64-bit ones: a whole float (2e3) still counts, but not one beyond 2^63
    (`covers: 1e308`, `num_gpus: 1e19`), which no count reaches and whose products overflowed a float."""
    if isinstance(value, float):
        return value.is_integer() and int64(value)
    return isinstance(value, int) and not isinstance(value, bool)


@cache
def _schema(name: str) -> dict[str, Any]:
    return json.loads(schema_path(name).read_text(encoding="utf-8"))


def with_defaults(data: Any, schema_name: str) -> Any:
    """A copy of a schema-valid document with the schema's `default`s filled in where a key is absent.

    Objects are filled recursively; an absent object appears only when the schema gives it a
    default itself (e.g. `{}`), so optional sections such as parallelism stay absent.
    """
    return _fill(data, _schema(schema_name))


def _fill(value: Any, schema: dict[str, Any]) -> Any:
    if not isinstance(value, dict):
        return value
    out = dict(value)
    for key, sub in schema.get("properties", {}).items():
        if key not in out and "default" in sub:
            out[key] = copy.deepcopy(sub["default"])
        if key in out:
            out[key] = _fill(out[key], sub)
    return out


def read_config(path: Path, schema_name: str, what: str) -> tuple[Any, dict[str, tuple[int, int]], str]:
    """A config file the package ships (catalog, presets, kernel classes; a user may edit them) read like a job
    file (positions, duplicate keys, 989e12 as a number) and checked against its schema: any problem is a
    located ConfigError (exit 3). Returns the data, its positions and the file's label for further checks."""
    label = bundled_label(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else f"not UTF-8 text (byte {exc.start})"
        raise ConfigError([Problem(f"cannot read {what}: {why}", file=label)]) from None
    data, positions, problems = parse_yaml(text, label, shipped=True)
    problems = problems or schema_problems(data, schema_name, label, positions)
    if problems:
        raise ConfigError(problems)
    return data, positions, label


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
    A document this schema found valid before (in any process) is not validated again (VERDICT_CODE).
    """
    verdict = _verdict_file(data, schema_name)
    if verdict.is_file():
        return []
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
    if not out:
        remember(verdict)
    return sorted(out, key=lambda p: (p.line or 0, p.col or 0, p.pointer))


def _verdict_file(data: Any, schema_name: str) -> Path:
    """Where "valid" is remembered: named by the document (its repr is exact for the types YAML and
    JSON make, 1 and 1.0 and '1' apart), the schema's name and _verdict_key()."""
    document = hashlib.sha256(f"{_verdict_key()}\0{schema_name}\0{data!r}".encode()).hexdigest()[:32]
    return kept_folder(Path(str(resources.files("pipeline.job")))) / f"valid-{document}"


@cache
def _verdict_key() -> str:
    """What else a verdict depends on: every schema's text (they refer to each other), the code that
    validates, and the versions of jsonschema and referencing (read without importing them)."""
    digest = hashlib.sha256(" ".join(metadata.version(d) for d in ("jsonschema", "referencing")).encode())
    for path in schema_paths():
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    package = resources.files("pipeline")
    for name in VERDICT_CODE:
        digest.update(name.encode() + b"\0" + package.joinpath(name).read_bytes())
    return digest.hexdigest()


def remember(verdict: Path) -> None:
    """A folder that cannot be written means validating again (bundled.kept_folder says where, whatever
    PYTHONDONTWRITEBYTECODE says). Verdicts of one kind share a name prefix ('valid-', 're2-'): at most
    VERDICTS_KEPT of each are kept."""
    kind = verdict.name.split("-")[0] + "-"
    with contextlib.suppress(OSError):
        verdict.parent.mkdir(parents=True, exist_ok=True)
        kept = [f for f in verdict.parent.iterdir() if f.name.startswith(kind)]
        if len(kept) >= VERDICTS_KEPT:
            for old in kept:
                old.unlink(missing_ok=True)
        verdict.touch()


def _failed_schema(err: ValidationError) -> Mapping[str, Any]:
    """The subschema the value failed: an object in every schema we ship (JSON Schema also allows true/false)."""
    return err.schema if isinstance(err.schema, Mapping) else {}


def _message(err: ValidationError) -> str:
    if err.validator == "required":
        return err.message.replace("is a required property", "is required here")
    if err.validator == "enum":
        choices = err.validator_value if isinstance(err.validator_value, list) else []
        return f"{_shown(err.instance)} is not one of {', '.join(map(str, choices))}"
    if err.validator in ("type", "oneOf", "anyOf") and isinstance(err.instance, float) and err.instance.is_integer() \
            and not int64(err.instance) and _wants(_failed_schema(err), "integer"):   # refused by _is_integer
        return f"{_shown(err.instance)} is too large (beyond 64-bit integers)"
    if err.validator in ("type", "oneOf", "anyOf"):
        return f"{_shown(err.instance)} is not valid here: {_failed_schema(err).get('description', err.message)}"
    if err.validator in _BOUNDS:
        return f"{_shown(err.instance)} is {_BOUNDS[err.validator]} {_shown(err.validator_value)}"
    return err.message


def _wants(schema: Mapping[str, Any], *kinds: str) -> bool:
    """One of `kinds` ('integer', 'number') is among the types the schema (or one of its choices) takes."""
    types = schema.get("type", [])
    return bool(set(kinds) & set([types] if isinstance(types, str) else types)) or \
        any(_wants(s, *kinds) for s in schema.get("oneOf", []) + schema.get("anyOf", []))


_BOUNDS = {"minimum": "less than the minimum of", "maximum": "greater than the maximum of",
           "exclusiveMinimum": "not greater than", "exclusiveMaximum": "not less than"}


def _shown(value: Any) -> str:
    """A value as YAML would print it (true, null, 2024-01-01), not as Python does (True, None, datetime.date(...))."""
    if isinstance(value, bool):
        return str(value).lower()
    if value is None:
        return "null"
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, float) and abs(value) >= 1e6 and "e" not in repr(value):
        return next(t for n in range(17) if float(t := f"{value:.{n}e}") == value)    # 9.894e+14, not 989400000000000.0
    return repr(value)


def _hint(err: ValidationError) -> str:
    """What to write instead: the YAML 1.1 reading that surprised, else what the key holds (its description)."""
    schema = _failed_schema(err)
    if err.validator == "required":
        key = err.message.split(chr(39))[1]      # a key a condition requires (region.kind): the condition says why
        said = schema.get("properties", {}).get(key, {}).get("description") or schema.get("description", "")
        return f"add the key; {said}".rstrip("; ")
    if isinstance(err.instance, bool):
        return ("YAML reads an unquoted yes/no/on/off/true/false as true or false: quote it if you mean "
                "the text (\"no\"), or write the value this key takes")
    if isinstance(err.instance, (datetime.date, datetime.datetime)):
        return f"YAML reads an unquoted {err.instance.isoformat()} as a date: quote it (\"{err.instance.isoformat()}\")"
    if isinstance(err.instance, str) and err.instance.strip().endswith("%") and _wants(schema, "number", "integer"):
        number = err.instance.strip().removesuffix("%").strip()
        return f"write the number alone, without '%' ({number} for {number} %)"   # thresholds: {mfu_pct_wall_min: 35%}
    if err.validator in ("type", "oneOf", "anyOf", "enum", "additionalProperties"):
        return ""                     # the message already says what the key holds, or lists the choices
    return f"what goes here: {schema['description']}" if "description" in schema else ""
