"""sessionflow's home folders, and files only their owner can read: folders 0700, files 0600.

The folders hold whole conversations: the embedded dev server's database, the payload
store, logs, token stores, configuration. Where they are (`home_layout`):

1. ``$SESSIONFLOW_HOME`` set: everything under it (configuration, data, state).
2. Else ``~/.sessionflow`` exists: everything stays there, so an existing install never
   moves, whatever XDG variables are set later.
3. Else, with any of ``XDG_CONFIG_HOME``, ``XDG_DATA_HOME`` or ``XDG_STATE_HOME`` set (to
   an absolute path; the XDG Base Directory rules ignore a relative one): configuration
   in ``$XDG_CONFIG_HOME/sessionflow``, data (server, payloads, media, tokens) in
   ``$XDG_DATA_HOME/sessionflow``, state (logs, input history) in
   ``$XDG_STATE_HOME/sessionflow``; an unset one takes its XDG default (``~/.config``,
   ``~/.local/share``, ``~/.local/state``).
4. Else ``~/.sessionflow``, for everything (the default layout).

Folders are created 0700 and files 0600 whatever the umask, and folders or files found
with looser modes are tightened (`tighten_home` at start). On Windows modes mean little,
and these calls change nothing there.
"""

from __future__ import annotations

import logging
import os
import secrets
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from sessionflow._environment import read_env

__all__ = [
    "HOME_ENV",
    "PRIVATE_DIR_MODE",
    "PRIVATE_FILE_MODE",
    "PRIVATE_UMASK",
    "XDG_ENV",
    "HomeLayout",
    "home_layout",
    "open_private",
    "private_dir",
    "sessionflow_config_home",
    "sessionflow_home",
    "sessionflow_state_home",
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


XDG_ENV = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME")
"""The XDG Base Directory variables sessionflow honours (when neither `HOME_ENV` nor
``~/.sessionflow`` decides)."""

_XDG_DEFAULTS = {
    "XDG_CONFIG_HOME": ".config",
    "XDG_DATA_HOME": ".local/share",
    "XDG_STATE_HOME": ".local/state",
}


@dataclass(frozen=True)
class HomeLayout:
    """Where sessionflow keeps its files; the three folders are one in every layout but ``xdg``.

    Attributes:
        config: The configuration files (``<framework>.yaml``).
        data: What sessions need: the embedded server, payloads, media, token stores.
        state: What may be lost: logs and the chat's input history.
        source: What decided: ``SESSIONFLOW_HOME``, an existing ``~/.sessionflow``
            (``legacy``), the ``xdg`` variables, or the ``default``.
    """

    config: Path
    data: Path
    state: Path
    source: Literal["SESSIONFLOW_HOME", "legacy", "xdg", "default"]

    @property
    def folders(self) -> tuple[Path, ...]:
        """The distinct folders, in the order config, data, state."""
        return tuple(dict.fromkeys((self.config, self.data, self.state)))


def _xdg(name: str) -> Path | None:
    value = os.environ.get(name, "").strip()
    path = Path(value) if value else None
    return path if path is not None and path.is_absolute() else None


def home_layout() -> HomeLayout:
    """Where the files go now (read from the environment each time, so tests can point it elsewhere)."""
    given = read_env(HOME_ENV, "").strip()
    if given:
        home = Path(given).expanduser()
        return HomeLayout(home, home, home, "SESSIONFLOW_HOME")
    legacy = Path.home() / ".sessionflow"
    if os.path.lexists(legacy):
        return HomeLayout(legacy, legacy, legacy, "legacy")
    chosen = {name: _xdg(name) for name in XDG_ENV}
    if any(path is not None for path in chosen.values()):
        folders = {
            name: (path if path is not None else Path.home() / _XDG_DEFAULTS[name]) / "sessionflow"
            for name, path in chosen.items()
        }
        return HomeLayout(
            folders["XDG_CONFIG_HOME"], folders["XDG_DATA_HOME"], folders["XDG_STATE_HOME"], "xdg"
        )
    return HomeLayout(legacy, legacy, legacy, "default")


def sessionflow_home() -> Path:
    """The data folder: ``$SESSIONFLOW_HOME``, else ``~/.sessionflow`` (or ``$XDG_DATA_HOME/sessionflow``,
    `home_layout`). It holds the server's database, the payload store, media and token stores."""
    return home_layout().data


def sessionflow_config_home() -> Path:
    """The folder of the configuration files (`home_layout`)."""
    return home_layout().config


def sessionflow_state_home() -> Path:
    """The folder of logs and the input history (`home_layout`)."""
    return home_layout().state


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
