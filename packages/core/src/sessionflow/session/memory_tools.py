"""Guarded memory's tools (`remember`, `recall`, `forget`), which the session runs itself.

They need no step: the memory lives in the session (`SessionFields.memory`), so the call
runs inside the workflow and is recorded like any tool call.
"""

from __future__ import annotations

from datetime import datetime

from sessionflow.session.errors import SessionStateError
from sessionflow.session.memory import MemoryCode, MemoryStore
from sessionflow.session.tool_call_records import ToolCallRecords
from sessionflow.session.tools import AgentToolCall, AgentToolCallStatus, tool_arguments_object

__all__ = ["MemoryTools"]


class MemoryTools(ToolCallRecords):
    """Runs a memory tool call against the session's guarded memory."""

    def run_memory_tool(self, record: AgentToolCall, now: datetime) -> AgentToolCall:
        """Run `remember`, `recall` or `forget` inside the session and record the outcome."""
        memory = self.memory
        if memory is None:
            raise SessionStateError("guarded memory is not enabled for this session")
        self.move_tool_call(record.tool_call_id, AgentToolCallStatus.RUNNING)
        arguments = tool_arguments_object(record.arguments) or {}
        key, text = str(arguments.get("key", "")), str(arguments.get("text", ""))
        owner = memory.owner
        if record.tool_name == "recall":
            output = MemoryStore.render(memory.recall(user=owner, now=now))
            return self.move_tool_call(record.tool_call_id, AgentToolCallStatus.SUCCEEDED, output=output)
        if record.tool_name == "remember":
            code = memory.write(key, text, source=f"model:{self._require_turn()}", user=owner, now=now)
        else:
            code = memory.forget(key, user=owner)
        if code is MemoryCode.OK:
            done = "remembered" if record.tool_name == "remember" else "forgot"
            return self.move_tool_call(
                record.tool_call_id, AgentToolCallStatus.SUCCEEDED, output=f"{done} {key!r}"
            )
        return self.move_tool_call(
            record.tool_call_id,
            AgentToolCallStatus.FAILED,
            error=f"memory {record.tool_name} refused: {code.value}",
        )
