"""YAML text read as users write it, every node's position kept for the messages that point into it.

One loader for job files and the package's own data files: 989e12 is a number, duplicate keys, non-finite
and misread numbers are problems, and structural limits (size, depth, expanded aliases) stop a hostile
document before it costs anything. documents.py checks the data read here against the schemas.
"""

from __future__ import annotations

import math
import re
from typing import Any

import yaml

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


def int64(value: float) -> bool:
    """Within YAML's (and SQLite's) 64-bit integers."""
    return -2 ** 63 <= value < 2 ** 63


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
        return None if int64(value) else f"{shown} is too large (beyond 64-bit integers)"
    return None


def escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


