"""`ClaudeAgentRunner`: the Claude Agent SDK behind sessionflow's runner contract."""

from __future__ import annotations

import json
import os
import shlex
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeAlias, cast

from claude_agent_sdk import ClaudeAgentOptions, HookMatcher

from sessionflow.plugins import ToolSpec
from sessionflow.session import (
    AgentFrameworkRunner,
    AgentToolCall,
    AgentToolCallStatus,
    AgentTurnContext,
    AgentTurnOutcome,
    DeferredToolCall,
    DeferredToolExecution,
    FrameworkMessage,
    MessageRole,
    ToolCallsRequested,
    ToolExecutionResult,
    TurnAborted,
    TurnCompleted,
    UnsupportedOptionError,
    describe_tool_call_outcome,
)
from sessionflow_claude_agent_sdk._step import (
    ClaudeStepError,
    StepFolders,
    StepResult,
    ToolGate,
    hook_settings,
    pre_tool_use,
    run_cli,
    step_folders,
)
from sessionflow_claude_agent_sdk._tools import ReplayedCall, ToolSet, check_tool_options, discover_tools
from sessionflow_claude_agent_sdk._transcript import (
    RunState,
    assemble_history,
    claude_session_id,
    framework_messages,
    message_text,
    read_transcript,
    user_entries,
    write_transcript,
)

__all__ = [
    "CONFIG_ROOT_ENV",
    "ClaudeAgentRunner",
    "ClaudeStepInfo",
    "OptionsFactory",
    "OptionsSource",
    "default_config_root",
]

CONFIG_ROOT_ENV = "SESSIONFLOW_CLAUDE_CONFIG_ROOT"
"""Folder under which each CLI run gets its private config, home and temp folders."""

RAN_ELSEWHERE = (
    "Not an error: this call already ran in its own durable step (sessionflow), and this is its result.\n"
)
"""Leads the denial that carries a Claude Code tool's recorded result to the model."""

ENV_DEFAULTS: Mapping[str, str] = {
    # The session retries a failed model step itself; retries inside the CLI would
    # multiply model calls and hide failures from it.
    "CLAUDE_CODE_MAX_RETRIES": "0",
    # Offer every tool in the request itself, not behind a tool-search placeholder.
    "ENABLE_TOOL_SEARCH": "false",
    "MAX_MCP_OUTPUT_TOKENS": "10000000",
}
"""Environment the CLI gets unless `ClaudeAgentOptions.env` says otherwise."""

ENV_FORCED: Mapping[str, str] = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    # Custom tools and tool specs keep their own names (no ``mcp__server__`` prefix).
    "CLAUDE_AGENT_SDK_MCP_NO_PREFIX": "1",
}
"""Environment the CLI always gets (plus its private folders)."""

_OWNED_HOOKS = ("PreToolUse", "PostToolUse", "PermissionRequest")


@dataclass(frozen=True, kw_only=True)
class ClaudeStepInfo:
    """What an options factory knows about the step it builds options for."""

    session_id: str
    turn_id: str
    settings: Mapping[str, Any] = field(default_factory=lambda: {})


OptionsFactory: TypeAlias = Callable[[ClaudeStepInfo], ClaudeAgentOptions]
"""Builds the options of a session's step; called for every model step and tool call, on any worker."""

OptionsSource: TypeAlias = "ClaudeAgentOptions | OptionsFactory"


def default_config_root() -> Path:
    configured = os.environ.get(CONFIG_ROOT_ENV)
    if configured:
        return Path(configured)
    return Path(tempfile.gettempdir()) / f"sessionflow-claude-{os.getuid()}"


class ClaudeAgentRunner(AgentFrameworkRunner):
    """Drives the Claude Code CLI one model call per step, with every tool call deferred.

    Each model step starts the CLI in fresh private folders (``CLAUDE_CONFIG_DIR``,
    ``HOME``, ``TMPDIR`` under `config_root`), writes the session transcript there,
    runs until the CLI defers a tool call or answers, reads the transcript back and
    removes the folders. The runner keeps no state between calls.

    Args:
        options: The agent's `ClaudeAgentOptions`, or a factory called with a
            `ClaudeStepInfo` for every step. Its ``cwd`` is the session's working
            directory (the process's current directory when unset).
        tool_sources: Neutral tool specs, offered under their own names through an
            in-process MCP server.
        config_root: Where the private folders go; default ``$SESSIONFLOW_CLAUDE_CONFIG_ROOT``
            or ``<tmp>/sessionflow-claude-<uid>``.
    """

    def __init__(
        self,
        options: OptionsSource,
        *,
        tool_sources: Sequence[ToolSpec] = (),
        config_root: str | Path | None = None,
    ) -> None:
        self._options_source = options
        self.tool_sources: tuple[ToolSpec, ...] = tuple(tool_sources)
        self.config_root = Path(config_root) if config_root is not None else default_config_root()
        if isinstance(options, ClaudeAgentOptions):
            # Known now, so refused now: a step could only fail on it, on every attempt.
            check_build_options(options, self.tool_sources)

    # -- options -------------------------------------------------------------------------

    def options_for(self, info: ClaudeStepInfo) -> ClaudeAgentOptions:
        """The user's options for one step, checked for settings the adapter must own."""
        source = self._options_source
        options = source if isinstance(source, ClaudeAgentOptions) else source(info)
        if not isinstance(options, ClaudeAgentOptions):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise UnsupportedOptionError(
                "options",
                f"the options factory returned {type(options).__name__}, expected ClaudeAgentOptions",
            )
        # A factory shows its options only now; the same checks as at build, and just as final.
        check_options(options)
        return options

    # -- messages ------------------------------------------------------------------------

    def build_user_message(self, text: str) -> FrameworkMessage:
        return FrameworkMessage(
            role=MessageRole.USER, framework_item={"type": "user", "content": text}, text=text
        )

    # -- model ---------------------------------------------------------------------------

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        info = ClaudeStepInfo(
            session_id=turn.session_id, turn_id=turn.turn_id, settings=turn.session_settings
        )
        user_options = self.options_for(info)
        tools = await discover_tools(user_options, self.tool_sources)
        cwd = working_directory(user_options)
        session_id = claude_session_id(turn.session_id)
        with step_folders(self.config_root) as folders:
            replay: ReplayedCall | None = None
            plan: dict[str, Any] = {"fresh": pre_tool_use("defer")}
            if turn.framework_run_state is not None:
                state = RunState.from_json(turn.framework_run_state)
                if state.session_id != session_id:
                    raise ValueError(
                        f"the run state belongs to Claude session {state.session_id}, not {session_id}"
                    )
                lines, base, prompt = state.lines, state.turn_base, None
                record = turn.recorded_tool_call(state.deferred_id)
                replay, plan = replay_plan(record, tools, folders)
            else:
                history = assemble_history(turn.messages)
                base = len(history.lines)
                lines = history.lines + user_entries(
                    history.lines, history.pending, session_id=session_id, cwd=cwd
                )
                prompt = message_text(history.prompt)
            plan["ran_log"] = str(folders.hooks / "ran-in-cli.jsonl")
            if lines:
                write_transcript(folders.config, cwd, session_id, lines)
            gate = gate_for(plan)
            options = step_options(
                user_options,
                tools=tools,
                folders=folders,
                plan=plan,
                gate=gate,
                session_id=session_id,
                resume=bool(lines),
                replay=replay,
                cwd=cwd,
            )
            step = await run_cli(options, prompt, turn.events)
            transcript = read_transcript(folders.config, cwd, session_id)
            ran_in_cli = _read_ran_log(folders)
        if ran_in_cli:
            raise TurnAborted(
                f"the Claude Code CLI ran tool calls itself ({', '.join(ran_in_cli)}); stopping the turn"
            )
        if transcript[: len(lines)] != lines:
            raise ClaudeStepError(
                "the Claude Code CLI rewrote the earlier transcript; cannot keep the session"
            )
        return self._outcome(turn, tools, step, gate, transcript, base, session_id)

    def _outcome(
        self,
        turn: AgentTurnContext,
        tools: ToolSet,
        step: StepResult,
        gate: ToolGate,
        transcript: list[str],
        base: int,
        session_id: str,
    ) -> AgentTurnOutcome:
        result = step.result
        if step.model_calls == 0:
            raise ClaudeStepError(
                f"the Claude Code CLI made no model call (stop reason {result.stop_reason!r})"
            )
        if result.stop_reason != "tool_deferred":
            delta = transcript[base:]
            return TurnCompleted(
                new_messages=framework_messages(delta, session_id=session_id, delta=delta), usage=step.usage
            )
        deferred = result.deferred_tool_use
        if deferred is None:
            raise ClaudeStepError("the Claude Code CLI deferred a tool call but did not say which")
        if gate.deferred is None and len(step.tool_uses) > 1:
            raise ClaudeStepError(
                "the CLI deferred a call before sessionflow's hook could keep parallel calls apart"
            )
        if gate.deferred is not None and gate.deferred != deferred.id:
            raise ClaudeStepError(
                f"the CLI deferred {deferred.id!r}, but sessionflow deferred {gate.deferred!r}"
            )
        call = DeferredToolCall(
            tool_call_id=deferred.id,
            tool_name=deferred.name,
            arguments=json.dumps(deferred.input, ensure_ascii=False, separators=(",", ":")),
            policy=tools.floored(
                deferred.name, turn.resolve_tool_policy(deferred.name, tools.framework_effect(deferred.name))
            ),
        )
        state = RunState(
            session_id=session_id,
            lines=transcript,
            turn_base=base,
            deferred_id=deferred.id,
            deferred_name=deferred.name,
        )
        return ToolCallsRequested(framework_run_state=state.to_json(), tool_calls=[call], usage=step.usage)

    # -- tools ---------------------------------------------------------------------------

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> ToolExecutionResult:
        info = ClaudeStepInfo(
            session_id=call.session_id, turn_id=call.turn_id, settings=call.session_settings
        )
        options = self.options_for(info)
        tools = await discover_tools(options, self.tool_sources)
        record = call.tool_call
        output = await tools.execute(
            record.tool_name,
            record.parsed_arguments(),
            call.invocation,
            working_directory(options),
        )
        return ToolExecutionResult(output=output)


# --------------------------------------------------------------------------- helpers


def check_build_options(options: ClaudeAgentOptions, tool_sources: Sequence[ToolSpec]) -> None:
    """Every check that needs neither a step nor a listing of the MCP servers' tools.

    Raises:
        UnsupportedOptionError: The first option the adapter cannot honour, by name.
    """
    check_options(options)
    check_tool_options(options, tool_sources)
    if options.settings and options.settings.lstrip().startswith("{"):
        # A settings file is read at each step, in the step's working directory.
        _user_settings(options.settings, Path.cwd())


def check_options(options: ClaudeAgentOptions) -> None:
    """Refuse options that would let a tool run inside the CLI or take the session's state."""
    problems: list[tuple[str, str]] = []
    if options.can_use_tool is not None:
        problems.append(("can_use_tool", "sessionflow decides about every tool call"))
    owned = sorted(set(options.hooks or {}) & set(_OWNED_HOOKS))
    if owned:
        problems.append(("hooks", f"hooks for {', '.join(owned)}: sessionflow owns them"))
    kept = [
        name
        for name in ("resume", "continue_conversation", "session_id", "fork_session")
        if getattr(options, name)
    ]
    if kept:
        problems.append((", ".join(kept), "the session keeps the transcript"))
    if options.session_store is not None:
        problems.append(("session_store", "the transcript travels in the session's run state"))
    if options.plugins:
        problems.append(("plugins", "they can add hooks and tools that run inside the CLI"))
    if problems:
        raise UnsupportedOptionError(
            ", ".join(name for name, _ in problems),
            "ClaudeAgentOptions the sessionflow adapter cannot honour: "
            + "; ".join(f"{name} ({why})" for name, why in problems),
        )


def working_directory(options: ClaudeAgentOptions) -> Path:
    cwd = Path(options.cwd) if options.cwd is not None else Path.cwd()
    if not cwd.is_dir():
        raise ValueError(f"the working directory {cwd} does not exist")
    return cwd.resolve()


def step_options(
    options: ClaudeAgentOptions,
    *,
    tools: ToolSet,
    folders: StepFolders,
    plan: dict[str, Any],
    gate: ToolGate,
    session_id: str,
    resume: bool,
    replay: ReplayedCall | None,
    cwd: Path,
) -> ClaudeAgentOptions:
    """The options of one CLI run: the user's, with everything about tools and state owned here."""
    env = {**ENV_DEFAULTS, **options.env, **ENV_FORCED, **folders.environment()}
    settings = {
        **_user_settings(options.settings, cwd),
        "hooks": hook_settings(folders, plan),
        "includeCoAuthoredBy": False,
        "attribution": {"commit": "", "pr": ""},
    }
    hooks = dict(options.hooks or {})
    hooks["PreToolUse"] = [HookMatcher(matcher=None, hooks=[gate])]
    return replace(
        options,
        tools=list(tools.builtins),
        allowed_tools=[],
        mcp_servers=dict(tools.stub_servers(replay)),
        strict_mcp_config=True,
        permission_mode="dontAsk",
        continue_conversation=False,
        resume=session_id if resume else None,
        session_id=None if resume else session_id,
        fork_session=False,
        max_turns=None,
        setting_sources=[],
        settings=json.dumps(settings),
        env=env,
        cwd=str(cwd),
        hooks=hooks,
        include_partial_messages=True,
        verbatim_prompts=True,
        enable_file_checkpointing=False,
    )


def _user_settings(settings: str | None, cwd: Path) -> dict[str, Any]:
    if not settings:
        return {}
    text = settings if settings.lstrip().startswith("{") else (cwd / settings).read_text(encoding="utf-8")
    try:
        parsed: object = json.loads(text)
    except json.JSONDecodeError as error:
        raise UnsupportedOptionError(
            "settings", f"ClaudeAgentOptions.settings is not JSON: {error}"
        ) from None
    if not isinstance(parsed, dict):
        raise UnsupportedOptionError("settings", "ClaudeAgentOptions.settings must be a JSON object")
    values = cast(dict[str, Any], parsed)
    if "hooks" in values:
        raise UnsupportedOptionError(
            "settings", "ClaudeAgentOptions.settings must not define hooks: sessionflow owns the CLI's hooks"
        )
    return values


def replay_plan(
    record: AgentToolCall, tools: ToolSet, folders: StepFolders
) -> tuple[ReplayedCall | None, dict[str, Any]]:
    """How the CLI settles the deferred call when the turn resumes; nothing runs for real.

    The model sees `describe_tool_call_outcome(record)`, the text every adapter sends.

    * A custom tool or tool spec: allowed; the in-process stub answers with that text (an
      error result unless the call succeeded), and for a success PostToolUse replaces the
      output with it as well.
    * `Bash` that succeeded: allowed with its command replaced by ``cat`` of a private
      file that holds the recorded output, so the model sees it as a normal result.
    * Any other Claude Code tool, and `Bash` that did not succeed: denied, the reason
      carrying the text (the model sees ``PreToolUse:<tool> hook error: <text>``; a
      success is introduced as "Not an error: ...").
    """
    fresh = pre_tool_use("defer")
    call_id = record.tool_call_id
    text = describe_tool_call_outcome(record)
    succeeded = record.status is AgentToolCallStatus.SUCCEEDED
    plan: dict[str, Any] = {"replay_id": call_id, "fresh": fresh}
    if tools.is_mcp(record.tool_name):
        replay = ReplayedCall(
            tool_call_id=call_id, tool_name=record.tool_name, output=text, is_error=not succeeded
        )
        plan["pre"] = pre_tool_use("allow")
        if succeeded:
            plan["post"] = {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": text}}
        return replay, plan
    if succeeded and record.tool_name == "Bash":
        recorded = folders.hooks / "bash-output.txt"
        recorded.write_text(text, encoding="utf-8")
        stub = {"command": f"cat {shlex.quote(str(recorded))}", "description": "Show the recorded output"}
        plan["pre"] = pre_tool_use("allow", updatedInput=stub)
        return None, plan
    plan["pre"] = pre_tool_use("deny", RAN_ELSEWHERE + text if succeeded else text)
    return None, plan


def gate_for(plan: dict[str, Any]) -> ToolGate:
    """The in-process gate of a step: the replayed call is the plan's to answer, whatever the tool.

    Were the gate to treat it as a new call, its deferral would win over the plan's answer
    whenever the SDK registered its callbacks before the CLI replayed the call.
    """
    replay_id = plan.get("replay_id")
    return ToolGate(replay_id if isinstance(replay_id, str) else None)


def _read_ran_log(folders: StepFolders) -> list[str]:
    path = folders.hooks / "ran-in-cli.jsonl"
    if not path.exists():
        return []
    names: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entry = cast(dict[str, Any], json.loads(line))
        except ValueError:
            continue
        names.append(f"{entry.get('tool_name')} {entry.get('tool_use_id')}")
    return names
