"""examples/builtin/notes_agent.py as a user runs it, against the scripted model server.

The provider's base URL points at the scripted server through the environment; the
program is not changed for the test. The first run is SIGKILLed while it asks for the
approval; the second, with ``--resume``, approves: the write runs once and the answer
streams.
"""

from __future__ import annotations

import asyncio
import re
import signal
from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.example_programs._running import EXAMPLES, read_until, start

EXAMPLE = EXAMPLES / "builtin" / "notes_agent.py"
PROMPT = re.compile(r"approve write_notes .*\? \[y/n\] ")


async def test_the_notes_agent_resumes_after_a_crash_at_its_approval(
    temporal_address: str, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("milk\n")
    with ScriptedModelServer() as model:
        model.script(
            "notes",
            [
                ModelReply.call(ScriptedToolCall("call_read", "read_notes", {})),
                ModelReply.call(ScriptedToolCall("call_write", "write_notes", {"text": "milk\neggs\n"})),
                ModelReply(text_chunks=["Added eggs ", "to your notes."]),
            ],
        )
        env = {
            "SESSIONFLOW_SERVER_ADDRESS": temporal_address,
            "OPENAI_BASE_URL": model.base_url("notes"),
            "OPENAI_API_KEY": "unused",
            "NOTES_FILE": str(notes),
        }
        first = await start(EXAMPLE, [], env, tmp_path)
        try:
            shown = await read_until(first, PROMPT, timeout=120)
        finally:
            if first.returncode is None:
                first.send_signal(signal.SIGKILL)
            await first.wait()
        assert first.returncode == -signal.SIGKILL
        assert "[read_notes done]" in shown, shown
        [session_id] = re.findall(r"--resume (notes-\w+)", shown)
        assert notes.read_text() == "milk\n"  # nothing written before the approval

        second = await start(EXAMPLE, ["--resume", session_id], env, tmp_path)
        output, _ = await asyncio.wait_for(second.communicate(b"y\n"), timeout=180)
        text = output.decode()
    assert second.returncode == 0, text
    assert f"resuming session {session_id}" in text, text
    assert PROMPT.search(text), text  # the approval is asked again after the crash
    assert notes.read_text() == "milk\neggs\n"
    # The answer streamed (deltas), then the recorded message.
    assert text.count("Added eggs to your notes.") == 2, text
    assert text.rstrip().endswith("agent> Added eggs to your notes."), text
