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

The user's `PostToolUse` hooks run here, after the tool step, with the recorded result
(`PostToolUseFailure` hooks for a call that failed, with its error); for an MCP tool, an
``updatedMCPToolOutput`` / ``updatedToolOutput`` replaces the text the model sees (Claude
Code drops such a rewrite for its own tools, and so does this). What a hook adds for the
model (``additionalContext``) or the user (``systemMessage``) follows the call's result as
the attachment entries Claude Code writes, so the model sees it where plain shows it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
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

__all__ = ["ToolResult", "tool_result_blocks", "tool_result_entries"]

Json = dict[str, Any]


@dataclass(frozen=True)
class ToolResult:
    """One call's ``tool_result`` block, and the attachments its hooks added after it."""

    block: Json
    attachments: list[Json] = field(default_factory=lambda: [])


async def tool_result_blocks(
    calls: Sequence[PendingCall],
    record_of: Callable[[str], AgentToolCall],
    tools: ToolSet,
    options: ClaudeAgentOptions,
    hook_input: Json,
    *,
    answers: Mapping[str, str] | None = None,
) -> list[ToolResult]:
    """The results of `calls`; `answers` are the sub-agents' answers to ``Agent`` calls."""
    results: list[ToolResult] = []
    for call in calls:
        if call.denial is not None:
            results.append(ToolResult(_block(call.id, call.denial, is_error=True)))
            continue
        answer = (answers or {}).get(call.id)
        if answer is not None:
            # Claude Code hands a sub-agent's report back as one text block.
            report: list[Json] = [{"type": "text", "text": answer}]
            after = await _tool_hooks(
                options, call, hook_input, "PostToolUse", tool_response={"content": report}
            )
            block = {"tool_use_id": call.id, "type": "tool_result", "content": report}
            results.append(ToolResult(block, after.attachments))
            continue
        record = record_of(call.id)
        if record.status is not AgentToolCallStatus.SUCCEEDED:
            if record.status is AgentToolCallStatus.FAILED and record.error and call.name not in tools.specs:
                # The tool's own error text, as Claude Code shows a failed tool's message. A
                # tool spec is sessionflow's, not Claude Code's: it keeps sessionflow's wording.
                text = record.error
            else:
                text = describe_tool_call_outcome(record)
            after = await _tool_hooks(options, call, hook_input, "PostToolUseFailure", error=text)
            results.append(ToolResult(_block(call.id, text, is_error=True), after.attachments))
            continue
        text = describe_tool_call_outcome(record)
        if tools.is_mcp(call.name):
            content: list[Json] = [{"type": "text", "text": text}]
            after = await _tool_hooks(options, call, hook_input, "PostToolUse", tool_response=content)
            # A hook's replacement goes to the model as the hook gave it, as Claude Code sends it.
            shown: object = content if after.replaced is None else after.replaced
            block = {"tool_use_id": call.id, "type": "tool_result", "content": shown}
            results.append(ToolResult(block, after.attachments))
            continue
        after = await _tool_hooks(options, call, hook_input, "PostToolUse", tool_response=text)
        block = _block(call.id, text or _EMPTY_OUTPUT.get(call.name, text), is_error=None)
        if call.name == "Bash":
            block["is_error"] = False
        results.append(ToolResult(block, after.attachments))
    return results


_EMPTY_OUTPUT = {"Bash": "(Bash completed with no output)"}
"""What Claude Code shows the model for a tool that succeeded with no output."""


def tool_result_entries(
    lines: Sequence[str], results: Sequence[ToolResult], *, session_id: str, cwd: Path
) -> list[str]:
    """Transcript user entries for `results`, one per result as Claude Code writes them, each
    followed by its hooks' attachments, chained after the model's last response; each result
    names the response entry that holds its call (``sourceToolAssistantUUID``), which tells a
    reused call ID from an earlier one."""
    parent = last_assistant_uuid(lines)
    # The CLI reads an entry only with the version of the CLI that wrote the transcript.
    version = entry_field(lines, parent, "version")
    entries: list[str] = []
    for result in results:
        block = result.block
        own = str(uuid.uuid4())
        entry: Json = {
            "parentUuid": parent,
            "isSidechain": False,
            "type": "user",
            "message": {"role": "user", "content": [block]},
            "uuid": own,
            "timestamp": _now(),
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
        for attachment in result.attachments:
            own = str(uuid.uuid4())
            note: Json = {
                "parentUuid": parent,
                "isSidechain": False,
                **attachment,
                "type": "attachment",
                "uuid": own,
                "timestamp": _now(),
                "userType": "external",
                "cwd": str(cwd),
                "sessionId": session_id,
            }
            if version is not None:
                note["version"] = version
            entries.append(json.dumps(note, ensure_ascii=False))
            parent = own
    return entries


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _block(call_id: str, text: str, *, is_error: bool | None) -> Json:
    block: Json = {"tool_use_id": call_id, "type": "tool_result", "content": text}
    if is_error is not None:
        block["is_error"] = is_error
    return block


@dataclass(frozen=True)
class _AfterHooks:
    replaced: str | None = None
    """The replacement text a PostToolUse hook gave, if any."""
    attachments: list[Json] = field(default_factory=lambda: [])


async def _tool_hooks(
    options: ClaudeAgentOptions, call: PendingCall, hook_input: Json, event_name: str, **fields: object
) -> _AfterHooks:
    """Run the matching hooks of `event_name` (PostToolUse with the recorded ``tool_response``:
    an MCP tool's content blocks or a Claude Code tool's text; PostToolUseFailure with the
    ``error``): the replacement text one of them gave, and the attachments their outputs add."""
    event = {
        **hook_input,
        "hook_event_name": event_name,
        "tool_name": call.name,
        "tool_input": call.input,
        **fields,
        "tool_use_id": call.id,
    }
    replaced: str | None = None
    attachments: list[Json] = []
    origin = {"hookName": f"{event_name}:{call.name}", "toolUseID": call.id, "hookEvent": event_name}
    for answer in await run_tool_hooks(options, event):
        specific = cast(Json, answer.get("hookSpecificOutput") or {})
        for key in ("updatedToolOutput", "updatedMCPToolOutput"):
            value = specific.get(key)
            if isinstance(value, str) and event_name == "PostToolUse":
                replaced = value
        message = answer.get("systemMessage")
        if isinstance(message, str) and message:
            attachments.append({"attachment": {"type": "hook_system_message", "content": message, **origin}})
        context = specific.get("additionalContext")
        if isinstance(context, str) and context:
            shown = f"<system-reminder>\n{origin['hookName']} hook additional context: {context}\n</system-reminder>"
            attachments.append(
                {
                    "attachment": {"type": "hook_additional_context", "content": [context], **origin},
                    "rendered": [{"content": shown}],
                    "renderedRole": "system",
                }
            )
    return _AfterHooks(replaced=replaced, attachments=attachments)
