"""The Landlock launcher: confine this process with a Landlock ruleset, then exec a command.

Run as a script (``python -I -S _landlock_exec.py SPEC -- ARGV...``; standard library
only, so it starts fast and imports nothing of the worker's). ``SPEC`` is a JSON object
made by `sessionflow_local_tools._sandbox.landlock_spec`:

- ``abi``: the Landlock ABI to use (at most the kernel's); it decides which rights exist;
- ``read``: paths whose whole tree is readable and executable;
- ``write``: paths whose whole tree is readable, writable and executable;
- ``devices``: device files readable and writable (``/dev/null`` and the like);
- ``tcp``: false to refuse every TCP bind and connect (ABI 4 and later);
- ``scope_unix``: true to refuse abstract unix sockets made outside the sandbox (ABI 6);
- ``env``: variables to set (``TMPDIR``).

What is not under any of these paths gets no access at all. The launcher then drops every
capability (the bounding set too, so a root worker's command gains none back on exec),
sets ``no_new_privs`` (a setuid or file-capability helper gains nothing), scopes signals
to the sandbox (ABI 6: no signal reaches the worker or any process outside), enforces the
ruleset and execs ``ARGV``. Anything that fails stops it with exit code 126 and a message
on stderr: a command never runs less confined than it was meant to.
"""

from __future__ import annotations

import ctypes
import json
import os
import stat
import sys
from typing import cast

# The system call numbers are the same on every architecture but alpha (asm-generic).
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
CREATE_RULESET_VERSION = 1 << 0
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS, _PR_CAPBSET_DROP, _PR_CAP_AMBIENT = 38, 24, 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_CAPABILITY_VERSION_3 = 0x20080522
_EPERM, _EINVAL = 1, 22

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK = 1 << 8, 1 << 9, 1 << 10, 1 << 11
MAKE_SYM, REFER, TRUNCATE, IOCTL_DEV = 1 << 12, 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1

READ = EXECUTE | READ_FILE | READ_DIR
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
"""The only rights a rule on a file (not a folder) may hold."""


def fs_rights(abi: int) -> int:
    """Every file system right the ``abi`` knows."""
    rights = (1 << 13) - 1  # ABI 1: EXECUTE .. MAKE_SYM
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


class LaunchError(Exception):
    """The ruleset could not be applied: the command must not run."""


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def abi_version() -> int:
    """The kernel's Landlock ABI version, or minus the errno (ENOSYS: not built in,
    EOPNOTSUPP: built in but not enabled at boot)."""
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    version = libc.syscall(
        ctypes.c_long(_SYS_CREATE_RULESET), None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION)
    )
    return int(version) if version >= 0 else -ctypes.get_errno()


def _check(result: int, what: str) -> int:
    if result < 0:
        errno = ctypes.get_errno()
        raise LaunchError(f"{what}: {os.strerror(errno)} (errno {errno})")
    return result


def _add_path(libc: ctypes.CDLL, ruleset: int, path: str, rights: int, handled: int) -> None:
    try:
        # The spec's paths are real ones: a link found now was put there since, and is not
        # followed (it could lead into a hidden folder).
        fd = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return  # gone since the spec was made: nothing to grant
    except OSError as error:
        raise LaunchError(f"cannot open {path}: {error.strerror}") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISLNK(mode):
            return
        if not stat.S_ISDIR(mode):
            rights &= FILE_RIGHTS
        attr = _PathBeneathAttr(rights & handled, fd)
        _check(
            libc.syscall(
                ctypes.c_long(_SYS_ADD_RULE),
                ctypes.c_int(ruleset),
                ctypes.c_int(_RULE_PATH_BENEATH),
                ctypes.byref(attr),
                ctypes.c_uint32(0),
            ),
            f"landlock_add_rule {path}",
        )
    finally:
        os.close(fd)


def _drop_capabilities(libc: ctypes.CDLL) -> None:
    """Empty the bounding, ambient, effective, permitted and inheritable sets."""
    try:
        with open("/proc/sys/kernel/cap_last_cap") as file:
            last = int(file.read())
    except (OSError, ValueError):
        last = 63
    for cap in range(last + 1):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) == 0:
            continue
        errno = ctypes.get_errno()
        if errno == _EPERM:  # no CAP_SETPCAP: not privileged, and exec gives nothing back under no_new_privs
            break
        if errno != _EINVAL:  # EINVAL: a capability this kernel does not know
            _check(-1, f"dropping capability {cap} from the bounding set")
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = _CapHeader(_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    _check(libc.capset(ctypes.byref(header), data), "capset")


def _paths(spec: dict[str, object], key: str) -> list[str]:
    value = spec.get(key, [])
    if not isinstance(value, list) or not all(isinstance(p, str) for p in value):  # pyright: ignore[reportUnknownVariableType]
        raise LaunchError(f"{key} is not a list of paths")
    return [str(p) for p in value]  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]


def restrict(spec: dict[str, object]) -> None:
    """Apply ``spec`` to this process (see the module's description); raises `LaunchError`."""
    abi = spec.get("abi")
    if not isinstance(abi, int):
        raise LaunchError("abi is not a number")
    env = spec.get("env", {})
    if not isinstance(env, dict):
        raise LaunchError("env is not an object")
    kernel = abi_version()
    if kernel < 1:
        raise LaunchError(f"Landlock is not available in this kernel ({os.strerror(-kernel)})")
    if abi < 1 or abi > kernel:
        raise LaunchError(f"Landlock ABI {abi} asked, the kernel has {kernel}")
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    handled = fs_rights(abi)
    attr = _RulesetAttr(handled, 0, 0)
    if not spec.get("tcp", True):
        if abi < 4:
            raise LaunchError(f"Landlock ABI {abi} cannot refuse TCP (it takes ABI 4)")
        attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP  # and no rule allows any port
    if abi >= 6:
        attr.scoped = SCOPE_SIGNAL | (SCOPE_ABSTRACT_UNIX_SOCKET if spec.get("scope_unix") else 0)
    ruleset = _check(
        libc.syscall(
            ctypes.c_long(_SYS_CREATE_RULESET),
            ctypes.byref(attr),
            ctypes.c_size_t(ctypes.sizeof(attr)),
            ctypes.c_uint32(0),
        ),
        "landlock_create_ruleset",
    )
    try:
        for key, rights in (
            ("read", READ),
            ("write", handled),
            ("devices", READ_FILE | WRITE_FILE | TRUNCATE | IOCTL_DEV),
        ):
            for path in _paths(spec, key):
                _add_path(libc, ruleset, str(path), rights, handled)
        _drop_capabilities(libc)
        _check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "PR_SET_NO_NEW_PRIVS")
        _check(
            libc.syscall(ctypes.c_long(_SYS_RESTRICT_SELF), ctypes.c_int(ruleset), ctypes.c_uint32(0)),
            "landlock_restrict_self",
        )
    finally:
        os.close(ruleset)
    for name, value in env.items():  # pyright: ignore[reportUnknownVariableType]
        os.environ[str(name)] = str(value)  # pyright: ignore[reportUnknownArgumentType]


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        sys.stderr.write("usage: _landlock_exec.py SPEC -- ARGV...\n")
        return 126
    try:
        spec: object = json.loads(argv[1])
        if not isinstance(spec, dict):
            raise LaunchError("the spec is not a JSON object")
        restrict(cast(dict[str, object], spec))
    except (LaunchError, ValueError) as error:
        sys.stderr.write(
            f"sessionflow: the Landlock sandbox could not be applied, the command did not run: {error}\n"
        )
        return 126
    try:
        os.execvp(argv[3], argv[3:])
    except OSError as error:
        sys.stderr.write(f"sessionflow: cannot run {argv[3]}: {error.strerror}\n")
        return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv))
