"""What a plugin registers: one `FrameworkSpec` per agent framework, and what it is built from.

This module is the leaf of the plugin system: `sessionflow.hookspecs` imports it, and it
imports neither the plugin manager nor the engine binding.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar, cast, get_args

from sessionflow.kit._demo_tour import DemoTour
from sessionflow.kit._tool_specs import ToolSpec
from sessionflow.session.options import AgentSessionOptions
from sessionflow.session.runner import AgentFrameworkRunner

__all__ = [
    "FRAMEWORK_MODEL_APIS",
    "MODEL_APIS",
    "CarryHook",
    "FrameworkCapabilities",
    "FrameworkModelApi",
    "FrameworkSpec",
    "HarnessContext",
    "ModelApi",
    "OutputValidator",
]

ModelApi = Literal["chat_completions", "responses", "anthropic_messages"]
"""The model wire APIs: OpenAI Chat Completions, OpenAI Responses, Anthropic Messages."""

MODEL_APIS: tuple[ModelApi, ...] = get_args(ModelApi)

FrameworkModelApi = ModelApi | Literal["gemini"]
"""The wire API a framework speaks by default (`FrameworkSpec.model_api`): a `ModelApi`, or
Gemini's generateContent (Google ADK), which a harness cannot pick for another framework."""

FRAMEWORK_MODEL_APIS: tuple[FrameworkModelApi, ...] = (*MODEL_APIS, "gemini")

OutputValidator = Callable[[str], str | None]
"""Checks a final answer: None accepts it; a string is the retry prompt for the model."""

CarryHook = Callable[[str | None, str], str | None]
"""(the carry the turn started with, its final answer) -> the carry for the next turn (None: none)."""

_FRAMEWORK_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")

_T = TypeVar("_T")


@dataclass(frozen=True, kw_only=True)
class FrameworkCapabilities:
    """What an adapter supports; the conformance suite skips scenarios it cannot run.

    Attributes:
        parallel_tool_calls: One model response may request several tool calls.
        reasoning_deltas: Streams reasoning/thinking text as events.
        images: Implements `AgentFrameworkRunner.build_user_message_with_images`.
        mcp_annotations: Reads MCP tool annotations into tool effects.
        continue_steps: A model step may end with `ContinueRequested` (call the model
            again, no tool in between), and the runner honours
            `HarnessContext.output_validator` with it. Off by default, so adapters built
            before continue steps keep declaring only what they had.
        carry_state: A completed turn may carry state into the next
            (`TurnCompleted.carry`), and the runner honours `HarnessContext.carry` with
            it. Off by default, like ``continue_steps``.
        tool_state: A tool step sees the run state of the model step that deferred it, may
            return a state update (`ToolExecutionResult.state_update`), and the runner
            applies `AgentTurnContext.state_updates` at the next model step.
        framework_approvals: The runner reports the framework's own approval rules on a
            deferred call (`DeferredToolCall.framework_approval`: a tool's
            ``needs_approval``, a pre-approval); the session's floor still decides.
        questions: The runner turns the framework's request for input into a question
            (`DeferredToolCall.question`), answered with a value.
        verified_outcomes: Defers the calls of a tool with a `ToolSpec.verify` as
            verifiable and answers `AgentFrameworkRunner.verify_tool_call` with it, so a
            write whose step died is settled by its verify. Off by default.
        steering: The runner takes the messages that join a running turn
            (`AgentTurnContext.steered_messages`, double-texting `steer`): it puts them
            after the tool results of the step before, where its framework puts a user
            message mid-run, and says so with `AgentFrameworkRunner.accepts_steering`. Off
            by default: such a message then starts the next turn.
    """

    parallel_tool_calls: bool
    reasoning_deltas: bool
    images: bool
    mcp_annotations: bool
    continue_steps: bool = False
    carry_state: bool = False
    tool_state: bool = False
    framework_approvals: bool = False
    questions: bool = False
    verified_outcomes: bool = False
    steering: bool = False


@dataclass(frozen=True, kw_only=True)
class HarnessContext:
    """Everything a framework gets to build the runner of one session flow.

    The CLI builds one for each model a session uses; the conformance suite builds one
    for each case (its scripted model server, the case's tools, no settings).

    Attributes:
        flow_type: The flow type (workflow type and task queue) being built.
        model: The model name as the framework expects it.
        system_prompt: Instructions for the agent, or None.
        workspace: Directory the agent's file tools work in.
        options: Session options of the flow.
        tools: Neutral tool specs the adapter must expose to its agent.
        settings: The framework's own section of the CLI configuration.
        model_base_url: Overrides the model provider's base URL (proxies, test servers).
        api_key: Overrides the provider API key; never shown in the repr.
        api: The wire API to speak; None leaves the choice to the framework (its
            settings, then `FrameworkSpec.model_api`). A framework that cannot speak it raises.
        framework_tools: False asks for an agent that offers ``tools`` only, none of the
            framework's own tools (such as Claude Code's ``Read`` or ``Bash``); the
            conformance suite's neutral agent is built so.
        output_validator: Checks the agent's final text: None accepts it, a string is
            the retry prompt the model gets in another model call (a `ContinueRequested`
            step). Only a framework that declares ``continue_steps`` is given one.
        carry: Decides what a completed turn carries into the next (`CarryHook`); the
            next turn's model sees it. Only a framework that declares ``carry_state`` is
            given one.
        shell_sandbox: How the framework's own shell tool (a twin of ``run_shell_command``
            in `FrameworkSpec.local_tool_twins`, such as Claude Code's ``Bash``) is to be
            confined: the CLI's ``sessionflow_local_tools.ShellSandbox`` of
            ``local_tools.shell.sandbox``, or None (unconfined). Typed loosely: the core
            does not depend on the local tools.
    """

    flow_type: str
    model: str
    system_prompt: str | None
    workspace: Path
    options: AgentSessionOptions
    tools: Sequence[ToolSpec]
    settings: Mapping[str, Any]
    model_base_url: str | None = None
    # Kept out of the repr so logging a context never leaks the key.
    api_key: str | None = field(default=None, repr=False)
    api: ModelApi | None = None
    framework_tools: bool = True
    output_validator: OutputValidator | None = None
    carry: CarryHook | None = None
    shell_sandbox: object | None = None

    def setting(self, name: str, kind: type[_T]) -> _T | None:
        """The setting ``name`` if it is a ``kind``, else None; an empty string counts as unset.

        Settings come from a person's configuration file, so a value of the wrong type is
        ignored like a missing one.
        """
        value = self.settings.get(name)
        if not isinstance(value, kind) or value == "":
            return None
        return value

    def mapping_setting(self, name: str) -> Mapping[str, Any] | None:
        """The setting ``name`` if it is a table, with its keys as strings, else None."""
        value = self.settings.get(name)
        if not isinstance(value, Mapping):
            return None
        return {str(key): item for key, item in cast(Mapping[object, Any], value).items()}


@dataclass(frozen=True, kw_only=True)
class FrameworkSpec:
    """One agent framework a plugin provides.

    Attributes:
        name: Unique lowercase identifier (``^[a-z][a-z0-9_-]*$``), used on the command line.
        description: One line for listings.
        capabilities: What the adapter supports.
        build_runner: Builds the runner of a session flow from a context (the CLI's, or
            the conformance suite's); called through `sessionflow.plugins.build_runner`.
        model_api: The wire API the framework speaks by default.
        resume_texts: User text the framework itself adds to a model request that resumes
            after tool results (a harness's "continue" prompt). It is not the person's text,
            so the conformance suite leaves it out when it reads a request's last user text.
        replaced_local_tool_groups: Groups of the sessionflow CLI's local tools (``files``,
            ``shell``, ``web_fetch``, ``browser``) that the framework's own tools replace;
            the CLI does not offer its tools of these groups to this framework.
        local_tool_twins: The framework's own tools that do the work of one of the CLI's
            local tools, by name: own tool -> local tool (Claude Code's ``Write`` ->
            ``write_file``). The CLI's call policy gives each the floor of its twin
            (`sessionflow_local_tools.LOCAL_TOOL_FLOORS`), and checks the ``command`` of a
            twin of ``run_shell_command`` against the shell allow list.
        demo_tour: The framework's own tools for the CLI's offline demo, for a framework
            that replaces the CLI's ``files`` tools; None tours with the CLI's file tools.
        plugin_name: The plugin that registered this spec; filled in by the plugin manager.
    """

    name: str
    description: str
    capabilities: FrameworkCapabilities
    build_runner: Callable[[HarnessContext], AgentFrameworkRunner]
    model_api: FrameworkModelApi
    resume_texts: tuple[str, ...] = ()
    replaced_local_tool_groups: frozenset[str] = frozenset()
    local_tool_twins: Mapping[str, str] = field(default_factory=dict[str, str])
    demo_tour: DemoTour | None = None
    plugin_name: str = ""

    def __post_init__(self) -> None:
        if not _FRAMEWORK_NAME.match(self.name):
            raise ValueError(
                f"framework name {self.name!r} must match {_FRAMEWORK_NAME.pattern} "
                "(lowercase letters, digits, '_' and '-', starting with a letter)"
            )
        if not self.description.strip():
            raise ValueError(f"framework {self.name!r}: description must not be empty")
        if "\n" in self.description or "\r" in self.description:
            raise ValueError(f"framework {self.name!r}: description must be one line")
        if any(not text.strip() for text in self.resume_texts):
            raise ValueError(f"framework {self.name!r}: resume_texts must not contain blank text")
        if self.model_api not in FRAMEWORK_MODEL_APIS:
            raise ValueError(
                f"framework {self.name!r}: model_api {self.model_api!r} is not one of "
                f"{', '.join(FRAMEWORK_MODEL_APIS)}"
            )
