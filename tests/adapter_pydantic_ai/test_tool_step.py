"""Tool steps: one call through Pydantic AI's own tool machinery, with no model request."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

import pytest
from pydantic_ai import Agent, ApprovalRequired, CallDeferred, ModelRetry, RunContext, ToolFailed
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
from pydantic_core import SchemaValidator, core_schema

from sessionflow import AgentToolCall, AgentToolCallStatus, ToolEffect, ToolPolicy
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.kit import (
    AgentEventWriter,
    DeferredToolExecution,
    EffectUnknown,
    TookEffect,
    ToolCallsRequested,
    ToolExecutionError,
    ToolExecutionResult,
    ToolInvocation,
    ToolOutput,
    ToolSpec,
    current_tool_invocation,
    tool_invocation_scope,
)
from sessionflow.session.tools import ApprovalSource
from sessionflow_pydantic_ai import PydanticAIRunner
from sessionflow_pydantic_ai._models import model_for_api
from tests.adapter_pydantic_ai.turns import PlayedTurn, context, play_turn, stored

KEY = "tool-step"


@dataclass
class Inventory:
    items: dict[str, int]


def shop_agent(server: ScriptedModelServer) -> Agent[Inventory, str]:
    """An agent whose tools cover every way a tool can end; its model must never be asked."""
    agent = Agent(
        model_for_api("chat_completions", "m", base_url=server.base_url(KEY), api_key="k"),
        deps_type=Inventory,
    )

    @agent.tool
    def count(ctx: RunContext[Inventory], item: str) -> int:
        invocation = current_tool_invocation()
        assert invocation is not None and invocation.idempotency_key == f"s1/turn-3/{ctx.tool_call_id}"
        return ctx.deps.items[item]

    @agent.tool_plain
    async def stock(items: list[str]) -> dict[str, Any]:
        invocation = current_tool_invocation()
        return {"items": items, "attempt": invocation.attempt if invocation else None}

    @agent.tool_plain
    def pick(n: int) -> str:
        raise ModelRetry(f"only 3 left, not {n}")

    @agent.tool_plain
    def refund() -> str:
        raise ToolFailed("refunds are closed today")

    @agent.tool_plain
    def crash() -> str:
        raise ConnectionError("warehouse unreachable")

    @agent.tool_plain
    def later() -> str:
        raise CallDeferred()

    @agent.tool
    def audit(ctx: RunContext[Inventory]) -> str:
        if not ctx.tool_call_approved:
            raise ApprovalRequired()
        return "audited"

    @agent.output_validator
    def no_shouting(ctx: RunContext[Inventory], output: str) -> str:
        # Output validators rule out run-time output types; the tool step must not need one.
        return output.lower()

    return agent


async def run_tool(
    runner: PydanticAIRunner,
    name: str,
    arguments: str,
    tool_call_id: str = "call-9",
    approval_source: ApprovalSource | None = None,
) -> str:
    record = AgentToolCall(
        tool_call_id=tool_call_id,
        tool_name=name,
        arguments=arguments,
        policy=ToolPolicy(effect=ToolEffect.READ),
        deferral_order=1,
        status=AgentToolCallStatus.RUNNING,
        approval_source=approval_source,
    )
    return (await tool_result(runner, record)).output


async def tool_result(
    runner: PydanticAIRunner, record: AgentToolCall, run_state: str | None = None
) -> ToolExecutionResult:
    call = DeferredToolExecution(
        flow_id="s1",
        turn_id="turn-3",
        tool_call=record,
        attempt=2,
        events=AgentEventWriter(None, turn_id="turn-3", step_execution_id="t", attempt=2),
        heartbeat=lambda *args: None,
        run_state=run_state,
    )
    # What the tool activity does around every tool step.
    with tool_invocation_scope(call.invocation):
        return await runner.execute_deferred_tool_call(call)


@pytest.fixture
def runner(model_server: ScriptedModelServer) -> PydanticAIRunner:
    return PydanticAIRunner(shop_agent(model_server), deps_factory=lambda: Inventory(items={"apple": 4}))


async def test_results_are_the_tool_output_as_text(
    runner: PydanticAIRunner, model_server: ScriptedModelServer
) -> None:
    assert await run_tool(runner, "count", '{"item": "apple"}') == "4"
    assert json.loads(await run_tool(runner, "stock", '{"items": ["a", "b"]}')) == {
        "items": ["a", "b"],
        "attempt": 2,
    }
    # A person approved it: the tool sees ctx.tool_call_approved.
    assert await run_tool(runner, "audit", "{}", approval_source="framework") == "audited"
    assert model_server.requests(KEY) == []
    assert current_tool_invocation() is None


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("count", '{"item": 5}', "Input should be a valid string"),
        ("count", "{not json", "Invalid JSON"),
        ("count", "{}", "Field required"),
        ("pick", '{"n": 7}', "only 3 left, not 7"),
        ("refund", "{}", "refunds are closed today"),
        ("nope", "{}", "Unknown tool name: 'nope'"),
        ("later", "{}", "waits for a result from outside"),
        ("audit", "{}", "asks for approval"),
    ],
)
async def test_failures_the_model_should_see_are_tool_execution_errors(
    runner: PydanticAIRunner, model_server: ScriptedModelServer, name: str, arguments: str, message: str
) -> None:
    with pytest.raises(ToolExecutionError, match=message):
        await run_tool(runner, name, arguments)
    assert model_server.requests(KEY) == []


async def test_a_tool_that_defers_itself_ends_its_step_with_the_deferral_as_its_account(
    runner: PydanticAIRunner,
) -> None:
    with pytest.raises(ToolExecutionError) as raised:
        await run_tool(runner, "audit", "{}")
    assert json.loads(raised.value.state_update or "")["outcome"] == "approval_required"
    with pytest.raises(ToolExecutionError) as raised:
        await run_tool(runner, "later", "{}")
    assert json.loads(raised.value.state_update or "")["outcome"] == "call_deferred"


async def test_other_exceptions_propagate_so_the_session_retries_by_effect(runner: PydanticAIRunner) -> None:
    with pytest.raises(ConnectionError, match="warehouse unreachable"):
        await run_tool(runner, "crash", "{}")


class AnnotatedToolset(AbstractToolset[Any]):
    """Reports tools the way `MCPToolset` does: MCP annotations in `ToolDefinition.metadata`."""

    def __init__(self, annotations: dict[str, dict[str, Any]]) -> None:
        self.annotations = annotations
        self.calls: list[tuple[str, dict[str, Any]]] = []

    @property
    def id(self) -> str | None:
        return "annotated"

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        return {
            name: ToolsetTool(
                toolset=self,
                tool_def=ToolDefinition(
                    name=name,
                    parameters_json_schema={"type": "object", "properties": {"q": {"type": "string"}}},
                    metadata={"meta": None, "annotations": annotations},
                ),
                max_retries=1,
                args_validator=SchemaValidator(schema=core_schema.dict_schema()),
            )
            for name, annotations in self.annotations.items()
        }

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        self.calls.append((name, tool_args))
        return f"{name} did {tool_args.get('q')}"


async def test_mcp_annotations_of_a_toolset_become_effects_and_its_tools_run_in_the_tool_step(
    model_server: ScriptedModelServer,
) -> None:
    key = "annotated"
    annotations = {
        "search": {
            "readOnlyHint": True,
            "destructiveHint": None,
            "idempotentHint": None,
            "openWorldHint": False,
        },
        "upsert": {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True},
        "send": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False},
        "vague": {"readOnlyHint": "yes"},
    }
    model_server.script(
        key,
        [
            ModelReply.call(*(ScriptedToolCall(f"c-{n}", n, {"q": n}) for n in annotations)),
            ModelReply.say("all done"),
        ],
    )
    toolset = AnnotatedToolset(annotations)
    agent = Agent(
        model_for_api("chat_completions", "m", base_url=model_server.base_url(key), api_key="k"),
        toolsets=[toolset],
    )
    played = await play_turn(PydanticAIRunner(agent), "go")
    first = played.outcomes[0]
    assert isinstance(first, ToolCallsRequested)
    assert {c.tool_name: c.policy.effect for c in first.tool_calls} == {
        "search": ToolEffect.READ,
        "upsert": ToolEffect.IDEMPOTENT_WRITE,
        "send": ToolEffect.UNCLASSIFIED,
        "vague": ToolEffect.UNCLASSIFIED,
    }
    assert sorted(toolset.calls) == sorted((n, {"q": n}) for n in annotations)
    assert model_server.requests(key)[1].tool_results()["c-send"] == "send did send"


async def test_tool_specs_run_their_handler_with_the_invocation(model_server: ScriptedModelServer) -> None:
    seen: list[tuple[dict[str, Any], ToolInvocation]] = []

    async def handler(arguments: dict[str, Any], invocation: ToolInvocation) -> str:
        seen.append((arguments, invocation))
        return "noted"

    spec = ToolSpec(
        name="note",
        description="Write a note.",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}},
        effect=None,
        policy=None,
        handler=handler,
        mcp_annotations={"idempotentHint": True},
    )
    runner = PydanticAIRunner(
        Agent(model_for_api("chat_completions", "m", base_url=model_server.base_url(KEY), api_key="k")),
        tool_sources=[spec],
    )
    assert await run_tool(runner, "note", '{"text": "hi"}', tool_call_id="n1") == "noted"
    arguments, invocation = seen[0]
    assert arguments == {"text": "hi"}
    assert (invocation.tool_call_id, invocation.idempotency_key, invocation.attempt) == (
        "n1",
        "s1/turn-3/n1",
        2,
    )
    with pytest.raises(ToolExecutionError, match="Input should be an object"):
        await run_tool(runner, "note", "[1, 2]")

    model_server.script(KEY, [ModelReply.call(ScriptedToolCall("n2", "note", {"text": "x"}))])
    outcome = await runner.run_model_step(
        context(stored([runner.build_user_message("go")]), PlayedTurn(), run_state=None)
    )
    assert isinstance(outcome, ToolCallsRequested)
    assert outcome.tool_calls[0].policy.effect is ToolEffect.IDEMPOTENT_WRITE
    assert model_server.requests(KEY)[0].tool_names() == ["note"]


def _record(name: str, arguments: str, tool_call_id: str) -> AgentToolCall:
    return AgentToolCall(
        tool_call_id=tool_call_id,
        tool_name=name,
        arguments=arguments,
        policy=ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE),
        deferral_order=1,
        status=AgentToolCallStatus.RUNNING,
    )


async def test_a_specs_state_update_sets_keys_of_dict_deps_and_is_refused_by_other_deps(
    model_server: ScriptedModelServer,
) -> None:
    def book(arguments: dict[str, Any], invocation: ToolInvocation) -> ToolOutput:
        return ToolOutput(text="booked", state_update={"seat": arguments["seat"]})

    spec = ToolSpec(
        name="book",
        description="Book a seat.",
        parameters={"type": "object", "properties": {"seat": {"type": "string"}}},
        effect=ToolEffect.IDEMPOTENT_WRITE,
        policy=None,
        handler=book,
    )
    model = model_for_api("chat_completions", "m", base_url=model_server.base_url(KEY), api_key="k")
    with_dict = PydanticAIRunner(
        Agent(model, deps_type=dict[str, Any]), deps_factory=dict, tool_sources=[spec]
    )
    model_server.script(KEY, [ModelReply.call(ScriptedToolCall("b1", "book", {"seat": "14C"}))])
    deferred = await with_dict.run_model_step(
        context(stored([with_dict.build_user_message("book")]), PlayedTurn(), run_state=None)
    )
    assert isinstance(deferred, ToolCallsRequested)
    # The tool step gets the deps the model step left ({}), as the session hands them on.
    result = await tool_result(
        with_dict, _record("book", '{"seat": "14C"}', "b1"), run_state=deferred.framework_run_state
    )
    assert result.output == "booked"
    # The deps' change, as any tool's change of ctx.deps travels to the next model step.
    assert result.state_update is not None
    assert json.loads(result.state_update)["deps"] == {"set": {"seat": "14C"}, "unset": []}

    without = PydanticAIRunner(Agent(model), tool_sources=[spec])
    with pytest.raises(TypeError, match="not a mapping to set its keys in"):
        await tool_result(without, _record("book", '{"seat": "14C"}', "b2"))


async def test_a_specs_rule_question_and_verify_go_on_the_deferred_call(
    model_server: ScriptedModelServer,
) -> None:
    def verify(arguments: dict[str, Any], call: Any) -> TookEffect | EffectUnknown:
        if call.basis == f"before {arguments['to']}":
            return TookEffect(output=f"found the mail to {arguments['to']}")
        return EffectUnknown(reason="no basis")

    def send(arguments: dict[str, Any], invocation: ToolInvocation) -> str:
        return "sent"

    specs = [
        ToolSpec(
            name="send",
            description="Send a mail.",
            parameters={"type": "object", "properties": {"to": {"type": "string"}}},
            effect=ToolEffect.NON_IDEMPOTENT_WRITE,
            policy=None,
            handler=send,
            # A callable rule decides per call: only mail outside the company asks.
            needs_approval=lambda arguments: not str(arguments["to"]).endswith("@example.com"),
            verify=verify,
            verify_basis=lambda arguments: f"before {arguments['to']}",
        ),
        ToolSpec(
            name="ask",
            description="Ask the person.",
            parameters={"type": "object", "properties": {"q": {"type": "string"}}},
            effect=ToolEffect.READ,
            policy=None,
            handler=send,
            question=lambda arguments: str(arguments["q"]),
            pre_approved=True,
        ),
    ]
    runner = PydanticAIRunner(
        Agent(model_for_api("chat_completions", "m", base_url=model_server.base_url(KEY), api_key="k")),
        tool_sources=specs,
    )
    model_server.script(
        KEY,
        [
            ModelReply.call(
                ScriptedToolCall("s1", "send", {"to": "ada@example.com"}),
                ScriptedToolCall("s2", "send", {"to": "bob@elsewhere.org"}),
                ScriptedToolCall("q1", "ask", {"q": "Which colour?"}),
            )
        ],
    )
    outcome = await runner.run_model_step(
        context(stored([runner.build_user_message("go")]), PlayedTurn(), run_state=None)
    )
    assert isinstance(outcome, ToolCallsRequested)
    calls = {c.tool_call_id: c for c in outcome.tool_calls}
    assert [calls[i].framework_approval for i in ("s1", "s2", "q1")] == [None, "required", "pre_approved"]
    assert (calls["q1"].question, calls["s1"].question) == ("Which colour?", None)
    assert [calls[i].verifiable for i in ("s1", "s2", "q1")] == [True, True, False]
    assert (calls["s2"].verify_basis, calls["q1"].verify_basis) == ("before bob@elsewhere.org", None)

    def execution(tool_call_id: str, basis: str | None) -> DeferredToolExecution:
        record = replace(_record("send", '{"to": "bob@elsewhere.org"}', tool_call_id), verify_basis=basis)
        return DeferredToolExecution(
            flow_id="s1",
            turn_id="turn-3",
            tool_call=record,
            attempt=1,
            events=AgentEventWriter(None, turn_id="turn-3", step_execution_id="v", attempt=1),
            heartbeat=lambda *args: None,
        )

    assert await runner.verify_tool_call(execution("s2", "before bob@elsewhere.org")) == TookEffect(
        output="found the mail to bob@elsewhere.org"
    )
    assert await runner.verify_tool_call(execution("s2", None)) == EffectUnknown(reason="no basis")
    # A tool without a verify: the session is told there is none.
    ask = replace(execution("q1", None).tool_call, tool_name="ask")
    assert await runner.verify_tool_call(replace(execution("q1", None), tool_call=ask)) is None
