"""Tool results as the model sees them: written into the transcript before a resumed step.

A resumed model step writes a user entry with a ``tool_result`` block for every call
of the model's last response, in the order the model asked for them, shaped as Claude
Code shapes its own results, then resumes the CLI without a prompt:

* a success of a custom SDK MCP tool or a tool spec: the text as a list of one text block;
  of `Bash`: the text with ``is_error: false``; of another Claude Code tool: the text;
* a failure, rejection or unknown outcome: `describe_tool_call_outcome` with
  ``is_error: true``;
* a call the user's hooks or permission options denied: Claude Code's denial text with
  ``is_error: true`` (the call never ran).

The user's `PostToolUse` hooks run here, after the tool step, with the recorded result;
for an MCP tool, an ``updatedMCPToolOutput`` / ``updatedToolOutput`` replaces the text the
model sees (Claude Code drops such a rewrite for its own tools, and so does this).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from claude_agent_sdk import ClaudeAgentOptions

from sessionflow import AgentToolCall, AgentToolCallStatus
from sessionflow.kit import describe_tool_call_outcome
from sessionflow_claude_agent_sdk._permissions import run_tool_hooks
from sessionflow_claude_agent_sdk._tools import ToolSet
from sessionflow_claude_agent_sdk._transcript import (
    PendingCall,
    entry_field,
    last_assistant_uuid,
    tool_use_entry_uuid,
)

__all__ = ["tool_result_blocks", "tool_result_entries"]

Json = dict[str, Any]


async def tool_result_blocks(
    calls: Sequence[PendingCall],
    record_of: Callable[[str], AgentToolCall],
    tools: ToolSet,
    options: ClaudeAgentOptions,
    hook_input: Json,
    *,
    answers: Mapping[str, str] | None = None,
) -> list[Json]:
    """The results of `calls`; `answers` are the sub-agents' answers to ``Agent`` calls."""
    blocks: list[Json] = []
    for call in calls:
        if call.denial is not None:
            blocks.append(_block(call.id, call.denial, is_error=True))
            continue
        answer = (answers or {}).get(call.id)
        if answer is not None:
            # Claude Code hands a sub-agent's report back as one text block.
            blocks.append(
                {"tool_use_id": call.id, "type": "tool_result", "content": [{"type": "text", "text": answer}]}
            )
            continue
        record = record_of(call.id)
        if record.status is AgentToolCallStatus.FAILED and record.error and call.name not in tools.specs:
            # The tool's own error text, as Claude Code shows a failed tool's message. A tool
            # spec is sessionflow's, not Claude Code's: it keeps sessionflow's wording.
            blocks.append(_block(call.id, record.error, is_error=True))
            continue
        if record.status is not AgentToolCallStatus.SUCCEEDED:
            blocks.append(_block(call.id, describe_tool_call_outcome(record), is_error=True))
            continue
        text = describe_tool_call_outcome(record)
        if tools.is_mcp(call.name):
            content: list[Json] = [{"type": "text", "text": text}]
            replaced = await _post_tool_use(options, call, content, hook_input)
            # A hook's replacement goes to the model as the hook gave it, as Claude Code sends it.
            shown: object = content if replaced is None else replaced
            blocks.append({"tool_use_id": call.id, "type": "tool_result", "content": shown})
            continue
        await _post_tool_use(options, call, text, hook_input)
        block = _block(call.id, text, is_error=None)
        if call.name == "Bash":
            block["is_error"] = False
        blocks.append(block)
    return blocks


def tool_result_entries(lines: Sequence[str], blocks: list[Json], *, session_id: str, cwd: Path) -> list[str]:
    """Transcript user entries for `blocks`, one per result as Claude Code writes them, chained
    after the model's last response; each names the response entry that holds its call
    (``sourceToolAssistantUUID``), which tells a reused call ID from an earlier one."""
    parent = last_assistant_uuid(lines)
    # The CLI reads an entry only with the version of the CLI that wrote the transcript.
    version = entry_field(lines, parent, "version")
    entries: list[str] = []
    for block in blocks:
        own = str(uuid.uuid4())
        entry: Json = {
            "parentUuid": parent,
            "isSidechain": False,
            "type": "user",
            "message": {"role": "user", "content": [block]},
            "uuid": own,
            "timestamp": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "sourceToolAssistantUUID": tool_use_entry_uuid(lines, str(block["tool_use_id"])),
            "userType": "external",
            "cwd": str(cwd),
            "sessionId": session_id,
        }
        if version is not None:
            entry["version"] = version
        # Written as json.dumps writes by default: the CLI skipped the entry when it was
        # written with compact separators, and then did not continue the turn.
        entries.append(json.dumps(entry, ensure_ascii=False))
        parent = own
    return entries


def _block(call_id: str, text: str, *, is_error: bool | None) -> Json:
    block: Json = {"tool_use_id": call_id, "type": "tool_result", "content": text}
    if is_error is not None:
        block["is_error"] = is_error
    return block


async def _post_tool_use(
    options: ClaudeAgentOptions, call: PendingCall, response: object, hook_input: Json
) -> str | None:
    """Run the matching PostToolUse hooks with the recorded `response` (an MCP tool's content
    blocks, or a Claude Code tool's text); the replacement text one of them gave, if any."""
    event = {
        **hook_input,
        "hook_event_name": "PostToolUse",
        "tool_name": call.name,
        "tool_input": call.input,
        "tool_response": response,
        "tool_use_id": call.id,
    }
    replaced: str | None = None
    for answer in await run_tool_hooks(options, event):
        specific = cast(Json, answer.get("hookSpecificOutput") or {})
        for key in ("updatedToolOutput", "updatedMCPToolOutput"):
            value = specific.get(key)
            if isinstance(value, str):
                replaced = value
    return replaced
