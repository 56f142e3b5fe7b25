"""The chaos soak at smoke size: 20 sessions, 2 worker SIGKILLs, one dev server restart."""

from __future__ import annotations

import pytest

from bench.soak import run_soak


async def test_soak_smoke() -> None:
    report = await run_soak(20, kills=2, kill_every=(1.5, 3.0), timeout=170)
    print("\n".join(report.lines()))
    assert report.worker_kills == 2 and report.server_restarts == 1
    assert report.unfinished == []
    assert report.turns_final == 60
    assert report.duplicate_single_attempt == []
    assert report.idempotent_key_mismatch == []
    assert report.message_problems == []
    assert report.unexplained_outcome_unknown == []
    assert report.calls_finished == 20 * 5
    assert report.succeeded_without_run == []
    # A call that ended outcome_unknown may have died before its tool body started.
    assert sum(report.tool_runs.values()) >= 20 * 5 - report.outcome_unknown


@pytest.mark.slow  # its time is its schedule: CONTRIBUTING.md, "Slow tests"
async def test_rolling_restarts_smoke() -> None:
    # 4 workers restarted one by one while turns run and approvals wait (each waits 6 s):
    # SIGTERM with a 3 s grace, and SIGKILL at the 2nd and 5th restart.
    report = await run_soak(
        24,
        workers=4,
        rolling=True,
        kills=6,
        kill_every=(0.5, 1.0),
        grace=3.0,
        approve_after=6.0,
        restart_server=False,
        timeout=170,
    )
    print("\n".join(report.lines()))
    assert report.worker_sigterms >= 2 and report.worker_kills >= 1
    assert report.sigterm_exits == []
    assert report.unfinished == []
    assert report.turns_final == 24 * 3
    assert report.message_problems == []
    assert report.duplicate_single_attempt == []
    assert report.idempotent_key_mismatch == []
    assert report.unexplained_outcome_unknown == []
    assert report.succeeded_without_run == []
    assert report.calls_finished == 24 * 5
