"""YAML documents checked against our JSON Schemas, every problem located by file:line:col.

Job files, the GPU catalog and model definitions are all user-edited YAML; they share one
loader (989e12 is a number, duplicate keys are errors) and one way of turning schema
violations into Problems with a JSON pointer, a position and a hint.
"""

from __future__ import annotations

import contextlib
import copy
import datetime
import hashlib
import json
import math
import re
import sys
from collections.abc import Mapping
from functools import cache
from importlib import metadata, resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:                     # imported when a schema is first used: `mfu inspect` never needs them
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError
    from referencing import Registry

from pipeline.bundled import kept_folder, label as bundled_label, schema_path, schema_paths
from pipeline.errors import ConfigError, Problem


# YAML 1.1 reads 989e12 and 8.0e9 as strings; FLOP counts are written exactly like that.
_FLOAT = re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$")


# Limits checked while loading, by structure (not a timer): a job file is a page of text.
MAX_BYTES = 1 << 20               # file size
MAX_DEPTH = 64                    # nested mappings and lists
MAX_NODES = 100_000               # nodes once every alias is expanded (an alias bomb is exponential)
_TEXT_KEYS = {"tag:yaml.org,2002:str", "tag:yaml.org,2002:merge"}
_KEY_KINDS = {"int": "a number", "float": "a number", "bool": "true/false", "null": "null",
              "timestamp": "a date"}


class LimitError(yaml.MarkedYAMLError):
    """The document is bigger or deeper than any job file (an alias bomb, a generated blob)."""

    def __init__(self, problem: str, mark: yaml.Mark):
        super().__init__(None, None, problem, mark)
        self.mark = mark                          # always known here, unlike problem_mark's type says


class _Limited:
    """The structural limits, checked as nodes are composed (a Composer's compose_node, wrapped)."""

    def _limits(self) -> None:
        self._depth = 0
        self._nodes = 0
        self._sizes: dict[int, int] = {}       # id(node) -> its size with aliases expanded

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):  # type: ignore[attr-defined]     # the Parser's, in the subclasses
            event = self.peek_event()  # type: ignore[attr-defined]
            target = self.anchors.get(event.anchor)  # type: ignore[attr-defined]
            if target is not None and id(target) not in self._sizes:     # still being composed: a cycle
                raise yaml.composer.ComposerError(None, None, f"the alias *{event.anchor} is inside the value "
                                                  f"&{event.anchor} names, a value that contains itself",
                                                  event.start_mark)
            self._count(self._sizes.get(id(target), 1), event.start_mark)
            return super().compose_node(parent, index)  # type: ignore[misc]
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise LimitError(f"nested deeper than {MAX_DEPTH} levels", self.peek_event().start_mark)  # type: ignore[attr-defined]
        before = self._nodes
        try:
            node = super().compose_node(parent, index)  # type: ignore[misc]
        finally:
            self._depth -= 1
        assert node is not None                  # the stubs allow None; PyYAML composes a node or raises
        self._count(1, node.start_mark)
        self._sizes[id(node)] = self._nodes - before
        return node

    def _count(self, n: int, mark: yaml.Mark) -> None:
        self._nodes += n
        if self._nodes > MAX_NODES:
            raise LimitError(f"more than {MAX_NODES:,} values once aliases (*name) are expanded", mark)


class _Loader(_Limited, yaml.SafeLoader):
    """SafeLoader that also reads 989e12 / 8.0e9 as floats, and stops at the structural limits."""

    def __init__(self, stream: str):
        super().__init__(stream)
        self._limits()


_Loader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT, list("-+0123456789"))

# A job file longer than this is read by libyaml's parser (events), composed by PyYAML's Composer under the same
# limits: the pure-Python scanner took 5 s for a 1 MB file of 40,000 keys (issue #33). Anything it cannot read is
# read again by _Loader, whose message a user gets: so a shorter file, and every error, is what it always was.
FAST_PARSE_CHARS = 64 * 1024


def _big_loader() -> type | None:
    """_Loader's nodes from libyaml's events (yaml.cyaml.CParser): PyYAML's Composer (so the limits) in front of
    CParser's own; None without libyaml."""
    try:
        from yaml.cyaml import CParser  # type: ignore[attr-defined]   # the stubs do not list it
    except ImportError:
        return None

    class BigLoader(_Limited, yaml.composer.Composer, CParser, yaml.constructor.SafeConstructor,
                    yaml.resolver.Resolver):
        def __init__(self, stream: str):
            CParser.__init__(self, stream)
            yaml.composer.Composer.__init__(self)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)
            self._limits()

    BigLoader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT, list("-+0123456789"))
    return BigLoader


_BigLoader = _big_loader()


def _fast(text: str) -> tuple[Any, Any] | None:
    """(node, data) of a large job file read by _BigLoader; None when libyaml is missing or the file has any
    problem, for _Loader to read it and say what (its messages and positions are the ones users and tests know)."""
    if _BigLoader is None or len(text) <= FAST_PARSE_CHARS:
        return None
    loader = _BigLoader(text)
    try:
        node = loader.get_single_node()
        return node, (loader.construct_document(node) if node is not None else None)
    except Exception:  # noqa: BLE001 - whatever it is, the pure-Python loader reads the file again and names it
        return None
    finally:
        loader.dispose()


class _ShippedLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):      # type: ignore[misc]
    """libyaml's parser (about 10x faster than _Loader) for the data files the package ships (GPU catalog,
    model presets): the same resolver, positions and duplicate-key checks as job files; the size and
    alias limits guard against hostile job files, which these are not."""


_ShippedLoader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT, list("-+0123456789"))


# Documents found valid are remembered as Python remembers bytecode: an empty file per schema and
# document in this package's __pycache__, or the user's cache folder when Python writes no bytecode
# (bundled.kept_folder; not beside the schemas: configs/ and schemas/ hold shipped files only), so an unchanged job file, catalog or preset list is not validated
# again by the next process (importing jsonschema alone is 0.03-0.07 s of every run). Only a
# document without problems is remembered; its name is a hash of everything the verdict depends on.
VERDICT_CODE = ("job/documents.py",)
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


def _int64(value: float) -> bool:
    """Within YAML's (and SQLite's) 64-bit integers."""
    return -2 ** 63 <= value < 2 ** 63


def _is_integer(checker: Any, value: Any) -> bool:
    """JSON Schema's integer, as YAML's 64-bit ones: a whole float (2e3) still counts, but not one beyond 2^63
    (`covers: 1e308`, `num_gpus: 1e19`), which no count reaches and whose products overflowed a float."""
    if isinstance(value, float):
        return value.is_integer() and _int64(value)
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


def parse_yaml(text: str, file: str, shipped: bool = False) -> tuple[Any, dict[str, tuple[int, int]], list[Problem]]:
    """Parse YAML keeping (line, col) per JSON pointer; duplicate keys and non-finite numbers are problems.

    Oversized, too deep or alias-bomb documents and keys that are not text stop here (ConfigError).
    `shipped`: a data file of the package (catalog, presets), read with libyaml (_ShippedLoader).
    """
    if len(text) > MAX_BYTES:          # text not read from a file (read_job_text stops at MAX_BYTES bytes)
        raise ConfigError([Problem(f"{len(text):,} characters: larger than any job or config file "
                                   f"({MAX_BYTES:,} at most)", "", file, 1, 1, "is this the right file?")])
    loader = node = None
    fast = None if shipped else _fast(text)
    try:
        if fast is not None:
            node, data = fast
        else:
            loader = (_ShippedLoader if shipped else _Loader)(text)
            node = loader.get_single_node()
            data = loader.construct_document(node) if node is not None else None
    except LimitError as exc:
        at = exc.mark
        raise ConfigError([Problem(f"too large: {exc.problem}", "", file, at.line + 1, at.column + 1,
                                   "write the values out; a job file needs no deep nesting or alias chains")]) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        msg = f"invalid YAML: {exc.problem or exc.context}"
        line, col = (mark.line + 1, mark.column + 1) if mark else (None, None)
        raise ConfigError([Problem(msg, "", file, line, col, "check indentation, quotes and ':' after keys")]) from None
    except yaml.reader.ReaderError as exc:     # a NUL or other control character: YAML gives an offset, no mark
        line, col = text.count("\n", 0, exc.position) + 1, exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        col -= line == 1 and text.startswith("\ufeff")    # the offset counts a byte-order mark; no editor shows one
        raise ConfigError([Problem(f"invalid YAML: character #x{exc.character:04x} is not allowed in YAML text", "",
                                   file, line, col, "remove it (a control character such as NUL has no place in "
                                   "a job file)")]) from None
    except yaml.YAMLError as exc:
        raise ConfigError([Problem(f"invalid YAML: {str(exc).splitlines()[0]}", "", file)]) from None
    except (ValueError, TypeError, OverflowError) as exc:  # an explicit tag on a value it cannot read: !!int two
        line, col = _unreadable_at(node)
        raise ConfigError([Problem(f"invalid YAML: a value its tag cannot read ({exc})", "", file, line, col,
                                   "drop the tag (!!int, !!float, ...) or write a value of that type")]) from None
    finally:
        if loader is not None:
            loader.dispose()
    positions: dict[str, tuple[int, int]] = {}
    problems: list[Problem] = []
    if node is not None:
        try:
            _walk(node, "", positions, problems, file)
        except RecursionError:          # a shipped file, read by libyaml, whose alias is inside its own value
            raise ConfigError([Problem("invalid YAML: an alias (*name) inside the value its anchor (&name) names, "
                                       "a value that contains itself", "", file, 1, 1)]) from None
    keys = [p for p in problems if p.message.startswith("key ")]
    if keys:                          # the schema checks cannot even name such keys
        raise ConfigError(keys)
    return data, positions, problems


def _unreadable_at(node: yaml.Node | None) -> tuple[int | None, int | None]:
    """(line, col) of the first scalar whose tag's constructor fails; (None, None) when none does."""
    todo, seen = [node] if node is not None else [], set()
    while todo:
        n = todo.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if isinstance(n, yaml.ScalarNode):
            try:
                _Loader("").construct_object(n)
            except (ValueError, TypeError, OverflowError, yaml.YAMLError):
                return n.start_mark.line + 1, n.start_mark.column + 1
        elif isinstance(n, yaml.MappingNode):
            todo += [v for pair in reversed(n.value) for v in reversed(pair)]
        else:
            todo += reversed(n.value)
    return None, None


def _walk(node: yaml.Node, pointer: str, positions: dict, problems: list[Problem], file: str) -> None:
    positions.setdefault(pointer, (node.start_mark.line + 1, node.start_mark.column + 1))
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            name = str(key.value)
            child = f"{pointer}/{escape(name)}"
            at = (key.start_mark.line + 1, key.start_mark.column + 1)
            if key.tag not in _TEXT_KEYS:
                kind = _KEY_KINDS.get(key.tag.rsplit(":", 1)[-1], "not text")
                shown = repr(name[:40]) if isinstance(key, yaml.ScalarNode) else "a list or mapping"
                problems.append(Problem(f"key {shown} is {kind}, not text", child, file, *at,
                                        "keys are names: write them as plain words, or quote them"))
                continue
            if name in seen:
                problems.append(Problem(f"duplicate key '{name}'", child, file, *at, "keep one of them"))
            seen.add(name)
            positions[child + "#key"] = at
            _walk(value, child, positions, problems, file)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, f"{pointer}/{i}", positions, problems, file)
    elif isinstance(node, yaml.ScalarNode) and (bad := _absurd_number(node)) is not None:
        hint = ("write the number without a leading 0 or ':' (or quote it if it is text)" if "YAML 1.1" in bad
                else "write a finite number of sensible size, e.g. 1.2e+14")
        problems.append(ValueProblem(bad, pointer, file, node.start_mark.line + 1, node.start_mark.column + 1, hint))


class ValueProblem(Problem):
    """A problem with a value itself (a non-finite or misread number): the schema's complaint about the
    same value repeats it, unlike one about a duplicate key's value."""


_YAML11_INT = re.compile(r"^[-+]?(0[0-7]+|[1-9][0-9]*(:[0-5]?[0-9])+)$")   # octal without 0o, sexagesimal


def _absurd_number(node: yaml.ScalarNode) -> str | None:
    """NaN, infinities (also 1e400, which overflows to one), integers beyond 64 bits, and integers YAML 1.1
    reads as another number than written (octal 010, base-60 1:30): never a real input."""
    text = str(node.value).replace("_", "").lower()
    shown = text if len(text) <= 24 else f"{text[:12]}…({len(text)} characters)"
    if node.tag == "tag:yaml.org,2002:float":
        if text.lstrip("+-") in (".nan", ".inf"):
            return f"{shown} is not a finite number"
        try:
            value = float(text)
        except ValueError:
            return None
        return f"{shown} is not a finite number (too large for a float)" if math.isinf(value) else None
    if node.tag == "tag:yaml.org,2002:int":
        if _YAML11_INT.match(text):       # YAML 1.1 reads 010 as octal 8 and 1:30 as base 60 (90)
            read = yaml.SafeLoader.construct_yaml_int(_Loader(""), node)
            if ":" not in text and read == int(text, 10):      # 02, 007: the same number either way
                return None
            return (f"{node.value} is read by YAML 1.1 as {read} ("
                    + ("base 60" if ":" in text else "octal, because of the leading 0") + ")")
        try:
            value = int(text, 0)
        except ValueError:
            return None
        return None if _int64(value) else f"{shown} is too large (beyond 64-bit integers)"
    return None


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
            and not _int64(err.instance) and _wants(_failed_schema(err), "integer"):   # refused by _is_integer
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
