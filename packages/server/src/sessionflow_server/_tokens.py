"""Bearer tokens stored hashed, and the one-time login codes `sessionflow serve` prints.

A token is 256 random bits (`secrets.token_urlsafe(32)`); the store keeps only its SHA-256,
so a leaked store file grants nothing. A login code works once and expires: it is what the
printed URL carries, and the browser exchanges it for a token (`POST /api/v1/login`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from sessionflow import UserError
from sessionflow.home import tighten, write_private

__all__ = ["LOGIN_CODE_LIFETIME", "LoginCodes", "TokenStore", "TokenStoreError", "hash_token"]

LOGIN_CODE_LIFETIME = 600.0
"""Seconds a one-time login code stays valid."""

_FORMAT_VERSION = 1
_log = logging.getLogger("sessionflow_server.tokens")


class TokenStoreError(UserError, ValueError):
    """The token store file cannot be read or written."""


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class TokenStore:
    """Token hashes mapped to users; in memory, or in a JSON file (mode 0600) when given a path.

    The file is ``{"version": 1, "tokens": [{"sha256": hex, "user": name, "created": iso}]}``.
    It is read at start and rewritten whole (to a temporary name, then renamed) on each issue
    or revocation. Another process may change it (``sessionflow serve --revoke-token USER``):
    each lookup compares the file's inode, size and modification time with those last read (a
    `stat`, no read) and reads it again when they differ, so a revoked token is refused at once.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._users: dict[str, str] = {}
        self._records: list[dict[str, str]] = []
        self._stamp: tuple[int, int, int] | None = None
        if path is not None and path.exists():
            tighten(path)  # 0600: an older file, or one copied in, may be readable by others
            self._load(path)

    @property
    def configured(self) -> bool:
        """Kept in a file the operator named (what a non-loopback bind requires)."""
        return self.path is not None

    @staticmethod
    def _stat(path: Path) -> tuple[int, int, int] | None:
        try:
            info = path.stat()
        except FileNotFoundError:
            return None
        return (info.st_ino, info.st_size, info.st_mtime_ns)

    def _load(self, path: Path) -> None:
        stamp = self._stat(path)
        try:
            data: Any = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise TokenStoreError(f"{path}: cannot read the token store: {error}") from None
        records = cast(dict[str, Any], data).get("tokens") if isinstance(data, dict) else None
        if not isinstance(records, list):
            raise TokenStoreError(f'{path}: a token store is {{"version": 1, "tokens": [...]}}')
        users: dict[str, str] = {}
        kept: list[dict[str, str]] = []
        for record in cast(list[Any], records):
            if not isinstance(record, dict):
                raise TokenStoreError(f"{path}: each token is an object with sha256 and user")
            entry = cast(dict[str, Any], record)
            digest, user = entry.get("sha256"), entry.get("user")
            if not isinstance(digest, str) or len(digest) != 64 or not isinstance(user, str) or not user:
                raise TokenStoreError(f"{path}: each token needs a 64-hex sha256 and a non-empty user")
            users[digest.lower()] = user
            kept.append({k: str(v) for k, v in entry.items()})
        self._users, self._records, self._stamp = users, kept, stamp

    def _refresh(self) -> None:
        """Read the file again if it changed since last read or written (call with the lock held)."""
        if self.path is None:
            return
        stamp = self._stat(self.path)
        if stamp == self._stamp:
            return
        if stamp is None:  # removed: no token is valid any more
            self._users, self._records, self._stamp = {}, [], None
            return
        self._load(self.path)

    def issue(self, user: str) -> str:
        """A new token for `user`; only its hash is kept."""
        if not user:
            raise ValueError("a token needs a user")
        token = secrets.token_urlsafe(32)
        digest = hash_token(token)
        with self._lock:
            self._refresh()  # another process may have revoked tokens: do not write them back
            self._users[digest] = user
            self._records.append({"sha256": digest, "user": user, "created": datetime.now(UTC).isoformat()})
            if self.path is not None:
                self._save(self.path)
        return token

    def revoke(self, user: str) -> int:
        """Remove every token of `user`; how many there were. A server reading the file refuses them at once."""
        with self._lock:
            self._refresh()
            kept = [record for record in self._records if record.get("user") != user]
            removed = len(self._records) - len(kept)
            if removed:
                self._records = kept
                self._users = {digest: name for digest, name in self._users.items() if name != user}
                if self.path is not None:
                    self._save(self.path)
            return removed

    def user_of(self, token: str) -> str | None:
        with self._lock:
            try:
                self._refresh()
            except TokenStoreError as error:
                # A file that cannot be read grants nothing (fail closed) until it can be.
                _log.error("%s", error)
                return None
            return self._users.get(hash_token(token))

    def _save(self, path: Path) -> None:
        text = json.dumps({"version": _FORMAT_VERSION, "tokens": self._records}, indent=2)
        write_private(path, text)
        self._stamp = self._stat(path)


@dataclass
class LoginCodes:
    """One-time codes, each for one user, kept hashed in memory until used or expired."""

    lifetime: float = LOGIN_CODE_LIFETIME
    clock: Callable[[], float] = time.monotonic
    _codes: dict[str, tuple[str, float]] = field(default_factory=lambda: {})

    def issue(self, user: str) -> str:
        code = secrets.token_urlsafe(24)
        self._codes[hash_token(code)] = (user, self.clock() + self.lifetime)
        return code

    def redeem(self, code: str) -> str | None:
        """The code's user, once; None for an unknown, used or expired code."""
        now = self.clock()
        for digest, (_, expires) in list(self._codes.items()):
            if expires <= now:
                del self._codes[digest]
        entry = self._codes.pop(hash_token(code), None)
        return entry[0] if entry is not None else None
