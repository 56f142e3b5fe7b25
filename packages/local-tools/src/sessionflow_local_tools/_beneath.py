"""``openat2(RESOLVE_BENEATH)``: open a path below the workspace's descriptor, never outside.

The kernel resolves the whole path relative to the workspace and fails (``EXDEV``) if
the result is not below it, or (``ELOOP``) if any component is a symbolic link, even
when another process moves directories during the lookup. So nothing outside the
workspace is ever opened, not even for a moment before a check refuses it. Python has
no binding for ``openat2`` (Linux 5.6), so it is called through ``syscall(2)``.
"""

from __future__ import annotations

import ctypes
import errno
import os

__all__ = ["available", "open_beneath"]

_SYS_OPENAT2 = 437  # the same number on every Linux architecture (the unified table)
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08
_RETRIES = 16
"""``EAGAIN`` means a rename raced the lookup; the kernel asks us to try again."""


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


_libc = ctypes.CDLL(None, use_errno=True)
_syscall = _libc.syscall
_syscall.restype = ctypes.c_long


def open_beneath(root_fd: int, path: str, flags: int, mode: int = 0) -> int:
    """A new descriptor for ``path`` (relative, link-free) below ``root_fd``; raises `OSError`."""
    encoded = os.fsencode(path or ".")
    how = _OpenHow(flags, mode, _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS)
    for _ in range(_RETRIES):
        fd = _syscall(
            ctypes.c_long(_SYS_OPENAT2),
            ctypes.c_int(root_fd),
            ctypes.c_char_p(encoded),
            ctypes.byref(how),
            ctypes.c_size_t(ctypes.sizeof(how)),
        )
        if fd >= 0:
            return fd
        code = ctypes.get_errno()
        if code not in (errno.EAGAIN, errno.EINTR):
            raise OSError(code, os.strerror(code), path)
    raise OSError(errno.EAGAIN, "the file system kept changing during the lookup", path)


def _probe() -> bool:
    root = os.open("/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.close(open_beneath(root, ".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC))
    except OSError:
        return False
    finally:
        os.close(root)
    return True


available = _probe()
"""Whether this kernel (and its seccomp filter) offers ``openat2``."""
