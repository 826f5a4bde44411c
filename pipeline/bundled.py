"""The human-edited data folders, `configs/` and `schemas/`, as the installed package sees them.

They stay at the repository's top level (people edit them there); `pipeline/_data/` holds
links to them, and a wheel build copies the files in, so a checkout, an editable install and
an installed wheel read the same files by the same names. No module walks up from its own file.
"""

from __future__ import annotations

import hashlib
import os
import sys
from functools import cache
from importlib import resources
from pathlib import Path


def _root(kind: str) -> Path:
    return Path(str(resources.files("pipeline"))) / "_data" / kind


def config_path(*parts: str) -> Path:
    """A file under configs/, e.g. config_path("hardware.yaml")."""
    return _root("configs").joinpath(*parts)


def schema_path(name: str) -> Path:
    """A JSON Schema under schemas/, e.g. schema_path("job.schema.json")."""
    return _root("schemas") / name


def schema_paths() -> list[Path]:
    return sorted(_root("schemas").glob("*.schema.json"))


def pycache_folder(folder: Path) -> Path:
    """Where Python would keep bytecode for modules in `folder` (its __pycache__, or under PYTHONPYCACHEPREFIX):
    also where code and verdicts derived from the package's own files are kept between processes."""
    if sys.pycache_prefix:
        return Path(sys.pycache_prefix).joinpath(*folder.resolve().parts[1:])
    return folder / "__pycache__"


def user_cache_folder() -> Path | None:
    """$MFU_CACHE_DIR, else $XDG_CACHE_HOME/mfu-pipeline, else ~/.cache/mfu-pipeline; None without a home folder."""
    if os.environ.get("MFU_CACHE_DIR"):
        return Path(os.environ["MFU_CACHE_DIR"])
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]) / "mfu-pipeline"
    try:
        return Path.home() / ".cache" / "mfu-pipeline"
    except (RuntimeError, KeyError):              # HOME unset and a user id without a passwd entry (containers)
        return None


def kept_folder(folder: Path) -> Path:
    """Where code and verdicts derived from the package's files in `folder` (compiled templates, schema and RE2
    verdicts) are kept between processes: beside Python's bytecode (pycache_folder) when Python writes it; when it
    writes none (PYTHONDONTWRITEBYTECODE, -B: a read-only or clean tree) in the user's cache folder, under a
    name of `folder`, so templates still compile once and schemas are still checked once (issue 34: without, a
    cold run was 4.4x the floor, not 3.4x). Writers ignore a folder they cannot write."""
    base = user_cache_folder() if sys.dont_write_bytecode else None
    if base is None:
        return pycache_folder(folder)
    return base / "derived" / hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:16]


def _inside(path: Path) -> str | None:
    """`configs/hardware.yaml` for a file the package ships, else None."""
    resolved = path.resolve()
    for kind in ("configs", "schemas"):
        try:
            return f"{kind}/{resolved.relative_to(_root(kind).resolve()).as_posix()}"
        except ValueError:
            continue
    return None


def citation(path: Path) -> str:
    """How a report cites a file: `configs/hardware.yaml` for a shipped one, the same in every install (reports
    are byte-identical wherever they are made), else the path given."""
    return _inside(path) or str(path)


def label(path: Path) -> str:
    """How messages name a file: a shipped one by the whole path of the file read, which a user can open from any
    folder (in an installed wheel it is only inside the package: .../site-packages/pipeline/_data/configs/); else
    the path given. What is kept (a status record, a history) names it as `kept_names` says."""
    return str(path.resolve()) if _inside(path) else str(path)


@cache        # asked for each message kept (10,000 job files validated at once): the folders do not move
def kept_names() -> dict[str, str]:
    """The package's data folders as this machine has them (installed and resolved), each with its name inside the
    package (`pipeline/_data/configs/`): how a record or a history names a file in them (publish.job_relative),
    so what is kept names no machine's folders."""
    return {str(p): f"pipeline/_data/{kind}/" for kind in ("configs", "schemas")
            for p in (_root(kind), _root(kind).resolve())}
