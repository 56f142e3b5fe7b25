"""Clean-up of the payload store: objects of sessions that ended long enough ago.

The store groups objects by session (folder ``<namespace>/<session>/`` locally, key prefix
``.../wi/<session>/`` on S3). A session's objects are deleted only when the server says
its latest run is closed (stopped, failed, terminated...) and closed before the cutoff, or
when the server no longer knows it at all and its objects are all older than the cutoff.
A running session is never touched, whatever its age.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from sessionflow.temporal.storage._local_driver import SHARED_SCOPE, scope_name
from sessionflow.temporal.storage._payload_store import PayloadStore

__all__ = ["PayloadGcReport", "collect_payloads", "parse_age"]

_TEMP_AGE = timedelta(hours=1)
"""A temporary file older than this belongs to a write that died (a SIGKILLed worker)."""


@dataclass(kw_only=True)
class PayloadGcReport:
    """What a clean-up removed and kept."""

    removed_sessions: list[str] = field(default_factory=lambda: [])
    kept_running: list[str] = field(default_factory=lambda: [])
    kept_recent: list[str] = field(default_factory=lambda: [])
    removed_objects: int = 0
    removed_bytes: int = 0
    removed_temporary: int = 0


def parse_age(text: str) -> timedelta:
    """``30d``, ``12h``, ``90m``, ``45s`` or ``2w`` as a duration; ValueError otherwise."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
    value = text.strip().lower()
    if len(value) < 2 or value[-1] not in units or not value[:-1].isdigit():
        raise ValueError(f"{text!r} is not an age such as 30d, 12h, 90m or 45s")
    return timedelta(seconds=int(value[:-1]) * units[value[-1]])


async def _decide(client: Client, session_id: str, cutoff: datetime, newest_object: float) -> str:
    """ "running", "recent" (ended after the cutoff, or objects too new), or "remove"."""
    try:
        description = await client.get_workflow_handle(session_id).describe()
    except RPCError as error:
        if error.status is not RPCStatusCode.NOT_FOUND:
            raise
        # Gone from the server (its retention passed): the objects go once they are old enough.
        return "remove" if newest_object < cutoff.timestamp() else "recent"
    if description.status in (
        None,
        WorkflowExecutionStatus.RUNNING,
        WorkflowExecutionStatus.CONTINUED_AS_NEW,
    ):
        return "running"
    close_time = description.close_time
    return "remove" if close_time is not None and close_time < cutoff else "recent"


async def collect_payloads(
    client: Client,
    store: PayloadStore,
    *,
    older_than: timedelta,
    now: datetime | None = None,
) -> PayloadGcReport:
    """Delete the objects of sessions that ended more than `older_than` ago.

    Reads the namespace of `client`. Never deletes a running session's objects.
    """
    moment = now or datetime.now(UTC)
    cutoff = moment - older_than
    report = PayloadGcReport()
    if store.is_s3:
        await _collect_s3(client, store, cutoff, report)
    else:
        await _collect_folder(client, store.folder / scope_name(client.namespace), cutoff, report)
    return report


def _session_of(folder: Path) -> str | None:
    marker = folder / ".session-id"
    if folder.name.startswith("sha256-"):
        return marker.read_text() if marker.is_file() else None
    return unquote(folder.name)


def _session_folders(namespace_folder: Path) -> list[Path]:
    if not namespace_folder.is_dir():
        return []
    return sorted(path for path in namespace_folder.iterdir() if path.is_dir())


def _scan(folder: Path) -> tuple[int, int, float, list[Path]]:
    """Objects, bytes, newest modification time, and stale temporary files of one session folder."""
    count = size = 0
    newest = 0.0
    stale: list[Path] = []
    limit = time.time() - _TEMP_AGE.total_seconds()
    for root, _, files in os.walk(folder):
        for name in files:
            path = Path(root) / name
            stat = path.stat()
            if name.startswith(".tmp-"):
                if stat.st_mtime < limit:
                    stale.append(path)
                continue
            count += 1
            size += stat.st_size
            newest = max(newest, stat.st_mtime)
    return count, size, newest, stale


async def _collect_folder(
    client: Client, namespace_folder: Path, cutoff: datetime, report: PayloadGcReport
) -> None:
    for folder in await asyncio.to_thread(_session_folders, namespace_folder):
        count, size, newest, stale = await asyncio.to_thread(_scan, folder)
        for path in stale:
            await asyncio.to_thread(path.unlink, True)
            report.removed_temporary += 1
        session_id = await asyncio.to_thread(_session_of, folder)
        if session_id is None or folder.name == SHARED_SCOPE:
            continue
        verdict = await _decide(client, session_id, cutoff, newest)
        if verdict == "running":
            report.kept_running.append(session_id)
        elif verdict == "recent":
            report.kept_recent.append(session_id)
        else:
            await asyncio.to_thread(shutil.rmtree, folder)
            report.removed_sessions.append(session_id)
            report.removed_objects += count
            report.removed_bytes += size


async def _collect_s3(client: Client, store: PayloadStore, cutoff: datetime, report: PayloadGcReport) -> None:
    from sessionflow.temporal.storage._s3_store import PrefixedS3Client, s3_driver

    driver = s3_driver(store)
    s3 = driver._client  # pyright: ignore[reportPrivateUsage] - our own PrefixedS3Client
    assert isinstance(s3, PrefixedS3Client)
    api: Any = await s3.client()
    # The SDK's keys: v0/ns/<namespace>/wt/<type>/wi/<session>/ri/<run>/d/sha256/<hex>.
    prefix = f"{s3.prefix}v0/ns/{client.namespace}/"
    sessions: dict[str, list[tuple[str, int, float]]] = {}
    paginator = api.get_paginator("list_objects_v2")
    async for page in paginator.paginate(Bucket=s3.bucket, Prefix=prefix):
        for item in page.get("Contents", []):
            key: str = item["Key"]
            parts = key[len(prefix) :].split("/")
            if len(parts) > 3 and parts[0] == "wt" and parts[2] == "wi":
                sessions.setdefault(unquote(parts[3]), []).append(
                    (key, int(item.get("Size", 0)), item["LastModified"].timestamp())
                )
    try:
        for session_id, objects in sorted(sessions.items()):
            verdict = await _decide(client, session_id, cutoff, max(o[2] for o in objects))
            if verdict == "running":
                report.kept_running.append(session_id)
                continue
            if verdict == "recent":
                report.kept_recent.append(session_id)
                continue
            for start in range(0, len(objects), 1000):
                batch = objects[start : start + 1000]
                await api.delete_objects(
                    Bucket=s3.bucket, Delete={"Objects": [{"Key": k} for k, _, _ in batch]}
                )
            report.removed_sessions.append(session_id)
            report.removed_objects += len(objects)
            report.removed_bytes += sum(size for _, size, _ in objects)
    finally:
        await s3.aclose()
