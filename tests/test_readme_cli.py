"""docs/guide.md's Commands table and the exit codes against the CLI: `--help` is the reference, and what the
guide names must exist there (a renamed flag, a new command or exit code fails here, not a user)."""

from __future__ import annotations

import argparse
import re
import signal
from pathlib import Path

from pipeline.cli.parser import EPILOG, build_parser
from pipeline.errors import ExitCode

README = (Path(__file__).resolve().parents[1] / "docs" / "guide.md").read_text(encoding="utf-8")
SIGNALS = {128 + signal.SIGINT, 128 + signal.SIGTERM}      # 130, 143: the shell's convention


def _commands() -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _section(title: str) -> str:
    start = README.index(title)
    return README[start:README.index("\n#", start + len(title))]


def _readme_rows() -> dict[str, str]:
    """Each row of the Commands table: command -> its usage as the README writes it."""
    rows = re.findall(r"^\| `mfu (\w+)([^`]*)` \|", _section("## Commands"), re.M)
    return {name: usage for name, usage in rows}


def test_every_command_has_a_row_and_every_row_a_command():
    assert sorted(_readme_rows()) == sorted(_commands())


def test_every_option_a_row_names_exists():
    commands = _commands()
    unknown = {}
    for name, usage in _readme_rows().items():
        known = {s for action in commands[name]._actions for s in action.option_strings}
        named = set(re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", usage))
        if named - known:
            unknown[name] = sorted(named - known)
    assert unknown == {}


def test_a_row_without_a_placeholder_names_every_option():
    """A row is the README's whole synopsis of its command unless it says `[options]` or `[architecture flags]`:
    compare's row lacked --allow-incomparable and --job-file (the one the action passes), so a reader of the
    README could not know them."""
    missing = {}
    for name, usage in _readme_rows().items():
        if "[options]" in usage or "flags]" in usage:
            continue
        named = set(re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", usage))
        absent = [a.option_strings[-1] for a in _commands()[name]._actions
                  if a.option_strings and a.help != argparse.SUPPRESS and "-h" not in a.option_strings
                  and not set(a.option_strings) & named]
        if absent:
            missing[name] = absent
    assert missing == {}


def test_every_option_has_help_text():
    bare = [f"mfu {name} {action.option_strings or action.dest}" for name, p in _commands().items()
            for action in p._actions if not action.help]
    assert bare == []


def test_mfu_help_lists_every_exit_code_once():
    """The exit codes are said once, by `mfu --help` (docs/cli.md is generated from it); a command's own help
    points there instead of repeating the table (compare, whose codes differ, has its own)."""
    helped = [int(c) for c in re.findall(r"^  (\d+) ", EPILOG, re.M) + re.findall(r"; (\d+): ", EPILOG)]
    assert sorted(helped) == sorted(set(helped)) == sorted({int(c) for c in ExitCode} | SIGNALS)
    repeated = [name for name, p in _commands().items() if name != "compare" and "internal error" in p.format_help()]
    assert repeated == []


def test_compare_help_gives_compare_s_own_exit_codes_as_the_readme_does():
    """`mfu compare --help` ended with `mfu run`'s table, whose 1 is 'a threshold was not met, or a computed
    figure is impossible': for compare, 1 is a gated figure that failed, and 3 a file that is not a result."""
    helped = _commands()["compare"].format_help()
    codes = dict(re.findall(r"^  (\d+) +(.*)$", helped.split("Exit codes", 1)[1], re.M))
    assert codes["1"].startswith("a gated figure failed")
    assert codes["3"].startswith("a file that was read and is not a result")
    assert "threshold" not in helped.split("Exit codes", 1)[1]
    start = README.index("Exit codes: 0 passed")
    paragraph = README[start:README.index("Results go to `--out`", start)]
    in_readme = {int(c) for c in re.findall(r"(?:: |, |\), )(\d+)(?:/\d+)? [a-z]", paragraph.replace("\n", " "))}
    in_readme |= {int(c) for c in re.findall(r"\d+/(\d+) interrupted", paragraph)}
    assert in_readme == {int(c) for c in codes} | {143} == {0, 1, 2, 3, 4, 5, 130, 143}
