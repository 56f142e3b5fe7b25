"""How long a dead worker's cached sessions wait on its sticky queue: 10 s, or the environment's."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any, cast

import pytest

from sessionflow import connect
from sessionflow.temporal import STICKY_QUEUE_TIMEOUT_ENV, build_workers
from sessionflow.temporal.worker._sticky import sticky_queue_timeout
from sessionflow.testing import save_scripted_flow


def test_unset_is_temporals_default() -> None:
    assert sticky_queue_timeout({}) == timedelta(seconds=10)
    assert sticky_queue_timeout({STICKY_QUEUE_TIMEOUT_ENV: "  "}) == timedelta(seconds=10)


def test_the_environment_sets_it_in_seconds() -> None:
    assert sticky_queue_timeout({STICKY_QUEUE_TIMEOUT_ENV: "1.5"}) == timedelta(seconds=1.5)


@pytest.mark.parametrize("raw", ["soon", "0", "-1", "nan", "inf"])
def test_a_bad_value_is_refused_with_its_name(raw: str) -> None:
    with pytest.raises(ValueError, match=STICKY_QUEUE_TIMEOUT_ENV):
        sticky_queue_timeout({STICKY_QUEUE_TIMEOUT_ENV: raw})


async def test_workers_take_it_from_the_environment(
    temporal_address: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = await connect(temporal_address, "default")
    flows = iter(save_scripted_flow(tmp_path / str(n), f"sticky-config-{n}") for n in range(2))
    monkeypatch.delenv(STICKY_QUEUE_TIMEOUT_ENV, raising=False)
    (worker,) = build_workers(client, [next(flows)])
    config = cast(dict[str, Any], worker.config())
    assert config["sticky_queue_schedule_to_start_timeout"] == timedelta(seconds=10)
    monkeypatch.setenv(STICKY_QUEUE_TIMEOUT_ENV, "2")
    (worker,) = build_workers(client, [next(flows)])
    config = cast(dict[str, Any], worker.config())
    assert config["sticky_queue_schedule_to_start_timeout"] == timedelta(seconds=2)
