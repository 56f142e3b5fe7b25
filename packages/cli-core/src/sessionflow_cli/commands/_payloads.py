"""`sessionflow payloads gc --older-than 30d`: delete the stored payloads of long-ended sessions."""

from __future__ import annotations

from rich.console import Console

from sessionflow.temporal import PayloadStore, collect_payloads, parse_age
from sessionflow_cli._errors import EXIT_OK, UsageError
from sessionflow_cli._temporal_server import connect_engine
from sessionflow_cli.config import CliConfig

__all__ = ["run_payloads"]


def _size(count: int) -> str:
    value = float(count)
    for unit in ("B", "KB", "MB"):
        if value < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"


async def run_payloads(action: str, older_than: str, config: CliConfig, out: Console) -> int:
    """Run `payloads gc`: sessions whose latest run closed before the cutoff lose their objects."""
    if action != "gc":
        raise UsageError(f"unknown payloads action {action!r}; use gc")
    try:
        age = parse_age(older_than)
    except ValueError as error:
        raise UsageError(f"--older-than: {error}") from None
    store = PayloadStore.from_environment()
    engine = await connect_engine(config.server)
    report = await collect_payloads(engine.client, store, older_than=age)
    out.print(
        f"Removed the payloads of {len(report.removed_sessions)} session(s): {report.removed_objects} objects, "
        f"{_size(report.removed_bytes)} ({store.describe()}).",
        highlight=False,
    )
    out.print(
        f"Kept {len(report.kept_running)} running session(s) and {len(report.kept_recent)} that ended "
        f"less than {older_than} ago; removed {report.removed_temporary} stale temporary file(s).",
        highlight=False,
    )
    return EXIT_OK
