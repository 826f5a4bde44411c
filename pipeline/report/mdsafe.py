"""Text from traces and job files cannot change a Markdown page: no raw HTML, no broken table row.

HTML pages are autoescaped by Jinja; Markdown has no such switch, so the Markdown templates
get one here. Every `{{ value }}` in a `*.md.j2` template is escaped on output (finalize):
`<`, `>` and `&` become entities, `|` and backslashes and backticks are backslash-escaped,
line breaks become spaces, and `*`, `~`, `[`, `]` and an underscore at a word's edge are escaped
outside web addresses (no emphasis, strikethrough, link or footnote). A value the template puts
in a code span, `` `{{ value }}` ``, is rewritten before compiling into `{{ (value) | code }}`:
a code span fenced with more backticks than the value holds, with `|` escaped on table rows
(template lines starting with `|`), so names keep their `<float>`.
Kernel names, GPU and range names, paths, regexes and reasons all go through one of the two;
prose that quotes names in backticks (messages, descriptions) goes through `ticks`, which uses both;
an invalid result's figure through `struck`, escaped inside its strikethrough.
"""

from __future__ import annotations

import re
from typing import Any

import jinja2
from jinja2.ext import Extension

_PLAIN = str.maketrans({"\\": "\\\\", "`": "\\`", "<": "&lt;", ">": "&gt;", "&": "&amp;", "|": "\\|",
                        "\n": " ", "\r": " "})
_INLINE = str.maketrans({"*": "\\*", "~": "\\~", "[": "\\[", "]": "\\]"})
_EDGE_UNDERSCORE = re.compile(r"(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")     # one inside a word cannot emphasise
_URL = re.compile(r"((?:https?://|www\.)\S+)")                           # GitHub links it; a backslash would break it
_TEMPLATE_SPAN = re.compile(r"`([^`\n]*)`")                               # a code span of a template line
_EXPRESSION = re.compile(r"\{\{(.*?)\}\}")
TICKED = re.compile(r"`([^`\n]+)`")                                         # a `quoted` part of prose


class Safe(str):
    """Markdown built here (a fenced code span): written as it is."""


def plain(value: str) -> str:
    """Text as text: no HTML, no table cell break, and no emphasis, strikethrough, link or footnote
    (`*`, `~`, `[`, `]` and an underscore at a word's edge are escaped: GitHub rendered a description's
    `__init__.py` as bold "init" and `~~old~~` struck out). Web addresses stay as written: GitHub links them,
    and a backslash inside would become part of the link."""
    parts = _URL.split(value.translate(_PLAIN))
    return "".join(part if i % 2 else _EDGE_UNDERSCORE.sub(r"\\_", part.translate(_INLINE))
                   for i, part in enumerate(parts))


def code(value: Any, in_table: bool = True) -> Safe:
    """`value` as one inline code span that no backtick, pipe or line break inside can end early.

    A pipe is escaped only in a table row: GitHub then shows `|`, but outside a table it shows `\\|`."""
    text = str(value).replace("\r", " ").replace("\n", " ")
    text = text.replace("|", "\\|") if in_table else text
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return Safe(f"{fence}{pad}{text}{pad}{fence}")


def ticks(value: Any, in_table: bool = False) -> Safe:
    """Prose whose `quoted` parts are code (messages and descriptions write names and commands so, as
    the terminal shows them): those parts as code spans, the rest as plain text. Report pages showed
    the backticks themselves (`trace:` in the index, `mfu demo` under the demo's title)."""
    parts = TICKED.split(str(value))
    return Safe("".join(code(part, in_table) if i % 2 else plain(part) for i, part in enumerate(parts)))


def struck(value: Any, void: bool = True) -> Safe:
    """`value` as plain text, struck out when `void` (an invalid result's figure: not a measurement); "—", no
    figure, is never struck."""
    text = plain(str(value))
    return Safe(f"~~{text}~~" if void and text != "—" else text)


@jinja2.pass_context
def finalize(context: Any, value: Any) -> Any:
    """Escape text written by a Markdown template; HTML templates are autoescaped instead."""
    if isinstance(value, str) and not isinstance(value, Safe) and (context.name or "").endswith(".md.j2"):
        return plain(value)
    return value


class CodeSpans(Extension):
    """Rewrites a template's code span holding a value, `` `{{ x }}` `` or `` `text {{ x }}` ``, to one
    `{{ ('text ' ~ (x)) | code }}` before it compiles. Only a span that was the value alone used to be: in
    `` `region.covers: {{ ... }}` `` the value was escaped as text inside the span, so a backtick in it closed
    the span and the rest showed its backslashes and entities."""

    def preprocess(self, source: str, name: str | None, filename: str | None = None) -> str:
        if not (name or "").endswith(".md.j2"):
            return source
        return "".join(_code_spans(line) for line in source.splitlines(keepends=True))


def _code_spans(line: str) -> str:
    """One template line with each code span that holds a `{{ }}` written as one `code` filter call (pipes escaped
    on table rows, lines starting with `|`); the template's own backticks pair up left to right."""
    call = "code" if line.lstrip().startswith("|") else "code(false)"

    def rewrite(span: re.Match[str]) -> str:
        parts = _EXPRESSION.split(span.group(1))
        if len(parts) == 1:
            return span.group(0)
        joined = " ~ ".join(f"({p.strip()})" if i % 2 else repr(p) for i, p in enumerate(parts) if i % 2 or p)
        return "{{ (" + joined + ") | " + call + " }}"
    return _TEMPLATE_SPAN.sub(rewrite, line)
