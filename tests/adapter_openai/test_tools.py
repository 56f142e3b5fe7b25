"""Tool steps: approvals and rejections, failures, idempotency keys, agents used as tools,
and effects from MCP annotations."""

from __future__ import annotations

from typing import Any

from agents import FunctionTool
from mcp.types import ToolAnnotations

from sessionflow import AgentInterrupt, AgentSessionOptions, AgentSnapshot, AgentToolCallStatus, ToolEffect
from sessionflow.demo import ModelReply, ScriptedToolCall
from sessionflow.testing import wait_for_agent_snapshot
from sessionflow_openai_agents._tools import mcp_effect
from tests.adapter_openai.conftest import Harness, HarnessFactory
from tests.adapter_openai.scenarios import MCP_SERVERS


async def pending(harness: Harness, count: int = 1) -> list[AgentInterrupt]:
    def found(snapshot: AgentSnapshot) -> list[AgentInterrupt] | None:
        return snapshot.pending_interrupts if len(snapshot.pending_interrupts) >= count else None

    return await wait_for_agent_snapshot(harness.sessions, harness.session_id, found, description="approvals")


async def test_a_rejection_message_reaches_the_model_verbatim(harness_factory: HarnessFactory) -> None:
    harness = await harness_factory("assistant")
    harness.script(
        [
            ModelReply.call(ScriptedToolCall("call_refund", "refund", {"order_id": 9})),
            ModelReply.say("Understood."),
        ]
    )
    await harness.start("Refund order 9")
    (interrupt,) = await pending(harness)
    reason = "Not today: order 9 is locked by finance."
    assert await harness.sessions.resolve_interrupt(
        harness.session_id, interrupt.interrupt_id, approved=False, rejection_message=reason
    )
    snapshot = await harness.idle_after(1)

    assert harness.log.count("tool", "refund") == 0
    assert snapshot.messages[-1].message.text == "Understood."
    seen = harness.requests()[1].tool_results()["call_refund"]
    assert seen == f"Tool call rejected by the user: {reason}"


async def test_parallel_calls_mix_approval_and_rejection(harness_factory: HarnessFactory) -> None:
    harness = await harness_factory("assistant")
    harness.script(
        [
            ModelReply.call(
                ScriptedToolCall("call_a", "refund", {"order_id": 1}),
                ScriptedToolCall("call_b", "refund", {"order_id": 2}),
                ScriptedToolCall("call_w", "get_weather", {"city": "Paris"}),
            ),
            ModelReply.say("One refunded, one refused."),
        ]
    )
    await harness.start("Refund orders 1 and 2, and the weather in Paris")
    interrupts = {i.tool_call_id: i for i in await pending(harness, 2)}
    assert await harness.sessions.resolve_interrupt(
        harness.session_id, interrupts["call_a"].interrupt_id, approved=True
    )
    assert await harness.sessions.resolve_interrupt(
        harness.session_id, interrupts["call_b"].interrupt_id, approved=False, rejection_message="no"
    )
    await harness.idle_after(1)

    assert [r["order_id"] for r in harness.log.entries("tool", "refund")] == [1]
    assert harness.requests()[1].tool_results() == {
        "call_a": "refunded order 1",
        "call_b": "Tool call rejected by the user: no",
        "call_w": "sunny in Paris",
    }
    assert len(harness.requests()) == 2


async def test_a_failing_tool_is_a_failed_call_the_model_sees(harness_factory: HarnessFactory) -> None:
    harness = await harness_factory("assistant")
    harness.script(
        [ModelReply.call(ScriptedToolCall("call_f", "flaky", {"reason": "x"})), ModelReply.say("It failed.")]
    )
    await harness.start("Try the flaky tool")
    await harness.idle_after(1)

    # The function tool's failure message (the SDK default hides the exception) is the call's
    # error; a failure the tool reports is final, so even a read runs once. The model sees
    # the message as the plain SDK sends it (the failure record keeps its text).
    assert harness.log.count("tool", "flaky") == 1
    events = await harness.sessions.list_agent_events(harness.session_id)
    finished = [
        e.data for e in events.events if e.data.get("tool_call_id") == "call_f" and "status" in e.data
    ]
    assert finished[-1]["status"] == AgentToolCallStatus.FAILED.value
    assert harness.requests()[1].tool_results()["call_f"] == (
        "An error occurred while running the tool. Please try again."
    )


async def test_tool_sources_get_their_policy_and_the_idempotency_key(harness_factory: HarnessFactory) -> None:
    harness = await harness_factory("assistant")
    assert harness.flow.options.tool_policies["save_note"].effect is ToolEffect.IDEMPOTENT_WRITE
    harness.script(
        [ModelReply.call(ScriptedToolCall("call_n", "save_note", {"text": "milk"})), ModelReply.say("Saved.")]
    )
    await harness.start("Note: milk")
    await harness.idle_after(1)

    assert [e["key"] for e in harness.log.entries("tool", "save_note")] == [
        f"{harness.session_id}/turn-1/call_n"
    ]
    assert harness.requests()[1].tool_results() == {"call_n": "saved 'milk'"}


async def test_an_agent_used_as_a_tool_makes_its_model_call_in_a_step_of_its_own(
    harness_factory: HarnessFactory,
) -> None:
    harness = await harness_factory("agent_tool")
    harness.script(
        [
            ModelReply.call(ScriptedToolCall("call_x", "ask_expert", {"input": "Is 7 prime?"})),
            ModelReply.say("The expert says yes."),
        ]
    )
    harness.script([ModelReply.say("Yes, 7 is prime.")], suffix="-expert")
    await harness.start("Is 7 prime?")
    snapshot = await harness.idle_after(1)

    assert snapshot.messages[-1].message.text == "The expert says yes."
    (expert_request,) = harness.requests("-expert")
    assert expert_request.body["instructions"] == "You are the expert."
    assert expert_request.last_user_text() == "Is 7 prime?"
    # The model sees the expert's answer, not what the session recorded for the call's own step.
    assert harness.requests()[1].tool_results() == {"call_x": "Yes, 7 is prime."}
    steps = await harness.steps()
    assert [s.step_type for s in steps] == [
        "sessionflow.RunModel",
        "sessionflow.CallTool",  # ask_expert: its policy and approval, no model call
        "sessionflow.RunModel",  # the expert's model call
        "sessionflow.RunModel",
    ]


async def test_an_agent_tool_rejected_never_starts_its_agent(harness_factory: HarnessFactory) -> None:
    harness = await harness_factory("agent_tool_asks")
    harness.script(
        [
            ModelReply.call(ScriptedToolCall("call_x", "ask_expert", {"input": "Is 7 prime?"})),
            ModelReply.say("I could not ask."),
        ]
    )
    harness.script([ModelReply.say("Yes, 7 is prime.")], suffix="-expert")
    await harness.start("Is 7 prime?")
    (interrupt,) = await pending(harness)
    assert interrupt.tool_call_id == "call_x"
    assert await harness.sessions.resolve_interrupt(
        harness.session_id, interrupt.interrupt_id, approved=False, rejection_message="not now"
    )
    snapshot = await harness.idle_after(1)

    assert snapshot.messages[-1].message.text == "I could not ask."
    assert harness.requests("-expert") == []
    assert harness.requests()[1].tool_results() == {"call_x": "Tool call rejected by the user: not now"}


async def test_an_agent_tools_own_tool_calls_are_grouped_under_its_call(
    harness_factory: HarnessFactory,
) -> None:
    harness = await harness_factory("agent_tool_with_a_tool")
    harness.script(
        [
            ModelReply.call(ScriptedToolCall("call_x", "ask_expert", {"input": "Weather in Paris?"})),
            ModelReply.say("The expert says sunny."),
        ]
    )
    harness.script(
        [
            ModelReply.call(ScriptedToolCall("call_w", "get_weather", {"city": "Paris"})),
            ModelReply.say("Sunny in Paris."),
        ],
        suffix="-expert",
    )
    await harness.start("Weather in Paris?")
    snapshot = await harness.idle_after(1)

    assert snapshot.messages[-1].message.text == "The expert says sunny."
    assert harness.log.count("tool", "get_weather") == 1
    assert harness.requests("-expert")[1].tool_results() == {"call_w": "sunny in Paris"}
    assert harness.requests()[1].tool_results() == {"call_x": "Sunny in Paris."}
    steps = await harness.steps()
    tool_steps = [s.step_execution_id for s in steps if s.step_type == "sessionflow.CallTool"]
    assert tool_steps == ["turn-1/tool/call_x", "turn-1/tool/call_x.call_w"]
    assert [s.step_type for s in steps].count("sessionflow.RunModel") == 4


async def test_two_agent_tools_of_one_response_each_run_in_steps(harness_factory: HarnessFactory) -> None:
    harness = await harness_factory("two_agent_tools")
    harness.script(
        [
            ModelReply.call(
                ScriptedToolCall("call_e", "ask_expert", {"input": "Is 7 prime?"}),
                ScriptedToolCall("call_c", "ask_critic", {"input": "Is 7 prime?"}),
            ),
            ModelReply.say("Both agree."),
        ]
    )
    harness.script([ModelReply.say("Yes.")], suffix="-expert")
    harness.script([ModelReply.say("Indeed.")], suffix="-critic")
    await harness.start("Is 7 prime?")
    snapshot = await harness.idle_after(1)

    assert snapshot.messages[-1].message.text == "Both agree."
    assert len(harness.requests("-expert")) == 1 and len(harness.requests("-critic")) == 1
    assert harness.requests()[1].tool_results() == {"call_e": "Yes.", "call_c": "Indeed."}
    steps = [s.step_type for s in await harness.steps()]
    # The parent's call, both agent tools' steps, one model step per sub-agent, the answer.
    assert steps.count("sessionflow.CallTool") == 2
    assert steps.count("sessionflow.RunModel") == 4


async def test_mcp_annotations_decide_the_effects(harness_factory: HarnessFactory) -> None:
    harness = await harness_factory("mcp_annotations")
    harness.script(
        [
            ModelReply.call(
                ScriptedToolCall("call_r", "read_file", {}),
                ScriptedToolCall("call_u", "upsert_row", {}),
                ScriptedToolCall("call_d", "delete_file", {}),
            ),
            ModelReply.say("Done."),
        ]
    )
    await harness.start("Do all three")
    (interrupt,) = await pending(harness)
    snapshot = await harness.sessions.get_agent_snapshot(harness.session_id)
    effects = {r.tool_name: r.policy.effect for r in snapshot.tool_calls}
    assert effects == {
        "read_file": ToolEffect.READ,
        "upsert_row": ToolEffect.IDEMPOTENT_WRITE,
        "delete_file": ToolEffect.UNCLASSIFIED,
    }
    # Only the unclassified (destructive) one waits for a person.
    assert interrupt.tool_name == "delete_file"
    assert await harness.sessions.resolve_interrupt(harness.session_id, interrupt.interrupt_id, approved=True)
    await harness.idle_after(1)
    assert sorted(e["name"] for e in harness.log.entries("tool")) == [
        "delete_file",
        "read_file",
        "upsert_row",
    ]


async def test_a_local_mcp_server_over_stdio(harness_factory: HarnessFactory) -> None:
    harness = await harness_factory("local_mcp")
    harness.script(
        [
            ModelReply.call(
                ScriptedToolCall("call_r", "read_note", {"name": "shopping"}),
                ScriptedToolCall("call_d", "delete_note", {"name": "shopping"}),
            ),
            ModelReply.say("Read it, and deleted it."),
        ]
    )
    async with MCP_SERVERS[harness.scenario.flow_type]:
        await harness.start("Read and then delete the shopping note")
        (interrupt,) = await pending(harness)
        assert interrupt.tool_name == "delete_note"
        assert harness.log.entries("mcp", "delete_note") == []
        waiting = await harness.sessions.get_agent_snapshot(harness.session_id)
        assert await harness.sessions.resolve_interrupt(
            harness.session_id, interrupt.interrupt_id, approved=True
        )
        await harness.idle_after(1)

    effects = {r.tool_name: r.policy.effect for r in waiting.tool_calls}
    assert effects == {"read_note": ToolEffect.READ, "delete_note": ToolEffect.UNCLASSIFIED}
    assert [e["name"] for e in harness.log.entries("mcp")] == ["read_note", "delete_note"]
    assert harness.requests()[0].tool_names() == ["read_note", "delete_note"]
    assert harness.requests()[1].tool_results() == {
        "call_r": "note shopping: buy milk",
        "call_d": "deleted shopping",
    }


async def test_the_context_factory_and_the_agent_factory_serve_every_step(
    harness_factory: HarnessFactory,
) -> None:
    harness = await harness_factory("context")
    harness.script(
        [ModelReply.call(ScriptedToolCall("call_w", "whoami", {})), ModelReply.say("You are you.")]
    )
    await harness.start("Who am I?")
    await harness.idle_after(1)

    user = f"user-of-{harness.session_id}"
    requests = harness.requests()
    # Dynamic instructions see the context in the first step and after the resume alike.
    assert [r.body["instructions"] for r in requests] == [f"You serve {user}."] * 2
    assert requests[1].tool_results() == {"call_w": user}
    # Once when the flow is built, then once per model step and per tool step.
    assert harness.log.count("factory", "agent") == 1 + 3


def test_an_mcp_tool_without_a_true_hint_leaves_the_effect_to_the_session() -> None:
    # The core's one mapping answers None for "no hint", so `default_tool_effect` decides,
    # as it does for a tool without annotations.
    def annotated(annotations: ToolAnnotations) -> FunctionTool:
        async def invoke(context: Any, arguments: str) -> str:
            return ""

        tool = FunctionTool(
            name="t", description="d", params_json_schema={"type": "object"}, on_invoke_tool=invoke
        )
        tool._mcp_annotations = annotations  # pyright: ignore[reportPrivateUsage]
        return tool

    assert mcp_effect(annotated(ToolAnnotations(destructive_hint=False))) is None
    assert mcp_effect(annotated(ToolAnnotations(read_only_hint=False, idempotent_hint=False))) is None
    assert mcp_effect(annotated(ToolAnnotations(read_only_hint=True))) is ToolEffect.READ
    options = AgentSessionOptions(default_tool_effect=ToolEffect.READ)
    effect = mcp_effect(annotated(ToolAnnotations(destructive_hint=False)))
    assert options.resolve_tool_policy("t", effect).effect is ToolEffect.READ
