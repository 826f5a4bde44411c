"""ARCHITECTURE.md stays true: its module map lists exactly the modules there are, its table list
the tables the SQL chain creates, and imports point one way along the stages it describes.

The rule, precisely (ARCHITECTURE.md, "Imports"):
- base modules (errors, bundled, interrupts, nopandas, progress) import no other part of the package;
- a stage module imports only base modules, its own stage, and stages BEFORE it in the flow
  job -> trace -> analysis -> model, hardware -> checks -> report (it consumes their outputs);
  model and hardware are one stage;
- commands (run and its siblings: batch, executor, demo, compare, changes, gate, history, init, ci,
  locations) import base, stages and each other; only cli (the pipeline/cli package) imports a command,
  and nothing outside cli imports it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "pipeline"
DOC = REPO / "ARCHITECTURE.md"

BASE = {"pipeline", "pipeline.errors", "pipeline.bundled", "pipeline.interrupts", "pipeline.nopandas",
        "pipeline.progress"}
STAGES = ["job", "trace", "analysis", "model", "hardware", "checks", "report"]
RANK = {"job": 0, "trace": 1, "analysis": 2, "model": 3, "hardware": 3, "checks": 4, "report": 5}
# A stage module that is a command of its own, importing forward like commands do, with the reason:
COMMAND_IN_STAGE = {"pipeline.trace.inspect": "`mfu inspect` classifies kernels and reports the GPU the way run would"}


def modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(REPO).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def kind(module: str) -> str:
    """'base', 'cli', 'command' or the stage name."""
    if module in BASE:
        return "base"
    if module == "pipeline.cli" or module.startswith("pipeline.cli."):
        return "cli"
    part = module.split(".")[1]
    if part in STAGES and module not in COMMAND_IN_STAGE:
        return part
    return "command"


def imports(path: Path) -> set[str]:
    """Every pipeline module a file imports, at the top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pipeline"):
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("pipeline"))
    return found


def allowed(importer: str, imported: str) -> bool:
    a, b = kind(importer), kind(imported)
    if b == "base":
        return a != "base" or imported == "pipeline"          # base: __version__ only, nothing else
    if b == "cli":
        return a == "cli"
    if b == "command":
        return a in ("cli", "command")
    if a in ("cli", "command"):
        return True
    return a != "base" and RANK[b] <= RANK[a]


def test_imports_point_one_way():
    known = modules()
    wrong = sorted(f"{m} imports {i} ({kind(m)} -> {kind(i)})"
                   for m, path in known.items() for i in imports(path) if i in known and not allowed(m, i))
    assert wrong == []


def private_uses(path: Path) -> set[str]:
    """Another pipeline module's underscore names a file uses: `from pipeline.x import _n`, or `x._n` where x is
    a pipeline module (or a name) it imported. Dunder names (__version__) are no private helpers."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found, bound = set(), {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pipeline"):
            for a in node.names:
                bound[a.asname or a.name] = f"{node.module}.{a.name}"
                if a.name.startswith("_") and not a.name.startswith("__"):
                    found.add(f"{node.module}.{a.name}")
        elif isinstance(node, ast.Import):
            bound.update({a.asname or a.name: a.name for a in node.names if a.name.startswith("pipeline")})
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound \
                and node.attr.startswith("_") and not node.attr.startswith("__"):
            found.add(f"{bound[node.value.id]}.{node.attr}")
    return found


def test_no_module_uses_another_modules_private_names():
    """A name another module uses is part of its module's interface, so it has no underscore (tests may
    still reach into a private helper on purpose)."""
    assert sorted(f"{m} uses {n}" for m, path in modules().items() for n in private_uses(path)) == []


def test_module_map_lists_every_module():
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Module map", 1)[1].split("\n## ", 1)[0]
    mapped = set(re.findall(r"pipeline/[\w/]+\.py", section))
    actual = {p.relative_to(REPO).as_posix() for p in PACKAGE.rglob("*.py")
              if p.name != "__init__.py" or "\ndef " in p.read_text(encoding="utf-8")}   # a package with code of its own
    assert sorted(actual - mapped) == [], "modules missing from ARCHITECTURE.md's module map"
    assert sorted(mapped - actual) == [], "ARCHITECTURE.md's module map names modules that do not exist"


def test_table_list_names_every_table_the_chain_creates():
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Tables", 1)[1].split("\n## ", 1)[0]
    created = set()
    for sql in (PACKAGE / "trace" / "sql").glob("*.sql"):
        creates = sql.read_text(encoding="utf-8").splitlines()[1]
        created |= {n.strip() for n in creates.removeprefix("-- creates:").split(",") if n.strip() not in ("", "-")}
    named = set(re.findall(r"`(\w+)`", section))
    assert sorted(created - named) == [], "tables missing from ARCHITECTURE.md's table list"
    assert sorted(named - created) == [], "ARCHITECTURE.md lists tables no SQL file creates"


def test_every_query_has_a_test_of_the_same_name():
    """The guide: each query in pipeline/trace/sql has a test of the same name (tests/test_sql_<name>.py)."""
    missing = [sql.name for sql in sorted((REPO / "pipeline" / "trace" / "sql").glob("*.sql"))
               if not (REPO / "tests" / f"test_sql_{sql.stem}.py").exists()]
    assert missing == []


# The style guide asks for functions of about 50 lines and modules of about 400; these are the ceilings past
# which a piece is split, not targets (a rule with no test had drifted: issue #35's review).
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 500


def test_functions_and_modules_stay_readable_lengths():
    long_functions, long_modules = [], []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(REPO).as_posix()
        if text.count("\n") > MAX_MODULE_LINES:
            long_modules.append(f"{name}: {text.count(chr(10))} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                    node.end_lineno is not None and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES:
                long_functions.append(f"{name}:{node.lineno} {node.name}: {node.end_lineno - node.lineno + 1} lines")
    assert long_functions == [], f"functions over {MAX_FUNCTION_LINES} lines: split them"
    assert long_modules == [], f"modules over {MAX_MODULE_LINES} lines: split them by what they do"
