"""sessionflow's home folder, and files only their owner can read: folders 0700, files 0600.

``~/.sessionflow`` (or ``$SESSIONFLOW_HOME``) holds whole conversations: the embedded dev
server's database, the payload store, logs, token stores. Folders are created 0700 and
files 0600 whatever the umask, and folders or files found with looser modes are tightened
(`tighten_home` at start). On Windows modes mean little, and these calls change nothing there.
"""

from __future__ import annotations

import logging
import os
import secrets
import stat
import sys
from pathlib import Path

__all__ = [
    "HOME_ENV",
    "PRIVATE_DIR_MODE",
    "PRIVATE_FILE_MODE",
    "PRIVATE_UMASK",
    "open_private",
    "private_dir",
    "sessionflow_home",
    "tighten",
    "tighten_home",
    "write_private",
]

HOME_ENV = "SESSIONFLOW_HOME"
PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
PRIVATE_UMASK = 0o077
"""The umask of processes sessionflow starts that write under its folder (the dev server)."""

_log = logging.getLogger(__name__)
_WINDOWS = sys.platform == "win32"


def sessionflow_home() -> Path:
    """``$SESSIONFLOW_HOME``, else ``~/.sessionflow`` (read each time, so tests can point it elsewhere)."""
    home = os.environ.get(HOME_ENV, "").strip()
    return Path(home).expanduser() if home else Path.home() / ".sessionflow"


def tighten(path: Path) -> None:
    """Take group and other permissions off `path` (a 0755 folder becomes 0700, a 0644 file 0600).

    Nothing when it is missing, a symbolic link, or already private. A file this user does not
    own cannot be changed: that is logged, not raised (sessionflow still runs).
    """
    if _WINDOWS:
        return
    try:
        info = path.lstat()
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode) or not info.st_mode & 0o077:
        return
    try:
        # Group and other lose every permission; the owner's are kept (0644 -> 0600, 0755 -> 0700).
        os.chmod(path, stat.S_IMODE(info.st_mode) & 0o700)
    except OSError as error:
        _log.warning("cannot make %s private (mode %o): %s", path, stat.S_IMODE(info.st_mode), error)


def private_dir(path: Path, *, root: Path | None = None, tighten_existing: bool = True) -> Path:
    """Create `path` and its missing parents with mode 0700; tighten `path` if it is looser.

    `tighten_existing=False` leaves a folder that was already there as it is (for a folder
    the operator named, which may be shared with other files: only what we create is 0700).

    With `root` (an ancestor of `path`, or `path` itself), the existing folders from `root`
    down to `path` are tightened too: `private_dir(store / "ns" / "session", root=store)`.
    Folders above `root` (the home folder) are never touched.
    """
    missing: list[Path] = []
    current = path
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, PRIVATE_DIR_MODE)
        except FileExistsError:
            pass
    if not tighten_existing:
        return path
    if root is not None:
        for folder in reversed(path.parents):
            if folder.is_relative_to(root):
                tighten(folder)
    tighten(path)
    return path


def open_private(path: Path, flags: int = os.O_WRONLY | os.O_CREAT | os.O_TRUNC) -> int:
    """`os.open` with mode 0600 (a new file is private whatever the umask; an existing one is tightened)."""
    descriptor = os.open(path, flags, PRIVATE_FILE_MODE)
    tighten(path)
    return descriptor


def write_private(path: Path, text: str) -> None:
    """Replace `path` with `text`, mode 0600, whole or not at all: a private temporary file,
    fsynced, then renamed over it (its folder is made 0700 if sessionflow creates it)."""
    private_dir(path.parent, tighten_existing=False)
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def tighten_home(home: Path | None = None) -> Path:
    """Make the sessionflow folder private: itself 0700, and what sits in it, and in its folders.

    Folders two levels down (``server``, ``payloads``, ``media`` and theirs) become 0700 and the
    files in the home folder and in those first folders 0600. The payload store's objects are
    not visited one by one (there may be millions): their folders being 0700 keeps them private.
    """
    home = sessionflow_home() if home is None else home
    private_dir(home)
    if _WINDOWS:
        return home
    try:
        entries = list(home.iterdir())
    except OSError:
        return home
    for entry in entries:
        tighten(entry)
        if entry.is_dir() and not entry.is_symlink():
            try:
                inner = list(entry.iterdir())
            except OSError:
                continue
            for item in inner:
                tighten(item)
    return home
