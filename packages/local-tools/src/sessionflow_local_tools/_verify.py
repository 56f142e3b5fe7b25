"""Verify `write_file` and `edit_file` by content hashes, after a step that died mid-write.

The session asks only when a write's step died, so the question is whether the rename
happened. The basis is taken when the call is deferred (`ToolSpec.verify_basis`, in the
model step) and recorded with the call, so it is durable before the write can start:

- ``write_file``: the sha256 of the file before (or that it was absent). Afterwards, the
  intended content's hash means the write took effect; the file exactly as it was before
  (or still absent) means it did not, so the model may write again. Anything else is
  someone else's change, or ours changed again, and is reported unknown rather than
  failed: a "failed" there could make the model overwrite another writer's work.
- ``edit_file``: the hashes of the file before and after the edit, computed from the file
  as it was when the edit was proposed (the content a person approves). After-hash:
  took effect; before-hash: not applied; else unknown (the file changed since).

A file that cannot be read (a directory now, no permission) is unknown. No basis (it
could not be taken, or the call was recorded without one): ``write_file`` still says
succeeded for the intended content and failed for an absent file; ``edit_file`` says
unknown.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, cast

from sessionflow.kit import EffectUnknown, NoEffect, TookEffect, ToolExecutionError, VerifyResult
from sessionflow_local_tools._blocking import Stop, in_thread
from sessionflow_local_tools._files import require_file
from sessionflow_local_tools._paths import Workspace
from sessionflow_local_tools._writes import MAX_EDIT_BYTES

__all__ = ["edit_basis", "file_sha256", "verify_edit", "verify_write", "write_basis"]

_CHUNK = 1024 * 1024


def _sha256_blocking(stop: Stop, workspace: Path, path: str) -> str | None:
    """The hex sha256 of the file at ``path``; None when nothing is there."""
    with Workspace(workspace) as ws:
        target = ws.resolve(path, follow_last=False, missing_parents=True)
        if target.kind == "missing":
            return None
        require_file(target)
        fd, _ = ws.open_file(target.parts, target.shown)
        digest = hashlib.sha256()
        try:
            offset = 0
            while chunk := os.pread(fd, _CHUNK, offset):
                stop.check()
                digest.update(chunk)
                offset += len(chunk)
        finally:
            os.close(fd)
        return digest.hexdigest()


async def file_sha256(workspace: Path, path: str) -> str | None:
    """The hex sha256 of a workspace file, None when it does not exist; refuses what it cannot read."""
    return await in_thread(lambda stop: _sha256_blocking(stop, workspace, path))


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _encoded(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def _basis(raw: str | None) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        parsed: object = json.loads(raw)
    except ValueError:
        return None
    return cast(dict[str, Any], parsed) if isinstance(parsed, dict) else None


async def write_basis(workspace: Path, path: str) -> str:
    """The basis of a ``write_file`` call: the file's hash now (null when it is absent)."""
    return json.dumps({"before": await file_sha256(workspace, path)})


async def verify_write(workspace: Path, path: str, content: str, basis: str | None) -> VerifyResult:
    """Whether ``write_file(path, content)`` took effect (see the module docstring)."""
    try:
        now = await file_sha256(workspace, path)
    except (ToolExecutionError, OSError) as error:
        return EffectUnknown(reason=f"{path} cannot be read to check it: {_reason(error)}")
    data = _encoded(content)
    if now == _sha(data):
        return TookEffect(
            output=f"Wrote {len(data)} bytes to {path} (verified: the file holds exactly this content)."
        )
    recorded = _basis(basis)
    if recorded is not None and "before" in recorded:
        if now == recorded["before"]:
            state = "is still absent" if now is None else "is as it was before the call"
            return NoEffect(message=f"the write did not take effect: {path} {state}")
        return EffectUnknown(
            reason=f"{path} holds neither what the call wrote nor what it held before; another process may have changed it"
        )
    if now is None:
        return NoEffect(message=f"the write did not take effect: {path} does not exist")
    return EffectUnknown(
        reason=f"{path} holds other content than the call wrote, and nothing was recorded before it"
    )


def _edit_hashes_blocking(
    stop: Stop, workspace: Path, path: str, old_string: str, new_string: str, replace_all: bool
) -> str | None:
    with Workspace(workspace) as ws:
        target = ws.resolve(path, follow_last=False)
        if target.kind == "missing":
            return None
        require_file(target)
        fd, info = ws.open_file(target.parts, target.shown)
        try:
            if info.st_size > MAX_EDIT_BYTES:
                return None
            stop.check()
            data = os.pread(fd, MAX_EDIT_BYTES + 1, 0)
        finally:
            os.close(fd)
    old, new = _encoded(old_string), _encoded(new_string)
    count = data.count(old) if old else 0
    if count == 0 or (count > 1 and not replace_all) or old == new:
        return None  # the edit would be refused: nothing it could write to check against
    changed = data.replace(old, new) if replace_all else data.replace(old, new, 1)
    return json.dumps({"before": _sha(data), "after": _sha(changed)})


async def edit_basis(
    workspace: Path, path: str, old_string: str, new_string: str, *, replace_all: bool = False
) -> str | None:
    """The basis of an ``edit_file`` call: the file's hashes before and after the edit; None
    when the edit could not apply to the file as it is now."""
    return await in_thread(
        lambda stop: _edit_hashes_blocking(stop, workspace, path, old_string, new_string, replace_all)
    )


async def verify_edit(workspace: Path, path: str, basis: str | None) -> VerifyResult:
    """Whether an ``edit_file`` call took effect, from the hashes recorded when it was proposed."""
    recorded = _basis(basis)
    if recorded is None or "before" not in recorded or "after" not in recorded:
        return EffectUnknown(reason="no hashes of the file were recorded when the edit was proposed")
    try:
        now = await file_sha256(workspace, path)
    except (ToolExecutionError, OSError) as error:
        return EffectUnknown(reason=f"{path} cannot be read to check it: {_reason(error)}")
    if now == recorded["after"]:
        return TookEffect(output=f"Edited {path} (verified: the file holds the edited content).")
    if now == recorded["before"]:
        return NoEffect(message=f"the edit was not applied: {path} is unchanged")
    state = "no longer exists" if now is None else "holds neither the content before the edit nor after it"
    return EffectUnknown(reason=f"{path} {state}; another process may have changed it")


def _reason(error: ToolExecutionError | OSError) -> str:
    if isinstance(error, ToolExecutionError):
        return error.message
    return error.strerror or type(error).__name__
