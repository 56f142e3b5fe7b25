"""Agent trees (ADK's multi-agent samples) through sessionflow, compared with the same tree
under ADK's own `Runner` on the same scripted Gemini server: the model requests call by
call, the final session events (author and content) and state, and the real tool runs.
Each LLM call of any agent in the tree is its own model step, each tool call its own tool
step."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

# ADK's documented import path; the module does not list it in an `__all__`.
from google.adk.agents import BaseAgent
from google.adk.agents.run_config import (
    RunConfig,
    StreamingMode,  # pyright: ignore[reportPrivateImportUsage]
)
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.genai import types

from sessionflow import AgentEventType, AgentSessionOptions, AgentSnapshot
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from sessionflow_google_adk import google_adk_session_flow
from tests.adapter_google_adk.agents import TIMINGS
from tests.adapter_google_adk.test_sessions import comparable, idle, serving
from tests.adapter_google_adk.tree_agents import (
    bounded_loop,
    closed_help_desk,
    counted_pipeline,
    help_desk,
    pipeline,
    refinement_loop,
)

Tree = Callable[[str, InvocationLog], BaseAgent]


def event_view(author: str, content: dict[str, Any] | None) -> dict[str, Any]:
    return {"author": author, "content": content}


async def plain_adk(
    model_server: ScriptedModelServer, key: str, tree: Tree, log: Path, texts: list[str]
) -> dict[str, Any]:
    """The same tree under ADK's own `Runner` (streaming, as the adapter's model steps do)."""
    agent = tree(model_server.base_url(key, api="gemini"), InvocationLog(log))
    service = InMemorySessionService()
    await service.create_session(app_name="sessionflow", user_id="user", session_id=key)
    runner = Runner(app_name="sessionflow", agent=agent, session_service=service)
    for text in texts:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        config = RunConfig(streaming_mode=StreamingMode.SSE)
        async for _ in runner.run_async(
            user_id="user", session_id=key, new_message=message, run_config=config
        ):
            pass
    session = await service.get_session(app_name="sessionflow", user_id="user", session_id=key)
    assert session is not None
    return {
        "state": dict(session.state),
        "events": [
            event_view(e.author, e.content.model_dump(exclude_none=True)) for e in session.events if e.content
        ],
    }


def stored_events(snapshot: AgentSnapshot) -> list[dict[str, Any]]:
    return [
        event_view(
            m.message.framework_item["author"],
            types.Content.model_validate(m.message.framework_item["content"]).model_dump(exclude_none=True),
        )
        for m in snapshot.messages
        if "content" in m.message.framework_item
    ]


async def run_differential(
    temporal_address: str,
    model_server: ScriptedModelServer,
    tmp_path: Path,
    *,
    name: str,
    tree: Tree,
    script: Callable[[], list[ModelReply]],
    texts: list[str],
) -> tuple[dict[str, Any], AgentSnapshot, InvocationLog, InvocationLog, list[Any]]:
    """Both runs; asserts the same requests, events and state, and returns both sides."""
    model_server.script(f"plain-{name}", script())
    plain_log = tmp_path / "plain.jsonl"
    plain = await plain_adk(model_server, f"plain-{name}", tree, plain_log, texts)

    key = f"adk-{name}"
    model_server.script(key, script())
    log_path = tmp_path / "invocations.jsonl"
    flow = google_adk_session_flow(
        tree(model_server.base_url(key, api="gemini"), InvocationLog(log_path)),
        flow_type=key,
        options=AgentSessionOptions(timings=TIMINGS),
    )
    async with serving(temporal_address, flow) as sessions:
        await sessions.start_session(key, texts[0])
        snapshot = await idle(sessions, key)
        for turn, text in enumerate(texts[1:], start=2):
            await sessions.send_user_message(key, text)
            snapshot = await idle(sessions, key, turns=turn)
        events = (await sessions.list_agent_events(key)).events

    ours, theirs = model_server.requests(key), model_server.requests(f"plain-{name}")
    assert [comparable(r) for r in ours] == [comparable(r) for r in theirs]
    assert len(ours) == len(script())
    assert stored_events(snapshot) == plain["events"]
    assert snapshot.framework_state == {"adk_state": plain["state"]}
    return plain, snapshot, InvocationLog(log_path), InvocationLog(plain_log), events


def tool_steps(events: list[Any]) -> list[tuple[str, str]]:
    deferred = [e.data for e in events if e.type is AgentEventType.TOOL_CALL_DEFERRED]
    return [(d["tool_name"], d["effect"]) for d in deferred]


def help_desk_script() -> list[ModelReply]:
    return [
        ModelReply.call(ScriptedToolCall("t1", "transfer_to_agent", {"agent_name": "Support"})),
        ModelReply.call(ScriptedToolCall("s1", "check_service_status", {"service": "email"})),
        ModelReply.say("Email is up again."),
        ModelReply.call(ScriptedToolCall("t2", "transfer_to_agent", {"agent_name": "Billing"})),
        ModelReply.call(ScriptedToolCall("r1", "refund", {"order_id": "A7"})),
        ModelReply.say("Order A7 is refunded."),
    ]


async def test_a_coordinator_transfers_to_its_sub_agents_as_plain_adk(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    texts = ["My email does not work.", "Also refund order A7."]
    plain, snapshot, log, plain_log, events = await run_differential(
        temporal_address,
        model_server,
        tmp_path,
        name="help-desk",
        tree=help_desk,
        script=help_desk_script,
        texts=texts,
    )
    requests = model_server.requests("adk-help-desk")
    # Who was asked, call by call: the coordinator, Support (twice), then Support again for
    # turn 2 (it replied last), which hands over to Billing.
    systems = [r.sent_texts()[0].split("\n")[0] for r in requests]
    assert systems[0].startswith("Route user requests") and systems[1].startswith("You fix technical")
    assert requests[2].tool_results() == {"s1": '{"service":"email","status":"up"}'}
    assert requests[2].saw("Last checked: email")
    assert [e["author"] for e in plain["events"]] == [
        "user", "HelpDeskCoordinator", "HelpDeskCoordinator", "Support", "Support", "Support",
        "user", "Support", "Support", "Billing", "Billing", "Billing",
    ]  # fmt: skip
    # Each tool call was a tool step of its own (a transfer runs in the model step that
    # asked for it), each LLM call a model step; the tools ran once each.
    assert tool_steps(events) == [("check_service_status", "read"), ("refund", "idempotent_write")]
    continued = [e for e in events if e.type is AgentEventType.MODEL_CONTINUED]
    assert len(continued) == 2  # after each transfer, the target's call is a step of its own
    assert [e["key"] for e in log.entries("tool", "check_service_status")] == ["adk-help-desk/turn-1/s1"]
    assert [e["key"] for e in log.entries("tool", "refund")] == ["adk-help-desk/turn-2/r1"]
    assert plain_log.count("tool") == log.count("tool") == 2
    assert snapshot.messages[-1].message.text == "Order A7 is refunded."


def pipeline_script() -> list[ModelReply]:
    return [
        ModelReply.call(ScriptedToolCall("w1", "word_count", {"text": "old pond frog jumps in"})),
        ModelReply.say("Old pond, a frog jumps: the sound of water."),
        ModelReply.say("A fine haiku."),
    ]


async def test_a_sequential_agent_runs_its_sub_agents_in_order_as_plain_adk(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    plain, snapshot, log, _, events = await run_differential(
        temporal_address,
        model_server,
        tmp_path,
        name="pipeline",
        tree=pipeline,
        script=pipeline_script,
        texts=["A haiku about a frog, please."],
    )
    requests = model_server.requests("adk-pipeline")
    # The writer's output_key reached the reviewer's instruction ({generated_code}).
    assert requests[2].saw("Review this haiku:\nOld pond, a frog jumps: the sound of water.")
    assert [e["author"] for e in plain["events"]] == [
        "user", "CodeWriterAgent", "CodeWriterAgent", "CodeWriterAgent", "CodeReviewerAgent"
    ]  # fmt: skip
    assert plain["state"] == {
        "generated_code": "Old pond, a frog jumps: the sound of water.",
        "review_comments": "A fine haiku.",
    }
    assert tool_steps(events) == [("word_count", "read")]
    assert [e["key"] for e in log.entries("tool", "word_count")] == ["adk-pipeline/turn-1/w1"]
    # The reviewer's call was a model step of its own.
    assert sum(e.type is AgentEventType.MODEL_CONTINUED for e in events) == 1
    assert snapshot.messages[-1].message.text == "A fine haiku."


def loop_script() -> list[ModelReply]:
    return [
        ModelReply.say("Draft one."),
        ModelReply.say("Needs more detail."),
        ModelReply.say("Draft two, with detail."),
        ModelReply.call(ScriptedToolCall("x1", "exit_loop", {})),
        ModelReply.say("Published: Draft two, with detail."),
    ]


async def test_a_loop_agent_ends_when_a_tool_escalates_as_plain_adk(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    plain, snapshot, log, plain_log, events = await run_differential(
        temporal_address,
        model_server,
        tmp_path,
        name="loop",
        tree=refinement_loop,
        script=loop_script,
        texts=["Write a short story opening."],
    )
    requests = model_server.requests("adk-loop")
    assert requests[1].saw("Critique the draft:\nDraft one.")
    assert requests[4].saw("Publish:\nDraft two, with detail.")
    assert [e["author"] for e in plain["events"]] == [
        "user", "RefinerAgent", "CriticAgent", "RefinerAgent", "CriticAgent", "CriticAgent", "Publisher"
    ]  # fmt: skip
    # The exit tool ran once, in a tool step; its escalation ended the loop, not the turn.
    assert tool_steps(events) == [("exit_loop", "read")]
    assert [e["key"] for e in log.entries("tool", "exit_loop")] == ["adk-loop/turn-1/x1"]
    assert plain_log.count("tool") == 1
    assert snapshot.messages[-1].message.text == "Published: Draft two, with detail."


async def test_a_sub_agents_callbacks_run_as_often_as_in_plain_adk(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    _, _, log, plain_log, _ = await run_differential(
        temporal_address,
        model_server,
        tmp_path,
        name="callbacks",
        tree=counted_pipeline,
        script=pipeline_script,
        texts=["A haiku about a frog, please."],
    )

    def counts(of: InvocationLog) -> dict[str, int]:
        names = [str(e["name"]) for e in of.entries("callback")]
        return {name: names.count(name) for name in sorted(set(names))}

    ours, plain = counts(log), counts(plain_log)
    # The model and tool callbacks run where their call runs, as often as in plain ADK; the
    # agent's end once, in the step where it ends.
    for name in ("before_model_callback", "after_model_callback", "before_tool_callback"):
        assert ours[name] == plain[name], name
    assert (ours["after_tool_callback"], ours["after_agent_callback"]) == (1, 1)
    assert (plain["before_model_callback"], plain["after_tool_callback"]) == (2, 1)
    # Documented difference: before_agent_callback runs in every step the agent resumes in
    # (its first model step, its tool step, the model step after it), where plain runs it once.
    assert (ours["before_agent_callback"], plain["before_agent_callback"]) == (3, 1)


async def test_a_tool_that_sets_transfer_to_agent_transfers_as_plain_adk(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    def script() -> list[ModelReply]:
        return [
            ModelReply.call(ScriptedToolCall("t1", "transfer_to_agent", {"agent_name": "Support"})),
            ModelReply.call(ScriptedToolCall("h1", "hand_to_billing", {"reason": "a refund"})),
            ModelReply.call(ScriptedToolCall("r1", "refund", {"order_id": "B2"})),
            ModelReply.say("Order B2 is refunded."),
        ]

    plain, _, log, _, events = await run_differential(
        temporal_address,
        model_server,
        tmp_path,
        name="tool-transfer",
        tree=help_desk,
        script=script,
        texts=["My plan is wrong, I want a refund of order B2."],
    )
    # The tool's action (tool_context.actions.transfer_to_agent) handed over to Billing, whose
    # model call came next, in a model step of its own.
    assert model_server.requests("adk-tool-transfer")[2].saw('Your internal name is "Billing"')
    assert [e["author"] for e in plain["events"]][-3:] == ["Billing", "Billing", "Billing"]
    assert tool_steps(events) == [("hand_to_billing", "read"), ("refund", "idempotent_write")]
    assert [e["key"] for e in log.entries("tool", "hand_to_billing")] == ["adk-tool-transfer/turn-1/h1"]


async def test_a_loop_agent_stops_at_max_iterations_and_starts_over_next_turn_as_plain_adk(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    def script() -> list[ModelReply]:
        return [ModelReply.say(f"Draft {n}.") for n in range(1, 5)]

    plain, _, _, _, events = await run_differential(
        temporal_address,
        model_server,
        tmp_path,
        name="bounded-loop",
        tree=bounded_loop,
        script=script,
        texts=["Draft a slogan.", "Again, shorter."],
    )
    requests = model_server.requests("adk-bounded-loop")
    # Two iterations per turn; each reads the draft the one before left in state.
    assert requests[1].saw("Improve:\nDraft 1.") and requests[3].saw("Improve:\nDraft 3.")
    assert plain["state"] == {"draft": "Draft 4."}
    # Four model calls, four model steps: one continued in each turn.
    assert sum(e.type is AgentEventType.MODEL_CONTINUED for e in events) == 2


async def test_an_agent_that_may_not_transfer_hands_the_next_turn_back_as_plain_adk(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    def script() -> list[ModelReply]:
        return [
            ModelReply.call(ScriptedToolCall("t1", "transfer_to_agent", {"agent_name": "Support"})),
            ModelReply.say("Email is up again."),
            ModelReply.call(ScriptedToolCall("t2", "transfer_to_agent", {"agent_name": "Billing"})),
            ModelReply.say("Billing here."),
        ]

    plain, _, _, _, _ = await run_differential(
        temporal_address,
        model_server,
        tmp_path,
        name="closed-help-desk",
        tree=closed_help_desk,
        script=script,
        texts=["My email does not work.", "And my bill?"],
    )
    requests = model_server.requests("adk-closed-help-desk")
    # Support was offered no transfer; turn 2 started at the coordinator again.
    assert "transfer_to_agent" not in requests[1].tool_names()
    assert requests[2].saw('Your internal name is "HelpDeskCoordinator"')
    assert [e["author"] for e in plain["events"]][-1] == "Billing"
