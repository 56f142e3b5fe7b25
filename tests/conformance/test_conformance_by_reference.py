"""The whole conformance suite once more, with every payload stored by reference.

Threshold 0 puts every payload of the session (start input, step inputs and results,
updates, continue-as-new state) and every body in the payload store, so a case that
passes here proves that no adapter depends on anything kept inline in the history.
"""

from pathlib import Path

import pytest

from sessionflow.temporal import PAYLOADS_ENV
from sessionflow.temporal.storage._payload_store import PAYLOAD_THRESHOLD_ENV
from sessionflow.testing import conformance


@pytest.fixture(autouse=True)
def _every_payload_by_reference(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # The test client reads these when it connects, and the worker children inherit them.
    monkeypatch.setenv(PAYLOAD_THRESHOLD_ENV, "0")
    monkeypatch.setenv(PAYLOADS_ENV, str(tmp_path / "payloads"))


# Only this name is collected here: the plain suite runs from test_conformance.py.
test_conformance_by_reference = conformance.test_conformance

__all__ = ["test_conformance_by_reference"]
