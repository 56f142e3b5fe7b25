"""The conformance suite against every framework installed in this workspace, every payload by reference.

The plugin parametrizes the imported test with every (case, framework); see conformance/README.md.

Threshold 0 puts every payload of the session (start input, step inputs and results,
updates, continue-as-new state) and every body in the payload store, so a case that
passes here proves that no adapter depends on anything kept inline in the history. The
suite plays once, this way: the inline path (payloads under the threshold) is what every
other integration test of the core and of the adapters runs on.

After each case meets its expectations, `check_by_reference` (`tests/conformance/by_reference.py`)
proves the by-reference part: the session's history holds only references and the store
holds every payload, every message body and every tool output of the case.
"""

from collections.abc import Iterator
from pathlib import Path

import pytest

from sessionflow.temporal import PAYLOADS_ENV
from sessionflow.temporal.storage._payload_store import PAYLOAD_THRESHOLD_ENV
from sessionflow.testing.conformance import ConformanceRuntime, PlayedCase, test_conformance
from tests.conformance.by_reference import check_by_reference


@pytest.fixture(autouse=True)
def _every_payload_by_reference(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, sessionflow_conformance_runtime: ConformanceRuntime
) -> Iterator[None]:
    # The test client reads these when it connects, and the worker children inherit them.
    store = tmp_path / "payloads"
    monkeypatch.setenv(PAYLOAD_THRESHOLD_ENV, "0")
    monkeypatch.setenv(PAYLOADS_ENV, str(store))

    async def in_the_store(played: PlayedCase) -> None:
        await check_by_reference(played, store)

    sessionflow_conformance_runtime.after_play.append(in_the_store)
    try:
        yield
    finally:
        sessionflow_conformance_runtime.after_play.remove(in_the_store)


__all__ = ["test_conformance"]
