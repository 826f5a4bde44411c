"""The README Quickstart's three-command path (inspect, init, run), run as written: every excerpt line
shown in the README must be a line of what the commands print or write today."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from pipeline.cli import main

README = Path(__file__).resolve().parents[1] / "README.md"


def _section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("Then, from a trace to a report in three commands")
    return text[start:text.index("\n## ", start)]


def _commands(section: str) -> list[list[str]]:
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    return [shlex.split(line, comments=True) for line in block.splitlines() if line.strip()]


def _excerpts(section: str) -> dict[str, list[str]]:
    found = re.findall(r"<!-- quickstart: (\w+)[^>]*-->\n```\w*\n(.*?)```", section, re.S)
    return {name: body.rstrip("\n").splitlines() for name, body in found}


def test_quickstart_commands_print_what_the_readme_shows(tmp_path, monkeypatch, capsys):
    section = _section()
    excerpts = _excerpts(section)
    assert set(excerpts) == {"inspect", "init", "validate", "run"}
    monkeypatch.chdir(tmp_path)
    printed: dict[str, tuple[int, str]] = {}
    for argv in _commands(section):
        assert argv[0] == "mfu"
        if argv[1] == "run":           # the README's fill-in sentence, applied as written
            fills = re.findall(r"`(\w+): (\w+)`", section.split("Fill them in", 1)[1].split("\n\n")[0])
            job = Path("job.yaml")
            text = job.read_text()
            for key, value in fills:
                text = re.sub(rf"^(\s*{key}:) TODO", rf"\1 {value}", text, flags=re.M)
            job.write_text(text)
        code = main(argv[1:])
        out, err = capsys.readouterr()
        printed[argv[1]] = (code, out + err)
        if argv[1] == "init":
            skeleton = Path("job.yaml").read_text()
    assert [printed[c][0] for c in ("synth", "inspect", "init", "validate", "run")] == [0, 0, 0, 3, 0]
    outputs = {"inspect": printed["inspect"][1], "init": skeleton, "validate": printed["validate"][1],
               "run": printed["run"][1]}
    for name, lines in excerpts.items():
        have = {line.rstrip() for line in outputs[name].splitlines()}
        missing = [line for line in lines if line.rstrip() not in have]
        assert missing == [], f"README quickstart excerpt '{name}' no longer matches the output"
