"""`ClaudeAgentRunner`: the Claude Agent SDK behind sessionflow's runner contract."""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import tempfile
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeAlias, cast

from claude_agent_sdk import ClaudeAgentOptions

from sessionflow import AgentUsage, ImageInput, MessageRole, ToolPolicy, UnsupportedOptionError
from sessionflow.kit import (
    AgentEventWriter,
    AgentFrameworkRunner,
    AgentTurnContext,
    AgentTurnOutcome,
    ContinueRequested,
    DeferredToolCall,
    DeferredToolExecution,
    FrameworkMessage,
    ToolCallsRequested,
    ToolExecutionError,
    ToolExecutionResult,
    ToolSpec,
    TurnAborted,
    TurnCompleted,
    VerifyCall,
    VerifyResult,
    image_bytes,
    read_env,
    with_tool_asks,
)
from sessionflow_claude_agent_sdk._budget import CLI_BUDGET, budget_error, budget_spent, with_session_budget
from sessionflow_claude_agent_sdk._permissions import decide
from sessionflow_claude_agent_sdk._results import tool_result_blocks, tool_result_entries
from sessionflow_claude_agent_sdk._settings import PermissionSettings, load_permission_settings
from sessionflow_claude_agent_sdk._step import (
    TERMINAL_SUBTYPES,
    ClaudeStepError,
    StepFolders,
    StepResult,
    hook_settings,
    pre_tool_use,
    run_cli,
    step_folders,
)
from sessionflow_claude_agent_sdk._subagents import (
    SEPARATOR,
    agent_options,
    check_agent_call,
    next_sub_agent,
    start_context,
    start_context_prefix,
    start_sub_runs,
    sub_agent_hooks,
)
from sessionflow_claude_agent_sdk._tools import (
    AGENT_TOOL,
    ToolSet,
    check_tool_options,
    discover_tools,
    offers_agent_tool,
)
from sessionflow_claude_agent_sdk._transcript import (
    ANSWERED_DENIAL,
    PendingCall,
    RunState,
    SubRun,
    assemble_history,
    claude_session_id,
    final_text,
    framework_messages,
    message_text,
    pending_tool_uses,
    read_transcript,
    unique_call_ids,
    user_entries,
    without_deferrals,
    without_resume_entries,
    write_transcript,
)
from sessionflow_claude_agent_sdk._wire import RESUME_PAIR_TEXTS, ModelWire
from sessionflow_local_tools import ShellSandbox

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

_STEP_HOOKS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest"})
"""Hook events the steps run themselves, so the CLI does not get them."""

BACKGROUND_TASKS_OFF = "CLAUDE_CODE_DISABLE_BACKGROUND_TASKS"
"""Claude Code's switch that runs every sub-agent (and shell command) in the foreground."""

_TRUTHY = frozenset({"1", "true", "yes", "on"})

DEFAULT_API_URL = "https://api.anthropic.com"
_CLOUD_PROVIDER_FLAGS = ("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY")


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
    configured = read_env(CONFIG_ROOT_ENV)
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
        bash_sandbox: Confines each `Bash` command of a tool step as the local tools'
            ``run_shell_command`` is confined (`sessionflow_local_tools.ShellSandbox`:
            bubblewrap, else Landlock, else unconfined and said so in the result). None
            (the default) runs it with the worker's permissions. Claude Code's own
            ``sandbox`` option cannot do this: the CLI never runs a command here.
    """

    def __init__(
        self,
        options: OptionsSource,
        *,
        tool_sources: Sequence[ToolSpec] = (),
        config_root: str | Path | None = None,
        bash_sandbox: ShellSandbox | None = None,
    ) -> None:
        self._options_source = options
        self.bash_sandbox = bash_sandbox
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

    def build_user_message_with_images(self, text: str, images: Sequence[ImageInput]) -> FrameworkMessage:
        item = {
            "type": "user",
            "content": text,
            "images": [{"path": image.path, "media_type": image.media_type} for image in images],
        }
        return FrameworkMessage(role=MessageRole.USER, framework_item=item, text=text)

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        info = ClaudeStepInfo(
            session_id=turn.session_id, turn_id=turn.turn_id, settings=turn.session_settings
        )
        user_options = self.options_for(info)
        tools = await discover_tools(user_options, self.tool_sources)
        cwd = working_directory(user_options)
        session_id = claude_session_id(turn.session_id)
        hook_input = _hook_input(user_options, session_id, cwd)
        prompt: str | list[dict[str, Any]] | None = None
        answered: list[str] = []
        model_calls = 0
        budget = user_options.max_budget_usd
        if turn.framework_run_state is None:
            history = assemble_history(turn.messages)
            spent = history.cost_usd
            if budget_spent(spent, budget):
                # As Claude Code ends every turn of a client whose budget is spent: at once,
                # without a request. The prompt stays unanswered; the next turn sends it along.
                assert budget is not None
                return limit_reached([], 0, session_id, _budget_result(budget, spent, model_calls))
            earlier = without_deferrals(history.lines)
            base = len(earlier)
            lines = earlier + user_entries(earlier, history.pending, session_id=session_id, cwd=cwd)
            prompt = prompt_content(history.prompt)
        else:
            state = RunState.from_json(turn.framework_run_state)
            if state.session_id != session_id:
                raise ValueError(
                    f"the run state belongs to Claude session {state.session_id}, not {session_id}"
                )
            waiting = next_sub_agent(state, turn.recorded_tool_call)
            if waiting is not None:
                return await self._step_sub_agent(turn, user_options, tools, state, waiting, hook_input)
            base, model_calls, spent = state.turn_base, state.model_calls, state.cost_usd
            results = await tool_result_blocks(
                state.calls, turn.recorded_tool_call, tools, user_options, hook_input, answers=state.answers()
            )
            lines = [*state.lines, *tool_result_entries(state.lines, results, session_id=session_id, cwd=cwd)]
            answered = [call.id for call in state.calls]
            # Claude Code's order: the budget, then the turn limit; both keep the results.
            if budget is not None and budget_spent(spent, budget):
                return limit_reached(lines, base, session_id, _budget_result(budget, spent, model_calls))
            if user_options.max_turns is not None and model_calls >= user_options.max_turns:
                return limit_reached(
                    lines, base, session_id, _max_turns_result(user_options.max_turns, spent, model_calls)
                )
        step, transcript = await self._converse(
            user_options, tools, cwd, session_id, lines, prompt, answered, turn.events, spent=spent
        )
        return await self._outcome(
            turn,
            tools,
            user_options,
            step,
            transcript,
            base=base,
            session_id=session_id,
            model_calls=model_calls + step.model_calls,
            hook_input=hook_input,
            spent=spent + step.cost_usd,
        )

    async def _converse(
        self,
        options: ClaudeAgentOptions,
        tools: ToolSet,
        cwd: Path,
        session_id: str,
        lines: list[str],
        prompt: str | list[dict[str, Any]] | None,
        answered: list[str],
        events: AgentEventWriter,
        *,
        spent: float,
        environment_prefix: str | None = None,
    ) -> tuple[StepResult, list[str]]:
        """One CLI run of one conversation: at most one model call; the transcript after it.

        `lines` is the conversation so far (written for the CLI to resume); `answered` are
        the calls whose results `lines` ends with (a resume, no `prompt`); `spent` is what
        the session's model requests cost before this one (``max_budget_usd``).
        """
        resume_texts = _resume_texts(options) if answered else ()
        with step_folders(self.config_root) as folders:
            plan: dict[str, Any] = {
                "fresh": pre_tool_use("defer"),
                "answered_ids": answered,
                # Denied, the CLI keeps the result the transcript holds and runs nothing.
                "answered": pre_tool_use("deny", ANSWERED_DENIAL),
                "ran_log": str(folders.hooks / "ran-in-cli.jsonl"),
            }
            if lines:
                lines = unique_call_ids(lines)
                write_transcript(folders.config, cwd, session_id, lines)
            async with relay(options, resume_texts, str(self.config_root), spent, environment_prefix) as wire:
                run_options = step_options(
                    options,
                    tools=tools,
                    folders=folders,
                    plan=plan,
                    session_id=session_id,
                    resume=bool(lines),
                    cwd=cwd,
                    base_url=wire.base_url if wire is not None else None,
                    continuing=bool(answered),
                )
                step = await run_cli(run_options, prompt, events)
                relayed = wire.model_requests if wire is not None else None
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
        if step.model_calls == 0 and not relayed:
            # (A compaction, ``/compact``, asks the model without a streamed response.)
            raise ClaudeStepError(
                f"the Claude Code CLI made no model call (stop reason {step.result.stop_reason!r})"
            )
        if answered:
            transcript = without_resume_entries(transcript, len(lines), resume_texts)
        if options.max_budget_usd is not None:
            transcript = with_session_budget(transcript, len(lines), spent, options.max_budget_usd)
        return step, transcript

    async def _step_sub_agent(
        self,
        turn: AgentTurnContext,
        options: ClaudeAgentOptions,
        tools: ToolSet,
        state: RunState,
        sub: SubRun,
        hook_input: dict[str, Any],
    ) -> AgentTurnOutcome:
        """One model call of a sub-agent the parent started with the ``Agent`` tool."""
        sub_options = agent_options(options, sub.agent_type)
        sub_tools = await discover_tools(sub_options, ())
        cwd = working_directory(options)
        prefix = sub.call_id + SEPARATOR
        prompt: str | None = None
        answered: list[str] = []
        lines = list(sub.lines)
        if not lines:
            prompt = sub.prompt
            started = await sub_agent_hooks(options, "SubagentStart", sub, hook_input)
            # Claude Code gives the hooks' context to the sub-agent: every one of its requests.
            sub = replace(sub, context=start_context(started))
        else:
            results = await tool_result_blocks(
                sub.calls, lambda i: turn.recorded_tool_call(prefix + i), sub_tools, sub_options, hook_input
            )
            lines.extend(tool_result_entries(lines, results, session_id=sub.session_id, cwd=cwd))
            answered = [call.id for call in sub.calls]
        # The sub-agent's words are not the session's stream: the plain SDK tags them with
        # the parent call, and a follower of the session sees the parent's answer.
        quiet = AgentEventWriter(None, turn_id=turn.turn_id, step_execution_id="sub-agent", attempt=1)
        step, transcript = await self._converse(
            sub_options,
            sub_tools,
            cwd,
            sub.session_id,
            lines,
            prompt,
            answered,
            quiet,
            spent=state.cost_usd,
            environment_prefix=start_context_prefix(sub),
        )
        # A sub-agent's requests cost the session's budget too, as Claude Code counts them.
        state = replace(state, cost_usd=state.cost_usd + step.cost_usd)
        if step.result.stop_reason != "tool_deferred":
            await sub_agent_hooks(options, "SubagentStop", sub, hook_input)
            done = replace(
                sub, lines=transcript, calls=[], answer=final_text(transcript) or step.result.result or ""
            )
            later = state.with_sub(done)
            return ContinueRequested(
                framework_run_state=later.to_json(),
                note=f"sub-agent {sub.agent_type} answered",
                usage=step.usage,
            )
        calls, deferred = await _defer_all(
            turn, sub_tools, sub_options, pending_tool_uses(transcript[len(sub.lines) :]), hook_input, prefix
        )
        later = state.with_sub(replace(sub, lines=transcript, calls=calls, model_calls=sub.model_calls + 1))
        return ToolCallsRequested(framework_run_state=later.to_json(), tool_calls=deferred, usage=step.usage)

    async def _outcome(
        self,
        turn: AgentTurnContext,
        tools: ToolSet,
        options: ClaudeAgentOptions,
        step: StepResult,
        transcript: list[str],
        *,
        base: int,
        session_id: str,
        model_calls: int,
        hook_input: dict[str, Any],
        spent: float,
    ) -> AgentTurnOutcome:
        """What a model step of the parent ends in; `spent`: the session's cost, this step's included."""
        result = step.result
        budget = options.max_budget_usd
        if result.subtype in TERMINAL_SUBTYPES:
            ended = {
                "subtype": result.subtype,
                "is_error": True,
                "num_turns": model_calls,
                "errors": list(result.errors or []),
                "total_cost_usd": spent,
            }
            return limit_reached(transcript, base, session_id, ended, usage=step.usage)
        if result.stop_reason != "tool_deferred":
            if budget is not None and budget_spent(spent, budget):
                # Claude Code ends the turn right after the response that spent the budget.
                ended = _budget_result(budget, spent, model_calls)
                return limit_reached(transcript, base, session_id, ended, usage=step.usage)
            delta = transcript[base:]
            return TurnCompleted(
                new_messages=framework_messages(delta, session_id=session_id, delta=delta, cost_usd=spent),
                usage=step.usage,
                framework_state={
                    "result": {
                        "subtype": result.subtype,
                        "is_error": result.is_error,
                        "num_turns": model_calls,
                        "result": result.result,
                        "total_cost_usd": spent,
                    }
                },
            )
        calls, deferred = await _defer_all(
            turn, tools, options, pending_tool_uses(transcript[base:]), hook_input
        )
        state = RunState(
            session_id=session_id,
            lines=transcript,
            turn_base=base,
            calls=calls,
            model_calls=model_calls,
            sub_runs=start_sub_runs(calls, options, session_id),
            cost_usd=spent,
        )
        return ToolCallsRequested(framework_run_state=state.to_json(), tool_calls=deferred, usage=step.usage)

    # -- tools ---------------------------------------------------------------------------

    async def verify_tool_call(self, call: DeferredToolExecution) -> VerifyResult | None:
        """A tool spec's `ToolSpec.verify`, for a write whose step died; None when it has none."""
        spec = next((s for s in self.tool_sources if s.name == call.tool_call.tool_name), None)
        if spec is None or spec.verify is None:
            return None
        return await spec.run_verify(call.tool_call.parsed_arguments(), VerifyCall.of(call))

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> ToolExecutionResult:
        info = ClaudeStepInfo(
            session_id=call.session_id, turn_id=call.turn_id, settings=call.session_settings
        )
        options = self.options_for(info)
        tools = await discover_tools(options, self.tool_sources)
        record = call.tool_call
        if record.tool_name == AGENT_TOOL and tools.agent_tool:
            return ToolExecutionResult(output=check_agent_call(options, record.parsed_arguments()))
        if call.run_state is not None:
            # Only a denied call carries the run state: it never runs, the model sees the denial.
            denial = denial_of(call.run_state, record.tool_call_id)
            if denial is not None:
                raise ToolExecutionError(denial)
        output = await tools.execute(
            record.tool_name,
            record.parsed_arguments(),
            call.invocation,
            working_directory(options),
            sandbox=self.bash_sandbox,
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
    cwd = Path(options.cwd) if options.cwd is not None else Path.cwd()
    if cwd.is_dir():
        # The project's settings as they are now; each step reads them again.
        load_permission_settings(options.setting_sources, cwd, strict_mcp_config=options.strict_mcp_config)


def check_options(options: ClaudeAgentOptions) -> None:
    """Refuse options that would let a tool run inside the CLI or take the session's state."""
    problems: list[tuple[str, str]] = []
    if "PermissionRequest" in (options.hooks or {}):
        problems.append(("hooks", "PermissionRequest hooks: the CLI never asks, each call's step does"))
    kept = [
        name
        for name in ("resume", "continue_conversation", "session_id", "fork_session")
        if getattr(options, name)
    ]
    if kept:
        problems.append((", ".join(kept), "the session keeps the transcript"))
    resumed_at = [
        name
        for name, given in (
            ("resume_session_at", bool(options.resume_session_at)),
            ("resume_drops_turn", options.resume_drops_turn is not None),
        )
        if given
    ]
    if resumed_at:
        problems.append(
            (", ".join(resumed_at), "the session keeps the transcript; they only apply to resume")
        )
    problems += _cli_only_options(options)
    if options.session_store is not None:
        problems.append(("session_store", "the transcript travels in the session's run state"))
    if options.plugins:
        problems.append(("plugins", "they can add hooks and tools that run inside the CLI"))
    if options.permission_mode in ("plan", "auto"):
        problems.append(
            (
                "permission_mode",
                f"{options.permission_mode!r} has Claude Code judge calls with a safety classifier of "
                "its own, inside the CLI, which a step cannot run; use 'default', 'acceptEdits' or "
                "'dontAsk' with can_use_tool or the session's approvals",
            )
        )
    if options.permission_prompt_tool_name:
        problems.append(
            (
                "permission_prompt_tool_name",
                "the CLI never asks for a permission under sessionflow; give can_use_tool instead "
                "(the model step asks it where Claude Code would)",
            )
        )
    if (
        offers_agent_tool(options)
        and (options.env.get(BACKGROUND_TASKS_OFF) or "").strip().lower() not in _TRUTHY
    ):
        problems.append(
            (
                "agents",
                "Claude Code runs a sub-agent in the background by default: the Agent call returns "
                "'Async agent launched' at once, the parent answers without the report, and the "
                "report later starts a turn nobody sent. A session runs every call as a durable step "
                "of a turn and has no turn of its own making; set "
                f"env={{'{BACKGROUND_TASKS_OFF}': '1'}} so that Claude Code runs every sub-agent in "
                "the foreground, as the session does",
            )
        )
    if problems:
        raise UnsupportedOptionError(
            ", ".join(name for name, _ in problems),
            "ClaudeAgentOptions the sessionflow adapter cannot honour: "
            + "; ".join(f"{name} ({why})" for name, why in problems),
        )


def _cli_only_options(options: ClaudeAgentOptions) -> list[tuple[str, str]]:
    """Options whose work Claude Code does inside its own process, where no step can hold it."""
    problems: list[tuple[str, str]] = []
    if options.add_dirs:
        problems.append(
            (
                "add_dirs",
                "the tool steps' Read, Write, Edit, Glob and Grep open nothing outside cwd, so the "
                "model would be told of directories its calls cannot reach; give the session a cwd "
                "that holds every directory it needs",
            )
        )
    if options.sandbox is not None:
        problems.append(
            (
                "sandbox",
                "Claude Code sandboxes the Bash commands it runs itself, and under sessionflow it runs "
                "none: each command runs in a tool step, where the CLI's sandbox confines nothing. "
                "Leave sandbox unset and pass bash_sandbox=sessionflow_local_tools.ShellSandbox() to "
                "ClaudeAgentRunner or claude_agent_session_flow (bubblewrap, else Landlock), or "
                "confine the worker (a container, a user of its own)",
            )
        )
    if options.output_format is not None:
        problems.append(
            (
                "output_format",
                "Claude Code ends the turn inside its own StructuredOutput tool, which no tool step "
                "can run; ask for the JSON in the prompt or the system prompt and validate the "
                "turn's answer",
            )
        )
    if options.skills is not None:
        problems.append(
            (
                "skills",
                "Claude Code's Skill tool loads a skill into the conversation inside the CLI, which "
                "no tool step can run; put the skill's instructions in CLAUDE.md, the system prompt "
                "or a slash command",
            )
        )
    if options.enable_file_checkpointing:
        problems.append(
            (
                "enable_file_checkpointing",
                "Claude Code checkpoints the files its own tools change; under sessionflow the tool "
                "steps change them, so the CLI has nothing to checkpoint and a session has no "
                "rewind_files. Keep the workspace under version control (git) to go back",
            )
        )
    return problems


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
    session_id: str,
    resume: bool,
    cwd: Path,
    base_url: str | None,
    continuing: bool = False,
) -> ClaudeAgentOptions:
    """The options of one CLI run: the user's, with everything about tools and state owned here."""
    env = {**ENV_DEFAULTS, **options.env, **ENV_FORCED, **folders.environment()}
    if base_url is not None:
        env["ANTHROPIC_BASE_URL"] = base_url
    # The user's settings as given (attribution included), plus the hooks sessionflow owns.
    settings = {**_user_settings(options.settings, cwd), "hooks": hook_settings(folders, plan)}
    # The tool hooks run in the steps (`_permissions`, `_results`); the CLI runs no tool.
    hooks = {event: matchers for event, matchers in (options.hooks or {}).items() if event not in _STEP_HOOKS}
    if continuing:
        # The CLI continues the turn as if its resume prompt were the user's: Claude Code
        # fires UserPromptSubmit once, for the turn's own prompt (the first step).
        hooks.pop("UserPromptSubmit", None)
    extra_args = dict(options.extra_args)
    if options.agents:
        # On the command line, not in the SDK's initialize request: a resumed CLI continues
        # the turn before it reads that request, and would tell the model the agents it had
        # listed are "no longer available".
        extra_args["agents"] = json.dumps(
            {
                name: {k: v for k, v in dataclasses.asdict(agent).items() if v is not None}
                for name, agent in options.agents.items()
            }
        )
    return replace(
        options,
        agents=None,
        extra_args=extra_args,
        tools=tools.cli_tools,
        allowed_tools=[],
        can_use_tool=None,
        mcp_servers=dict(tools.stub_servers()),
        strict_mcp_config=True,
        permission_mode="dontAsk",
        continue_conversation=False,
        resume=session_id if resume else None,
        session_id=None if resume else session_id,
        fork_session=False,
        max_turns=None,
        # The session counts the budget across steps (`_budget`); the CLI only writes its reminders.
        max_budget_usd=CLI_BUDGET if options.max_budget_usd is not None else None,
        settings=json.dumps(settings),
        env=env,
        cwd=str(cwd),
        hooks=cast(Any, hooks) or None,
        include_partial_messages=True,
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


async def _defer_all(
    turn: AgentTurnContext,
    tools: ToolSet,
    options: ClaudeAgentOptions,
    uses: list[dict[str, Any]],
    hook_input: dict[str, Any],
    prefix: str = "",
) -> tuple[list[PendingCall], list[DeferredToolCall]]:
    """Every call of the model's response; a sub-agent's are named `prefix` + their own ID."""
    if not uses:
        raise ClaudeStepError("the Claude Code CLI deferred a tool call the transcript does not hold")
    cwd = Path(str(hook_input["cwd"]))
    permissions = load_permission_settings(
        options.setting_sources,
        cwd,
        _user_settings(options.settings, cwd),
        strict_mcp_config=options.strict_mcp_config,
    )
    calls: list[PendingCall] = []
    deferred: list[DeferredToolCall] = []
    for use in uses:
        call, request = await _defer(turn, tools, options, use, hook_input, permissions)
        calls.append(call)
        deferred.append(dataclasses.replace(request, tool_call_id=prefix + request.tool_call_id))
    return calls, deferred


async def _defer(
    turn: AgentTurnContext,
    tools: ToolSet,
    options: ClaudeAgentOptions,
    use: dict[str, Any],
    hook_input: dict[str, Any],
    permissions: PermissionSettings,
) -> tuple[PendingCall, DeferredToolCall]:
    """One call of the model's response: Claude Code's permission verdict under the session's floor."""
    name, call_id = str(use.get("name")), str(use.get("id"))
    original = cast(dict[str, Any], use.get("input") or {})
    verdict = await decide(
        options,
        tool_name=name,
        aliases=tools.aliases(name),
        tool_input=original,
        tool_use_id=call_id,
        hook_input=hook_input,
        cwd=Path(str(hook_input["cwd"])),
        settings=permissions,
    )
    policy = session_policy(turn, tools, name)
    floored = tools.has_floor(name) or policy.requires_approval is not None
    policy, approval = verdict.policy(tools.floored(name, policy), floored=floored)
    run_input = verdict.updated_input if verdict.updated_input is not None else original
    pending = PendingCall(id=call_id, name=name, input=original, denial=verdict.denial)
    request = DeferredToolCall(
        tool_call_id=call_id,
        tool_name=name,
        arguments=json.dumps(run_input, ensure_ascii=False, separators=(",", ":")),
        # A hook's or callback's updatedInput: an approval shows the rewrite as a diff.
        previous_arguments=(
            json.dumps(original, ensure_ascii=False, separators=(",", ":"))
            if verdict.updated_input is not None
            else None
        ),
        policy=policy,
        framework_approval=approval,
        # A denied call's step reads the denial from the run state; the others read nothing.
        skip_run_state=verdict.denial is None,
    )
    spec = tools.specs.get(name)
    if spec is not None and verdict.denial is None:
        # A tool spec's own approval rule and question, and its verify for a write whose
        # step dies, as every runner honours them.
        request = with_tool_asks(request, spec)
        if request.framework_approval is None:
            request = dataclasses.replace(request, framework_approval=approval)
        if spec.verify is not None:
            basis = await spec.deferral_basis(run_input)
            request = dataclasses.replace(request, verifiable=True, verify_basis=basis)
    return pending, request


def session_policy(turn: AgentTurnContext, tools: ToolSet, name: str) -> ToolPolicy:
    """The session's policy for a tool, by its full name or (a custom tool) its bare name.

    An explicit policy of the session (under either name) wins over the whole policy the
    tool is marked with (`sessionflow.effect(..., policy=...)`), which wins over its effect.
    """
    declared = tools.declared_policy(name)
    if declared is not None and not any(n in turn.tool_policies for n in (name, *tools.aliases(name))):
        return declared
    effect = tools.framework_effect(name)
    policy = turn.resolve_tool_policy(name, effect)
    for alias in tools.aliases(name):
        other = turn.resolve_tool_policy(alias, effect)
        if other != policy and policy == ToolPolicy(effect=policy.effect):
            return other
    return policy


def denial_of(run_state: str, call_id: str) -> str | None:
    state = RunState.from_json(run_state)
    for call in state.calls:
        if call.id == call_id:
            return call.denial
    for sub in state.sub_runs:
        for call in sub.calls:
            if sub.call_id + SEPARATOR + call.id == call_id:
                return call.denial
    return None


def limit_reached(
    lines: list[str], base: int, session_id: str, result: dict[str, Any], *, usage: AgentUsage | None = None
) -> TurnCompleted:
    """The turn ends as Claude Code ends it at a limit (``max_turns``, ``max_budget_usd``):
    what the turn wrote is kept (tool results included), no further model call is made, and
    `result` is Claude Code's error result. Never retried: a retry would reach it again.

    With nothing written (a budget spent before the turn began) the turn stores no message,
    and its prompt reaches the model with the next turn's, as Claude Code keeps it.
    """
    delta = lines[base:]
    messages = (
        framework_messages(delta, session_id=session_id, delta=delta, cost_usd=result.get("total_cost_usd"))
        if delta
        else []
    )
    return TurnCompleted(
        new_messages=messages, usage=usage or AgentUsage(), framework_state={"result": result}
    )


def _max_turns_result(max_turns: int, spent: float, model_calls: int) -> dict[str, Any]:
    return {
        "subtype": "error_max_turns",
        "is_error": True,
        "num_turns": model_calls,
        "errors": [f"Reached maximum number of turns ({max_turns})"],
        "total_cost_usd": spent,
    }


def _budget_result(budget: float, spent: float, model_calls: int) -> dict[str, Any]:
    return {
        "subtype": "error_max_budget_usd",
        "is_error": True,
        "num_turns": model_calls,
        "errors": [budget_error(budget)],
        "total_cost_usd": spent,
    }


def prompt_content(message: FrameworkMessage) -> str | list[dict[str, Any]]:
    """The turn's prompt: its text, or content blocks when it has images (read from the store now)."""
    text = message_text(message)
    item: object = message.framework_item
    images = cast(dict[str, Any], item).get("images") if isinstance(item, dict) else None
    if not images:
        return text
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for image in cast(list[dict[str, str]], images):
        data = image_bytes(ImageInput(path=image["path"], media_type=image["media_type"]))
        blocks.append(
            {
                "type": "image",
                "source": {
                    "type": "base64",
                    "media_type": image["media_type"],
                    "data": base64.b64encode(data).decode("ascii"),
                },
            }
        )
    return blocks


def model_upstream(options: ClaudeAgentOptions) -> str | None:
    """Where the CLI's model requests go; None when a cloud provider (no base URL) serves them."""
    env = {**os.environ, **options.env}
    if any(env.get(flag) for flag in _CLOUD_PROVIDER_FLAGS):
        return None
    return env.get("ANTHROPIC_BASE_URL") or DEFAULT_API_URL


@asynccontextmanager
async def relay(
    options: ClaudeAgentOptions,
    resume_texts: Sequence[str],
    private_root: str,
    spent: float,
    environment_prefix: str | None = None,
) -> AsyncGenerator[ModelWire | None]:
    upstream = model_upstream(options)
    if upstream is None:
        yield None
        return
    budget = (spent, options.max_budget_usd) if options.max_budget_usd is not None else None
    async with ModelWire(
        upstream,
        resume_texts=resume_texts,
        private_root=private_root,
        budget=budget,
        environment_prefix=environment_prefix,
    ) as wire:
        yield wire


def _resume_texts(options: ClaudeAgentOptions) -> tuple[str, ...]:
    configured = (
        options.env.get("CLAUDE_CODE_RESUME_PROMPT") or os.environ.get("CLAUDE_CODE_RESUME_PROMPT") or ""
    ).strip()
    return (*RESUME_PAIR_TEXTS, configured) if configured else RESUME_PAIR_TEXTS


def _hook_input(options: ClaudeAgentOptions, session_id: str, cwd: Path) -> dict[str, Any]:
    return {
        "session_id": session_id,
        "transcript_path": "",
        "cwd": str(cwd),
        "permission_mode": options.permission_mode or "default",
    }


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
