"""One run of the Claude Code CLI: at most one model call, every tool call deferred.

A command hook from the CLI's settings (`_hook_command`) answers every PreToolUse with
``defer``, so nothing ever runs inside the CLI: the CLI stops after the model's response
and the step returns its tool calls. A hook from the settings is used, not an in-process
callback, because the CLI may ask before the SDK has registered its callbacks. The same
hook records any call the CLI reports as run (PostToolUse); there should never be one.
"""

from __future__ import annotations

import contextlib
import json
import shlex
import shutil
import sys
import tempfile
import time
from collections import deque
from collections.abc import AsyncIterator, Generator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    ResultMessage,
    StreamEvent,
    ToolUseBlock,
)

from sessionflow import AgentUsage
from sessionflow.kit import AgentEventWriter
from sessionflow_claude_agent_sdk._errors import ClaudeStepError

__all__ = [
    "TERMINAL_SUBTYPES",
    "ClaudeStepError",
    "StepFolders",
    "StepResult",
    "hook_settings",
    "run_cli",
    "step_folders",
]

TERMINAL_SUBTYPES = frozenset(
    {"error_max_turns", "error_max_budget_usd", "error_max_structured_output_retries"}
)
"""The CLI's results that end a turn for good: the turn ends with them, never retried."""

_HOOK_SCRIPT = Path(__file__).with_name("_hook_command.py")
_STDERR_LINES = 40

Json = dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class StepFolders:
    """Private folders of one CLI run; removed when the step ends."""

    root: Path

    @property
    def config(self) -> Path:
        return self.root / "config"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"

    @property
    def hooks(self) -> Path:
        return self.root / "hooks"

    def environment(self) -> dict[str, str]:
        """Variables that keep everything the CLI writes inside these folders."""
        return {
            "CLAUDE_CONFIG_DIR": str(self.config),
            "HOME": str(self.home),
            "TMPDIR": str(self.tmp),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
        }


STALE_AFTER_SECONDS = 24 * 3600
"""Step folders older than this are left over from a killed worker and are removed."""


@contextmanager
def step_folders(config_root: Path) -> Generator[StepFolders]:
    config_root.mkdir(parents=True, exist_ok=True, mode=0o700)
    _remove_stale(config_root)
    folders = StepFolders(root=Path(tempfile.mkdtemp(prefix="step-", dir=config_root)))
    for path in (folders.config, folders.home, folders.tmp, folders.hooks):
        path.mkdir(mode=0o700)
    try:
        yield folders
    finally:
        shutil.rmtree(folders.root, ignore_errors=True)


def _remove_stale(config_root: Path) -> None:
    # A step normally removes its own folder; a SIGKILLed worker cannot. No model step
    # lasts a day, so such a folder belongs to no running step, on any worker.
    deadline = time.time() - STALE_AFTER_SECONDS
    for folder in config_root.glob("step-*"):
        with contextlib.suppress(OSError):
            if folder.is_dir() and folder.stat().st_mtime < deadline:
                shutil.rmtree(folder, ignore_errors=True)


def hook_settings(folders: StepFolders, plan: Json) -> Json:
    """CLI settings: the command hook (with its plan) for PreToolUse and PostToolUse."""
    plan_path = folders.hooks / "plan.json"
    plan_path.write_text(json.dumps(plan), encoding="utf-8")
    command = " ".join(
        shlex.quote(part) for part in (sys.executable, "-I", "-S", str(_HOOK_SCRIPT), str(plan_path))
    )
    hook = {"type": "command", "command": command, "timeout": 60}
    return {event: [{"matcher": "*", "hooks": [hook]}] for event in ("PreToolUse", "PostToolUse")}


def pre_tool_use(decision: str, reason: str | None = None, **extra: Any) -> Json:
    output: Json = {"hookEventName": "PreToolUse", "permissionDecision": decision}
    if reason is not None:
        output["permissionDecisionReason"] = reason
    output.update(extra)
    return {"hookSpecificOutput": output}


@dataclass(kw_only=True)
class StepResult:
    """What one CLI run produced."""

    result: ResultMessage
    usage: AgentUsage
    model_calls: int
    cost_usd: float = 0.0
    """What this run's model requests cost, as the CLI prices them."""
    tool_uses: list[ToolUseBlock] = field(default_factory=lambda: [])


@dataclass(kw_only=True)
class _Stream:
    events: AgentEventWriter
    message_ids: list[str] = field(default_factory=lambda: [])
    input_tokens: dict[str, int] = field(default_factory=lambda: {})
    output_tokens: dict[str, int] = field(default_factory=lambda: {})
    current: str | None = None

    def on_event(self, event: Json) -> None:
        kind = event.get("type")
        if kind == "message_start":
            message = cast(Json, event.get("message") or {})
            self.current = str(message.get("id") or f"call-{len(self.message_ids) + 1}")
            self.message_ids.append(self.current)
            self._usage(cast(Json, message.get("usage") or {}))
        elif kind == "content_block_delta":
            delta = cast(Json, event.get("delta") or {})
            if delta.get("type") == "text_delta":
                self.events.write_text_delta(str(delta.get("text") or ""))
            elif delta.get("type") == "thinking_delta":
                self.events.write_reasoning_delta(str(delta.get("thinking") or ""))
        elif kind == "message_delta":
            self._usage(cast(Json, event.get("usage") or {}))

    def _usage(self, usage: Json) -> None:
        if self.current is None:
            return
        fresh = sum(
            int(usage.get(key) or 0)
            for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        )
        if fresh:
            self.input_tokens[self.current] = fresh
        if usage.get("output_tokens") is not None:
            self.output_tokens[self.current] = int(usage.get("output_tokens") or 0)

    def usage(self) -> AgentUsage:
        return AgentUsage(
            requests=len(self.message_ids),
            input_tokens=sum(self.input_tokens.values()),
            output_tokens=sum(self.output_tokens.values()),
        )


async def run_cli(
    options: ClaudeAgentOptions, prompt: str | list[Json] | None, events: AgentEventWriter
) -> StepResult:
    """Run the CLI until its result: send `prompt` (text, or content blocks with images), or
    (None) let it continue the turn whose tool results the transcript now holds.

    Raises:
        ClaudeStepError: The CLI failed, ended without a result, or reported an error
            (an API error included); the message carries the end of its stderr.
    """
    stderr: deque[str] = deque(maxlen=_STDERR_LINES)
    users_stderr = options.stderr

    def on_stderr(line: str) -> None:
        stderr.append(line)
        if users_stderr is not None:
            # The user's callback reads every line of every step's CLI, as it reads plain's.
            users_stderr(line)

    options.stderr = on_stderr
    stream = _Stream(events=events)
    tool_uses: list[ToolUseBlock] = []
    result: ResultMessage | None = None
    client = ClaudeSDKClient(options=options)
    try:
        await client.connect()
        if isinstance(prompt, str):
            await client.query(prompt)
        elif prompt is not None:
            await client.query(_one_message(prompt))
        async for message in client.receive_response():
            if isinstance(message, StreamEvent):
                if message.parent_tool_use_id is None:
                    stream.on_event(message.event)
            elif isinstance(message, AssistantMessage):
                tool_uses += [b for b in message.content if isinstance(b, ToolUseBlock)]
            elif isinstance(message, ResultMessage):
                result = message
    except ClaudeStepError:
        raise
    except Exception as error:
        raise ClaudeStepError(_with_stderr(f"the Claude Code CLI failed: {error}", stderr)) from error
    finally:
        await client.disconnect()
    if result is None:
        raise ClaudeStepError(_with_stderr("the Claude Code CLI ended without a result", stderr))
    if result.subtype in TERMINAL_SUBTYPES:
        # How Claude Code ends a turn for good (a limit reached): the runner ends the turn
        # the same way; a retry would only repeat the request.
        pass
    elif result.is_error and result.stop_reason != "tool_deferred":
        detail = result.result or ", ".join(result.errors or []) or result.subtype
        reason = result.terminal_reason or result.subtype
        raise ClaudeStepError(
            _with_stderr(f"the Claude Code CLI reported an error ({reason}): {detail}", stderr)
        )
    return StepResult(
        result=result,
        usage=stream.usage(),
        model_calls=len(stream.message_ids),
        tool_uses=tool_uses,
        cost_usd=float(result.total_cost_usd or 0.0),
    )


async def _one_message(content: list[Json]) -> AsyncIterator[Json]:
    yield {"type": "user", "message": {"role": "user", "content": content}, "parent_tool_use_id": None}


def _with_stderr(message: str, stderr: deque[str]) -> str:
    lines = [line.rstrip() for line in stderr if line.strip()]
    return message if not lines else message + "\nCLI stderr (last lines):\n" + "\n".join(lines[-10:])
