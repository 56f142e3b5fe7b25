from __future__ import annotations
from tests.core.conftest import HarnessFactory
from tests.core.helpers import idle_after
from tests.core.test_big_session import _script

async def test_diag(harness_factory: HarnessFactory) -> None:
    harness = await harness_factory()
    sid = "diag"
    harness.script(sid, _script(3), {"read_big": {"effect": "read", "output_bytes": 500_000, "unique_output": True}}, log_seen="sizes")
    await harness.sessions.start_session(sid, "question 1")
    await idle_after(harness, sid, 1)
    assert await harness.sessions.send_user_message(sid, "question 2")
    await idle_after(harness, sid, 2)
    h = await harness.stack.client.get_workflow_handle(sid).fetch_history()
    for e in h.events:
        n = e.ByteSize()
        if n > 300:
            print(e.event_id, e.WhichOneof("attributes"), n)
