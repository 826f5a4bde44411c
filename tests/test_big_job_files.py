"""Issue #33: a job file of 40,000 unknown keys is answered at once: a file longer than FAST_PARSE_CHARS is read by
libyaml's parser under the same limits and to the same nodes (anything it cannot read is read again by the pure-Python
loader, whose message the user gets), and an error lists SHOWN_PROBLEMS problems, then how many more."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.errors import SHOWN_PROBLEMS, ConfigError
from pipeline.job import parsing
from pipeline.job.parsing import parse_yaml
from tests.test_hostile_input import JOB

REPO = Path(__file__).resolve().parents[1]
DOCUMENTS = [
    JOB,
    JOB + "description: 'quoted ''text'' with # and : inside'\nthresholds: {mfu_pct_wall_min: 989e12}\n",
    JOB + "analysis:\n  figures:\n    - {name: a, pattern: 'gemm|sm90'}\n    - &f {name: b, pattern: x}\n    - *f\n",
    JOB + "x: |\n  a literal\n    block\ny: >-\n  folded\n  text\nz: [1, 2.5, 8.0e9, true, null, ~, 0x1F, 2024-01-01]\n",
    JOB + "\u00e9t\u00e9: 'caf\u00e9 \U0001F600'\nk: v  # a comment\n",
    JOB + "a: &x {b: 1}\nc:\n  <<: *x\n  d: 2\n",
    # problems: a duplicate key, an alias inside its own value, a tag that cannot read its value, a NUL, a tab,
    # a broken indentation, an alias without its anchor, deep nesting, an alias bomb, a key that is no text
    JOB + "name: twice\n",
    JOB + "x: &r {y: *r}\n",
    JOB + "x: !!int two\n",
    JOB + "x: a\x00b\n",
    JOB + "x:\n\t- 1\n",
    JOB + "x:\n  - 1\n - 2\n",
    JOB + "x: *nowhere\n",
    JOB + "x: " + "[" * (parsing.MAX_DEPTH + 2) + "]" * (parsing.MAX_DEPTH + 2) + "\n",
    JOB + "a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n" for p, c in zip("abcde", "bcdef")),
    JOB + "? [1, 2]\n: x\n",
    JOB + "{unclosed: 1\n",
    *(p.read_text(encoding="utf-8") for p in sorted((REPO / "configs").rglob("*.yaml"))),
]


def _parsed(text: str) -> tuple:
    try:
        return "ok", parse_yaml(text, "job.yaml")
    except ConfigError as exc:
        return "error", [str(p) for p in exc.problems]


@pytest.mark.parametrize("text", DOCUMENTS)
def test_libyaml_reads_every_document_as_the_pure_loader_does(monkeypatch, text):
    """The same data, positions and problems (or the same error) with the fast path taken for every length."""
    before = _parsed(text)
    monkeypatch.setattr(parsing, "FAST_PARSE_CHARS", 0)
    assert _parsed(text) == before


def test_a_large_file_is_not_read_by_the_pure_loader(monkeypatch):
    """40,000 keys (about 0.9 MB): one pass of the fast loader, no _Loader (the pure-Python scanner, 5 s)."""
    text = JOB + "".join(f"unknown_{i}: {i}\n" for i in range(40_000))
    assert len(text) > parsing.FAST_PARSE_CHARS

    def refused(_text: str) -> None:
        raise AssertionError("the pure-Python loader read a large valid file")
    monkeypatch.setattr(parsing, "_Loader", refused)
    data, positions, problems = parse_yaml(text, "job.yaml")
    assert data["unknown_39999"] == 39_999 and positions["/unknown_39999"] == (40_006, 16) and problems == []


def test_forty_thousand_unknown_keys_list_fifty_then_say_how_many_more(tmp_path, capsys):
    job = tmp_path / "keys.yaml"
    job.write_text(JOB + "".join(f"unknown_{i}: {i}\n" for i in range(40_000)))
    assert main(["validate", str(job)]) == 3
    err = capsys.readouterr().err.splitlines()
    assert SHOWN_PROBLEMS == 50 and len(err) == 51
    assert err[0].endswith("keys.yaml:7:1: /unknown_0: unknown key 'unknown_0' (fix: allowed here: analysis, "
                           "description, extends, hardware, kind, model, name, parallelism, region, thresholds, "
                           "trace, workload)")
    assert err[-1] == "and 39,950 more problems (`mfu validate --format json` lists every one)"
    assert main(["validate", "--format", "json", str(job)]) == 3
    [row] = json.loads(capsys.readouterr().out)
    assert len(row["problems"]) == 40_000 and row["problems"][-1]["line"] == 40_006
