"""The human-edited data folders, `configs/` and `schemas/`, as the installed package sees them.

They stay at the repository's top level (people edit them there); `pipeline/_data/` holds
links to them, and a wheel build copies the files in, so a checkout, an editable install and
an installed wheel read the same files by the same names. No module walks up from its own file.
"""

from __future__ import annotations

import sys
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


def label(path: Path) -> str:
    """How messages name a file: `configs/hardware.yaml` for a shipped one, else the path given."""
    resolved = path.resolve()
    for kind in ("configs", "schemas"):
        try:
            return f"{kind}/{resolved.relative_to(_root(kind).resolve()).as_posix()}"
        except ValueError:
            continue
    return str(path)
