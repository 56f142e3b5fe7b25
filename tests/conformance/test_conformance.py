"""The conformance suite against every framework installed in this workspace, every payload by reference.

The plugin parametrizes the imported test with every (case, framework); see conformance/README.md.

Threshold 0 puts every payload of the session (start input, step inputs and results,
updates, continue-as-new state) and every body in the payload store, so a case that
passes here proves that no adapter depends on anything kept inline in the history. The
suite plays once, this way: the inline path (payloads under the threshold) is what every
other integration test of the core and of the adapters runs on.
"""

from pathlib import Path

import pytest

from sessionflow.temporal import PAYLOADS_ENV
from sessionflow.temporal.storage._payload_store import PAYLOAD_THRESHOLD_ENV
from sessionflow.testing.conformance import test_conformance


@pytest.fixture(autouse=True)
def _every_payload_by_reference(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # The test client reads these when it connects, and the worker children inherit them.
    monkeypatch.setenv(PAYLOAD_THRESHOLD_ENV, "0")
    monkeypatch.setenv(PAYLOADS_ENV, str(tmp_path / "payloads"))


__all__ = ["test_conformance"]
