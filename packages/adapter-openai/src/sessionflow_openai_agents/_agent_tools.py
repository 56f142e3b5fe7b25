"""Agents as tools (`Agent.as_tool`): the sub-agent's run as steps of the session.

The SDK runs an agent tool as one nested `Runner.run` inside the tool call, so one tool step
would hold every model call and tool call of the sub-agent, and a crash would repeat them
all. Here the parent's model step defers the agent tool's call like any other (its policy
and approval apply); its tool step only records that the sub-agent may start
(`AGENT_TOOL_STARTED`). The model steps after it drive the sub-agent, one model call per
step: a step that ends the sub-agent's model call with tool calls defers them as calls of
the turn, named ``<parent call ID>.<sub call ID>`` (grouped under the parent call); a step
that ends with the sub-agent's answer keeps it in the run state and continues. When every
agent tool of the parent's response has its answer, the parent resumes, and the recorded
stub of the agent tool returns that answer: the model sees what the SDK would show it.

The run state keeps one entry per agent tool call of the parent's pending response
(``agent_tools``: the tool, its arguments, the sub-run's own run state or its answer), in
the same envelope as the parent's state. A sub-agent that itself uses agents as tools
nests the same way (IDs ``a.b.c``).
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import logging
import weakref
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from agents import (
    Agent,
    AgentsException,
    FunctionTool,
    ItemHelpers,
    MessageOutputItem,
    RunConfig,
    RunContextWrapper,
    RunHooks,
    Runner,
    RunResultStreaming,
    ToolApprovalItem,
    ToolCallOutputItem,
)
from agents.agent_tool_input import resolve_agent_tool_input
from agents.run import DEFAULT_MAX_TURNS
from agents.tool import maybe_invoke_function_tool_failure_error_function
from agents.tool_context import ToolContext

from sessionflow import AgentToolCall, AgentToolCallStatus, AgentUsage, SessionStateError
from sessionflow.kit import DeferredToolCall, describe_tool_call_outcome
from sessionflow_openai_agents._approvals import answer_interruptions, plain_stops
from sessionflow_openai_agents._errors import AgentGraphError, UnsupportedAgentOptionError
from sessionflow_openai_agents._graph import AgentGraph, GraphSnapshot, ToolEntry
from sessionflow_openai_agents._hooks import StepHookPlan
from sessionflow_openai_agents._state import dump_run_state, parse_run_state
from sessionflow_openai_agents._stream import StepHooks, usage_of
from sessionflow_openai_agents._tool_step import RecordedFailures
from sessionflow_openai_agents._tools import sdk_tool_body, tool_output_text
from sessionflow_openai_agents._whole_responses import whole_response_config

__all__ = [
    "AGENT_TOOL_STARTED",
    "SEPARATOR",
    "AgentToolTree",
    "Deferrer",
    "Entries",
    "EntriesStep",
    "Stepper",
    "join_agent_tools",
    "new_entries",
    "split_agent_tools",
    "steps_agent_tool",
    "tree_of",
]

logger = logging.getLogger(__name__)

SEPARATOR = "."
"""Between a parent call's ID and its sub-agent's call IDs (the core forbids only ``/``)."""

AGENT_TOOL_STARTED = "approved; the agent runs as the next steps of this turn"
"""The output the session records for an agent tool's own step; the model never sees it."""

# Options of `as_tool` that need the nested run to be one in-process `Runner.run`.
_REFUSED_OPTIONS = {
    "on_stream": "streams the nested run's events to a callback from inside one tool call",
    "session": "gives the nested run an SDK Session memory of its own",
    "previous_response_id": "chains the nested run to a server-side response",
    "conversation_id": "chains the nested run to a server-side conversation",
}

Deferrer = Callable[[ToolApprovalItem, GraphSnapshot, RunContextWrapper[Any]], Awaitable[DeferredToolCall]]
"""The runner's own deferral of one pending call (its policy and approval rules, the tool's
``needs_approval`` called with the run context)."""


@dataclass(frozen=True)
class AgentToolNode:
    """One agent tool: the options `as_tool` was given, and the sub-agent's graph."""

    name: str
    options: Mapping[str, Any]
    graph: AgentGraph
    tree: AgentToolTree
    tool: FunctionTool
    """The agent tool itself: its failure function answers an error of the sub-run."""


class AgentToolTree:
    """The agent tools a graph offers, by tool name, each with the tree of its sub-agent."""

    def __init__(self, graph: AgentGraph, _seen: frozenset[str] = frozenset()) -> None:
        self.nodes: dict[str, AgentToolNode] = {}
        for entry in graph.static_tools.values():
            options = _agent_tool_options(entry.tool)
            if options is None:
                continue
            agent = cast(Agent[Any], options["self"])
            if agent.name in _seen:
                raise AgentGraphError(
                    f"agent {agent.name!r} uses itself as a tool (through {entry.tool.name!r})"
                )
            for option, why in _REFUSED_OPTIONS.items():
                if options.get(option) is not None:
                    raise UnsupportedAgentOptionError(
                        f"as_tool({option}=...)",
                        f"agent tool {entry.tool.name!r}: {option} {why}; its model calls are steps of the session here",
                    )
            sub = AgentGraph(agent, whole_responses=graph.whole_responses)
            self.nodes[entry.tool.name] = AgentToolNode(
                entry.tool.name,
                options,
                sub,
                AgentToolTree(sub, _seen | {graph.start_name, agent.name}),
                entry.tool,
            )
        if not _seen:
            _check_unique_tools(graph, self)

    def is_agent_tool(self, name: str) -> bool:
        return any(name in tree.nodes for tree in self.trees())

    async def find_tool(
        self, name: str, run_context: RunContextWrapper[Any]
    ) -> tuple[ToolEntry, RunHooks[Any] | None] | None:
        """A sub-agent's tool by name, for its tool step (static or from its MCP servers), and
        the hooks of the nested run that calls it (``as_tool(hooks=...)``)."""
        for tree in self.trees():
            for node in tree.nodes.values():
                entry = (await node.graph.snapshot(run_context)).tools.get(name)
                if entry is not None:
                    return entry, cast(RunHooks[Any] | None, node.options.get("hooks"))
        return None

    def names(self) -> frozenset[str]:
        """The agent tools of this graph (not of its sub-agents), by tool name."""
        return frozenset(self.nodes)

    def trees(self) -> list[AgentToolTree]:
        """This tree and the trees of every sub-agent, nested ones too."""
        trees: list[AgentToolTree] = [self]
        for tree in trees:
            trees.extend(node.tree for node in tree.nodes.values())
        return trees


_TREES: weakref.WeakKeyDictionary[AgentGraph, AgentToolTree] = weakref.WeakKeyDictionary()


def tree_of(graph: AgentGraph) -> AgentToolTree:
    """The graph's agent tools, built (and checked) once per graph."""
    tree = _TREES.get(graph)
    if tree is None:
        tree = _TREES[graph] = AgentToolTree(graph)
    return tree


def _agent_tool_options(tool: FunctionTool) -> Mapping[str, Any] | None:
    """The options `as_tool` was given, or None for a tool whose sub-agent runs whole in its
    tool step: any tool but an agent tool, and an agent tool whose ``on_invoke_tool`` your
    code wrapped (tracing, logging). The wrapper must run around the nested run as it does in
    plain, so that tool is called whole, as a function tool (`_tools.invoke_function_tool`)."""
    if not getattr(tool, "_is_agent_tool", False):
        return None
    body = sdk_tool_body(tool)
    if body is None:
        logger.warning(
            "agent tool %r: its on_invoke_tool is wrapped, so its sub-agent runs whole inside the "
            "tool's step (a crash repeats the whole nested run); to make each of its model calls "
            "a step, move the wrapper's work into RunHooks.on_tool_start/on_tool_end",
            tool.name,
        )
        return None
    # `as_tool` keeps its options in the closure of the nested run's body; 0.24's names.
    options: Mapping[str, Any] = inspect.getclosurevars(body).nonlocals
    if not isinstance(options.get("self"), Agent):
        raise UnsupportedAgentOptionError(
            "tools",
            f"agent tool {tool.name!r}: this SDK version's as_tool keeps its options where the adapter "
            "does not find them; pin the openai-agents version this adapter names",
        )
    return options


def _check_unique_tools(graph: AgentGraph, tree: AgentToolTree) -> None:
    seen = dict(graph.static_tools)
    for node in (node for each in tree.trees() for node in each.nodes.values()):
        for name, entry in node.graph.static_tools.items():
            known = seen.setdefault(name, entry)
            if known.tool is not entry.tool:
                raise AgentGraphError(
                    f"agents {known.agent.name!r} and {entry.agent.name!r} (an agent tool) have different tools "
                    f"named {name!r}; tool names identify tool calls and their policies, so they must be unique"
                )


# -- the run state's entries ----------------------------------------------------------------

Entries = dict[str, dict[str, Any]]


def split_agent_tools(text: str) -> tuple[str, Entries]:
    """The run state without its agent tool entries, and the entries (none in older states)."""
    try:
        envelope = cast(dict[str, Any], json.loads(text))
    except ValueError:
        return text, {}
    entries = cast(Entries | None, envelope.pop("agent_tools", None))
    if not entries:
        return text, {}
    return json.dumps(envelope, separators=(",", ":"), ensure_ascii=False), entries


def join_agent_tools(text: str, entries: Entries) -> str:
    if not entries:
        return text
    envelope = cast(dict[str, Any], json.loads(text))
    envelope["agent_tools"] = entries
    return json.dumps(envelope, separators=(",", ":"), ensure_ascii=False)


def steps_agent_tool(run_state: str | None, tool_call_id: str) -> bool:
    """Whether the state that deferred this agent tool call steps its sub-agent.

    A state written before agent tools were stepped has no entry for it: that session's
    call runs its whole sub-agent in its tool step, as it did when the state was written."""
    if not run_state:
        return False
    try:
        envelope: Any = json.loads(run_state)
    except ValueError:
        return False
    path = tool_call_id.split(SEPARATOR)
    for depth, call_id in enumerate(path):
        entries = cast(dict[str, Any], envelope).get("agent_tools") if isinstance(envelope, dict) else None
        entry = cast(dict[str, Any], entries).get(call_id) if isinstance(entries, dict) else None
        if not isinstance(entry, dict):
            return False
        if depth < len(path) - 1:
            envelope = cast(dict[str, Any], entry).get("run")
    return True


def new_entries(calls: list[DeferredToolCall], tree: AgentToolTree, prefix: str = "") -> Entries:
    """An entry for every agent tool among the calls one response deferred."""
    return {
        call.tool_call_id[len(prefix) :]: {"tool": call.tool_name, "arguments": call.arguments, "run": None}
        for call in calls
        if call.tool_name in tree.nodes
    }


# -- stepping -------------------------------------------------------------------------------


@dataclass
class EntriesStep:
    """What stepping the agent tools of one run gave.

    `calls` and `finished` are both empty when every entry already had its answer: then
    `answers` holds them, for the parent's recorded stub."""

    calls: list[DeferredToolCall] = field(default_factory=lambda: [])
    moved: bool = False
    """A sub-agent made a model call in this step (the step's one call)."""
    answers: dict[str, str] = field(default_factory=lambda: {})
    usage: AgentUsage = field(default_factory=AgentUsage)


@dataclass(frozen=True)
class Stepper:
    """Drives sub-agents one model call per step, for one model step of the session."""

    records: Mapping[str, AgentToolCall]
    values: Mapping[str, Any]
    """The objects the tool steps returned, by call ID (`_tool_value`)."""
    context: Any
    """The parent's run context: the SDK gives a nested run the same one."""
    run_config: RunConfig
    defer: Deferrer
    failures: RecordedFailures
    """The failure records of the calls before this step: a sub-run's tripwire is raised in it."""

    async def step_entries(self, entries: Entries, tree: AgentToolTree, prefix: str = "") -> EntriesStep:
        """Advance the first agent tool without an answer by one model call, or collect the answers."""
        answers: dict[str, str] = {}
        for call_id, entry in entries.items():
            if "answer" in entry:
                answers[call_id] = cast(str, entry["answer"])
                continue
            record = self.records.get(prefix + call_id)
            if record is None or record.status is not AgentToolCallStatus.SUCCEEDED:
                # Rejected, failed or unknown: no sub-run; the parent shows the call's outcome.
                continue
            node = tree.nodes.get(cast(str, entry["tool"]))
            if node is None:
                raise SessionStateError(
                    f"agent tool {entry['tool']!r} of call {call_id!r} is no longer offered"
                )
            try:
                return await self._step_run(node, entry, prefix + call_id + SEPARATOR)
            except AgentsException as error:
                # As `as_tool`: an error of the sub-run is the tool's answer, the failure
                # function's text (None re-raises). Transport errors are no AgentsException:
                # they fail the model step, which the session retries.
                answer = await _failure_answer(node, entry, call_id, self.context, self.run_config, error)
                if answer is None:
                    raise
                entry["run"] = None
                entry["answer"] = answer
                return EntriesStep(moved=True)
        return EntriesStep(answers=answers)

    async def _step_run(self, node: AgentToolNode, entry: dict[str, Any], prefix: str) -> EntriesStep:
        run_context = RunContextWrapper(context=self.context)
        snapshot = await node.graph.snapshot(run_context)
        outputs = {
            call_id[len(prefix) :]: describe_tool_call_outcome(record)
            for call_id, record in self.records.items()
            if call_id.startswith(prefix) and SEPARATOR not in call_id[len(prefix) :] and record.is_final
        }
        outputs.update(
            (call_id[len(prefix) :], value)
            for call_id, value in self.values.items()
            if call_id.startswith(prefix) and SEPARATOR not in call_id[len(prefix) :]
        )
        envelope = cast(dict[str, Any] | None, entry.get("run"))
        run_input: Any
        context: Any = self.context
        plan = StepHookPlan(
            starts_agent=envelope is None or envelope.get("starts_agent") is True,
            agent_tools=node.tree.names(),
        )
        if envelope is None:
            start = snapshot.gated(outputs, plan)
            run_input = await _sub_input(node, entry)
        else:
            # A tool guardrail's tripwire in the sub-run's last tool calls: raised as the
            # nested run raises it, which makes it the agent tool's answer (`step_entries`).
            self.failures.raise_tripwire({n: e.tool for n, e in snapshot.tools.items()}, prefix)
            entries = cast(Entries, envelope.pop("agent_tools", None) or {})
            inner = await self.step_entries(entries, node.tree, prefix)
            if entries:
                envelope["agent_tools"] = entries
            if inner.moved:
                return inner
            outputs.update(inner.answers)
            start = snapshot.gated(outputs, plan)
            state_text = json.dumps({k: v for k, v in envelope.items() if k != "agent_tools"})
            # The sub-run's state holds no context of its own: it is the parent's.
            wrapper = RunContextWrapper(context=self.context)
            state = await parse_run_state(state_text).restore(start, [], wrapper)
            answer_interruptions(state, wrapper, self.records, prefix)
            run_input, context = state, None
        options = node.options
        hooks = StepHooks(cast(RunHooks[Any] | None, options.get("hooks")), plan)
        own_config = cast(RunConfig | None, options.get("run_config"))
        if own_config is not None and node.graph.whole_responses:
            own_config = whole_response_config(own_config)
        result = Runner.run_streamed(
            start,
            run_input,
            context=context,
            max_turns=cast(int | None, options.get("max_turns")) or DEFAULT_MAX_TURNS,
            hooks=hooks,
            run_config=own_config or self.run_config,
        )
        hooks.result = result
        await _drain(result)
        usage = usage_of(result.raw_responses)
        if result.interruptions:
            calls = [
                dataclasses.replace(call, tool_call_id=prefix + call.tool_call_id)
                for call in [
                    await self.defer(item, snapshot, result.context_wrapper) for item in result.interruptions
                ]
            ]
            stops = plain_stops(calls, node.graph)
            state = cast(
                dict[str, Any],
                json.loads(dump_run_state(result.to_state(), [], None, {}, starts_agent=stops)),
            )
            sub_entries = new_entries(calls, node.tree, prefix)
            if sub_entries:
                state["agent_tools"] = sub_entries
            entry["run"] = state
            return EntriesStep(calls=calls, moved=True, usage=usage)
        if result.final_output is not None:
            entry["run"] = None
            entry["answer"] = tool_output_text(await _answer_of(result, options))
            return EntriesStep(moved=True, usage=usage)
        # A handoff, or a response with neither tool calls nor an answer: the next step goes on
        # (after a handoff with the new agent's start hooks, as the SDK's loop goes on).
        entry["run"] = json.loads(
            dump_run_state(result.to_state(), [], None, {}, starts_agent=hooks.handed_off)
        )
        return EntriesStep(moved=True, usage=usage)


async def _failure_answer(
    node: AgentToolNode,
    entry: dict[str, Any],
    call_id: str,
    context: Any,
    run_config: RunConfig,
    error: AgentsException,
) -> str | None:
    """The text the agent tool's failure function gives for the error, called as the SDK's
    tool invoker calls it: with the tool's context of the parent's call."""
    tool_context = ToolContext(
        context=context,
        tool_name=node.name,
        tool_call_id=call_id,
        tool_arguments=cast(str, entry["arguments"]),
        run_config=run_config,
    )
    return await maybe_invoke_function_tool_failure_error_function(
        function_tool=node.tool, context=tool_context, error=error
    )


async def _drain(result: RunResultStreaming) -> None:
    """Run the sub-agent's model call to its end. Its deltas are not the session's stream:
    the plain SDK shows the nested run to no follower either (`on_stream` is refused)."""
    try:
        async for _ in result.stream_events():
            pass
    except BaseException:
        result.cancel()
        raise


async def _sub_input(node: AgentToolNode, entry: dict[str, Any]) -> Any:
    """The nested run's input from the call's arguments, as `as_tool` builds it."""
    options = node.options
    arguments = cast(str, entry["arguments"]) or "{}"
    params_adapter = options["params_adapter"]
    parsed = params_adapter.validate_python(json.loads(arguments))
    params = options["_normalize_tool_input"](parsed, node.name)
    return await resolve_agent_tool_input(
        params=params,
        schema_info=options["schema_info"] if options.get("should_capture_tool_input") else None,
        input_builder=options.get("input_builder"),
    )


async def _answer_of(result: RunResultStreaming, options: Mapping[str, Any]) -> Any:
    """The agent tool's output from the finished sub-run, as `as_tool` extracts it."""
    extractor = options.get("custom_output_extractor")
    if extractor is not None:
        return await extractor(result)
    final = result.final_output
    if final is not None and final != "":
        return final
    if result.output_guardrail_results:
        return final
    for item in reversed(result.new_items):
        if isinstance(item, MessageOutputItem):
            text = ItemHelpers.text_message_output(item)
            if text:
                return text
        if isinstance(item, ToolCallOutputItem) and isinstance(item.output, str) and item.output:
            return item.output
    return final
