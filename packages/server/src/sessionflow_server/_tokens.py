"""Bearer tokens stored hashed, and the one-time login codes `sessionflow serve` prints.

A token is 256 random bits (`secrets.token_urlsafe(32)`); the store keeps only its SHA-256,
so a leaked store file grants nothing. A login code works once and expires: it is what the
printed URL carries, and the browser exchanges it for a token (`POST /api/v1/login`).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from sessionflow import UserError
from sessionflow.home import private_dir, tighten

__all__ = ["LOGIN_CODE_LIFETIME", "LoginCodes", "TokenStore", "TokenStoreError", "hash_token"]

LOGIN_CODE_LIFETIME = 600.0
"""Seconds a one-time login code stays valid."""

_FORMAT_VERSION = 1


class TokenStoreError(UserError, ValueError):
    """The token store file cannot be read or written."""


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class TokenStore:
    """Token hashes mapped to users; in memory, or in a JSON file (mode 0600) when given a path.

    The file is ``{"version": 1, "tokens": [{"sha256": hex, "user": name, "created": iso}]}``.
    It is read at start and rewritten whole (to a temporary name, then renamed) on each issue.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._users: dict[str, str] = {}
        self._records: list[dict[str, str]] = []
        if path is not None and path.exists():
            tighten(path)  # 0600: an older file, or one copied in, may be readable by others
            self._load(path)

    @property
    def configured(self) -> bool:
        """Kept in a file the operator named (what a non-loopback bind requires)."""
        return self.path is not None

    def _load(self, path: Path) -> None:
        try:
            data: Any = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise TokenStoreError(f"{path}: cannot read the token store: {error}") from None
        records = cast(dict[str, Any], data).get("tokens") if isinstance(data, dict) else None
        if not isinstance(records, list):
            raise TokenStoreError(f'{path}: a token store is {{"version": 1, "tokens": [...]}}')
        for record in cast(list[Any], records):
            if not isinstance(record, dict):
                raise TokenStoreError(f"{path}: each token is an object with sha256 and user")
            entry = cast(dict[str, Any], record)
            digest, user = entry.get("sha256"), entry.get("user")
            if not isinstance(digest, str) or len(digest) != 64 or not isinstance(user, str) or not user:
                raise TokenStoreError(f"{path}: each token needs a 64-hex sha256 and a non-empty user")
            self._users[digest.lower()] = user
            self._records.append({k: str(v) for k, v in entry.items()})

    def issue(self, user: str) -> str:
        """A new token for `user`; only its hash is kept."""
        if not user:
            raise ValueError("a token needs a user")
        token = secrets.token_urlsafe(32)
        digest = hash_token(token)
        with self._lock:
            self._users[digest] = user
            self._records.append({"sha256": digest, "user": user, "created": datetime.now(UTC).isoformat()})
            if self.path is not None:
                self._save(self.path)
        return token

    def user_of(self, token: str) -> str | None:
        return self._users.get(hash_token(token))

    def _save(self, path: Path) -> None:
        text = json.dumps({"version": _FORMAT_VERSION, "tokens": self._records}, indent=2)
        private_dir(path.parent, tighten_existing=False)
        temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as file:
                file.write(text)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, path)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise


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
