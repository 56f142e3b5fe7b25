"""Turns, tools and approvals end to end: real dev server, worker child process, scripted runner."""

from __future__ import annotations

import json

from sessionflow import AgentToolCallStatus, ToolEffect, ToolPolicy
from sessionflow.testing import FileGate
from tests.harness import Harness, HarnessFactory
from tests.harness_helpers import idle_after, pending_interrupt, texts

READ = {"effect": "read"}


def call(tool_call_id: str, name: str, **arguments: object) -> dict[str, object]:
    return {"id": tool_call_id, "name": name, "arguments": arguments}


async def test_text_answer(harness: Harness) -> None:
    harness.script("s-text", [[{"text": "hello there"}]])
    await harness.sessions.start_session("s-text", "hi")
    snapshot = await idle_after(harness, "s-text", 1)
    assert texts(snapshot) == ["hi", "hello there"]
    assert [m.sequence for m in snapshot.messages] == [1, 2]
    assert snapshot.state is not None and snapshot.state.last_turn_error is None
    assert harness.seen("s-text", 1) == ["hi"]
    steps = await harness.stack.read_step_history("s-text")
    assert [(s.step_type, s.final_attempt, s.outcome) for s in steps] == [
        ("sessionflow.RunModel", 1, "completed")
    ]


async def test_read_tool_output_reaches_the_model(harness: Harness) -> None:
    harness.script(
        "s-read",
        [[{"tool_calls": [call("c1", "lookup", q="x")]}, {"text": "found it"}]],
        {"lookup": {**READ, "output": "lookup says 42"}},
    )
    await harness.sessions.start_session("s-read", "look it up")
    snapshot = await idle_after(harness, "s-read", 1)
    assert harness.seen("s-read", 2)[-1] == "lookup says 42"
    assert texts(snapshot)[-1] == "found it"
    # The turn's messages: user, the tool request, the tool result, the answer.
    assert len(snapshot.messages) == 4
    assert harness.log.count("tool", "lookup") == 1
    steps = await harness.stack.read_step_history("s-read")
    assert [s.step_type for s in steps] == [
        "sessionflow.RunModel",
        "sessionflow.CallTool",
        "sessionflow.RunModel",
    ]
    assert steps[1].step_execution_id == "turn-1/tool/c1"


async def test_two_reads_run_in_parallel_and_results_are_keyed_by_call_id(harness: Harness) -> None:
    harness.script(
        "s-par",
        [[{"tool_calls": [call("a", "left"), call("b", "right")]}, {"text": "both"}]],
        {"left": {**READ, "gate": "left", "output": "L"}, "right": {**READ, "gate": "right", "output": "R"}},
    )
    await harness.sessions.start_session("s-par", "go")
    left, right = FileGate(harness.state_dir, "left"), FileGate(harness.state_dir, "right")
    # Both gates are reached while neither is released: the two calls run at the same time.
    await left.wait_until_reached()
    await right.wait_until_reached()
    left.release()
    right.release()
    await idle_after(harness, "s-par", 1)
    seen = harness.seen("s-par", 2)
    assert seen[-2:] == ["L", "R"]
    tool_messages = [
        m.message.framework_item for m in (await harness.sessions.get_agent_snapshot("s-par")).messages
    ]
    assert {"role": "tool", "tool_call_id": "a", "content": "L"} in tool_messages
    assert {"role": "tool", "tool_call_id": "b", "content": "R"} in tool_messages


async def test_tool_execution_error_is_seen_and_not_retried(harness: Harness) -> None:
    harness.script(
        "s-err",
        [[{"tool_calls": [call("c1", "lookup")]}, {"text": "sorry"}]],
        {"lookup": {**READ, "error": "no such ticket"}},
    )
    await harness.sessions.start_session("s-err", "find ticket 9")
    await idle_after(harness, "s-err", 1)
    assert harness.log.count("tool", "lookup") == 1
    assert harness.seen("s-err", 2)[-1] == "Tool call failed: no such ticket"


async def test_read_that_crashes_twice_then_succeeds(harness: Harness) -> None:
    harness.script(
        "s-crash2",
        [[{"tool_calls": [call("c1", "flaky")]}, {"text": "ok"}]],
        {"flaky": {**READ, "crash_attempts": 2, "output": "third time"}},
    )
    await harness.sessions.start_session("s-crash2", "try")
    await idle_after(harness, "s-crash2", 1)
    assert [e["attempt"] for e in harness.log.entries("tool", "flaky")] == [1, 2, 3]
    assert harness.seen("s-crash2", 2)[-1] == "third time"
    steps = await harness.stack.read_step_history("s-crash2")
    assert (steps[1].step_type, steps[1].final_attempt, steps[1].outcome) == (
        "sessionflow.CallTool",
        3,
        "completed",
    )


async def test_exhausted_read_fails_and_exhausted_idempotent_write_is_outcome_unknown(
    harness: Harness,
) -> None:
    harness.script(
        "s-exhaust",
        [[{"tool_calls": [call("r", "reader"), call("w", "writer")]}, {"text": "done"}]],
        {
            "reader": {"effect": "read", "crash_attempts": 99},
            "writer": {"effect": "idempotent_write", "crash_attempts": 99},
        },
    )
    await harness.sessions.start_session("s-exhaust", "go")
    await idle_after(harness, "s-exhaust", 1)
    assert harness.log.count("tool", "reader") == 3
    writes = harness.log.entries("tool", "writer")
    assert len(writes) == 3
    assert {w["idempotency_key"] for w in writes} == {"s-exhaust/turn-1/w"}
    seen = harness.seen("s-exhaust", 2)
    assert seen[-2].startswith("Tool call failed:")
    assert seen[-1].startswith("The outcome of this tool call is unknown")


async def test_single_attempt_write_that_fails_is_outcome_unknown_after_one_run(
    harness_factory: HarnessFactory,
) -> None:
    harness: Harness = await harness_factory(
        tool_policies={"charge": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=False)}
    )
    harness.script(
        "s-once",
        [[{"tool_calls": [call("c1", "charge", amount=5)]}, {"text": "unsure"}]],
        {"charge": {"crash_attempts": 99}},
    )
    await harness.sessions.start_session("s-once", "charge me")
    await idle_after(harness, "s-once", 1)
    assert harness.log.count("tool", "charge") == 1
    steps = await harness.stack.read_step_history("s-once")
    assert (steps[1].step_type, steps[1].final_attempt, steps[1].outcome) == (
        "sessionflow.CallSingleAttemptTool",
        1,
        "failed",
    )
    assert harness.seen("s-once", 2)[-1].startswith("The outcome of this tool call is unknown")


async def test_approved_write_runs_once(harness: Harness) -> None:
    harness.script(
        "s-approve",
        [[{"tool_calls": [call("c1", "refund", order=7)]}, {"text": "refunded"}]],
        {"refund": {"effect": "non_idempotent_write", "output": "refund ok"}},
    )
    await harness.sessions.start_session("s-approve", "refund order 7")
    interrupt = await pending_interrupt(harness, "s-approve")
    assert (interrupt.tool_name, json.loads(interrupt.arguments)) == ("refund", {"order": 7})
    snapshot = await harness.sessions.get_agent_snapshot("s-approve")
    assert [r.status for r in snapshot.tool_calls] == [AgentToolCallStatus.AWAITING_APPROVAL]
    assert harness.log.count("tool", "refund") == 0
    assert await harness.sessions.resolve_interrupt(
        "s-approve", interrupt.interrupt_id, approved=True, rejection_message="ignored on approval"
    )
    await idle_after(harness, "s-approve", 1)
    assert harness.log.count("tool", "refund") == 1
    assert harness.seen("s-approve", 2)[-1] == "refund ok"
    # Resolving twice is refused.
    assert not await harness.sessions.resolve_interrupt("s-approve", interrupt.interrupt_id, approved=True)


async def test_rejection_message_reaches_the_model_and_the_tool_never_runs(harness: Harness) -> None:
    harness.script(
        "s-reject",
        [[{"tool_calls": [call("c1", "delete_all")]}, {"text": "ok, not deleting"}]],
        {"delete_all": {"effect": "non_idempotent_write"}},
    )
    await harness.sessions.start_session("s-reject", "clean up")
    interrupt = await pending_interrupt(harness, "s-reject")
    assert await harness.sessions.resolve_interrupt(
        "s-reject", interrupt.interrupt_id, approved=False, rejection_message="too risky"
    )
    await idle_after(harness, "s-reject", 1)
    assert harness.log.count("tool", "delete_all") == 0
    assert harness.seen("s-reject", 2)[-1] == "Tool call rejected by the user: too risky"
    steps = await harness.stack.read_step_history("s-reject")
    assert [s.step_type for s in steps] == ["sessionflow.RunModel", "sessionflow.RunModel"]


async def test_approval_expires_at_its_deadline_and_late_resolution_is_refused(
    harness_factory: HarnessFactory,
) -> None:
    from dataclasses import replace
    from datetime import timedelta

    from tests.harness import FAST

    harness: Harness = await harness_factory(timings=replace(FAST, interrupt_deadline=timedelta(seconds=2)))
    harness.script(
        "s-expire",
        [[{"tool_calls": [call("c1", "deploy")]}, {"text": "nobody answered"}]],
        {"deploy": {"effect": "unclassified"}},
    )
    await harness.sessions.start_session("s-expire", "deploy")
    interrupt = await pending_interrupt(harness, "s-expire")
    assert interrupt.deadline is not None
    await idle_after(harness, "s-expire", 1)
    assert not await harness.sessions.resolve_interrupt("s-expire", interrupt.interrupt_id, approved=True)
    assert harness.log.count("tool", "deploy") == 0
    assert harness.seen("s-expire", 2)[-1] == (
        "Tool call not run: The approval deadline passed before anyone answered."
    )


async def test_explicit_policy_overrides_framework_metadata(harness_factory: HarnessFactory) -> None:
    # The framework says "read", the flow says it needs approval anyway.
    harness: Harness = await harness_factory(
        tool_policies={"peek": ToolPolicy(effect=ToolEffect.READ, requires_approval=True)}
    )
    harness.script(
        "s-policy",
        [[{"tool_calls": [call("c1", "peek"), call("c2", "glance")]}, {"text": "ok"}]],
        {"peek": {"effect": "read"}, "glance": {"effect": "read"}},
    )
    await harness.sessions.start_session("s-policy", "look")
    interrupt = await pending_interrupt(harness, "s-policy")
    assert interrupt.tool_name == "peek"
    snapshot = await harness.sessions.get_agent_snapshot("s-policy")
    policies = {r.tool_name: (r.policy.effect, r.policy.is_approval_required) for r in snapshot.tool_calls}
    assert policies == {"peek": (ToolEffect.READ, True), "glance": (ToolEffect.READ, False)}
    assert await harness.sessions.resolve_interrupt("s-policy", interrupt.interrupt_id, approved=True)
    await idle_after(harness, "s-policy", 1)
    assert harness.log.count("tool", "peek") == 1


async def test_model_failing_every_attempt_leaves_the_turn_failure_note(harness: Harness) -> None:
    harness.script(
        "s-fail",
        [
            [{"tool_calls": [call("w1", "save", doc=1)]}, {"fail_attempts": 3, "text": "never"}],
            [{"text": "I see the earlier failure"}],
        ],
        {"save": {"effect": "idempotent_write", "output": "saved"}},
    )
    await harness.sessions.start_session("s-fail", "save doc 1")
    snapshot = await idle_after(harness, "s-fail", 1)
    assert snapshot.state is not None
    assert snapshot.state.last_turn_error is not None
    assert "scripted failure of model call 2" in snapshot.state.last_turn_error
    assert snapshot.tool_calls == []
    note = texts(snapshot)[-1]
    assert note == (
        "[sessionflow] The previous turn failed after these tool calls ran:\n"
        '- save {"doc":1} -> succeeded: saved\n'
        "Do not repeat these tool calls unless the user asks again."
    )
    assert [e["attempt"] for e in harness.log.entries("model", session="s-fail", call=2)] == [1, 2, 3]
    assert await harness.sessions.send_user_message("s-fail", "what happened?")
    snapshot = await idle_after(harness, "s-fail", 2)
    assert note in harness.seen("s-fail", 5)
    assert snapshot.state is not None and snapshot.state.last_turn_error is None
    steps = await harness.stack.read_step_history("s-fail")
    assert [(s.step_type, s.final_attempt, s.outcome) for s in steps] == [
        ("sessionflow.RunModel", 1, "completed"),
        ("sessionflow.CallTool", 1, "completed"),
        ("sessionflow.RunModel", 3, "failed"),
        ("sessionflow.RunModel", 1, "completed"),
    ]


async def test_model_failure_without_tool_records_leaves_no_note(harness: Harness) -> None:
    harness.script("s-fail0", [[{"fail_attempts": 3, "text": "never"}]])
    await harness.sessions.start_session("s-fail0", "hello")
    snapshot = await idle_after(harness, "s-fail0", 1)
    assert texts(snapshot) == ["hello"]
    assert snapshot.state is not None and snapshot.state.last_turn_error


async def test_blank_messages_are_refused(harness: Harness) -> None:
    harness.script("s-blank", [[{"text": "answer"}]])
    await harness.sessions.start_session("s-blank", "   ")
    snapshot = await harness.sessions.get_agent_snapshot("s-blank")
    assert snapshot.state is not None and snapshot.state.turn_count == 0
    assert not await harness.sessions.send_user_message("s-blank", "")
    assert not await harness.sessions.send_user_message("s-blank", " \n\t")
    assert (await harness.sessions.get_agent_snapshot("s-blank")).message_count == 0
    assert await harness.sessions.send_user_message("s-blank", "real question")
    await idle_after(harness, "s-blank", 1)
    assert harness.log.count("model") == 1


async def test_invalid_tool_call_ids_fail_the_turn(harness: Harness) -> None:
    cases = {
        "s-id-empty": ([[{"tool_calls": [call("", "lookup")]}]], "is empty"),
        "s-id-slash": ([[{"tool_calls": [call("a/b", "lookup")]}]], "contains '/'"),
        "s-id-dup": ([[{"tool_calls": [call("x", "lookup"), call("x", "lookup")]}]], "used twice"),
        "s-id-dup-later": (
            [[{"tool_calls": [call("x", "lookup")]}, {"tool_calls": [call("x", "lookup")]}]],
            "used twice",
        ),
    }
    for session_id, (turns, _) in cases.items():
        harness.script(session_id, turns, {"lookup": READ})
        await harness.sessions.start_session(session_id, "go")
    for session_id, (_, reason) in cases.items():
        snapshot = await idle_after(harness, session_id, 1)
        assert snapshot.state is not None and snapshot.state.last_turn_error is not None
        assert reason in snapshot.state.last_turn_error, snapshot.state.last_turn_error
        assert "InvalidToolCallError" in snapshot.state.last_turn_error
    # The ID check is final: no model call is retried for it.
    assert [e["attempt"] for e in harness.log.entries("model", session="s-id-slash")] == [1]
    # The later duplicate ran its first call, so the failed turn leaves a note.
    later = await harness.sessions.get_agent_snapshot("s-id-dup-later")
    assert (texts(later)[-1] or "").startswith("[sessionflow] The previous turn failed")


async def test_snapshot_pagination_usage_and_workflow_identity(harness: Harness) -> None:
    turns: list[list[dict[str, object]]] = [
        [{"text": f"answer {n}", "usage": {"input_tokens": 100 + n, "output_tokens": n}}] for n in range(1, 4)
    ]
    turns[1] = [
        {"tool_calls": [call("c1", "lookup")], "usage": {"input_tokens": 7, "output_tokens": 3}},
        *turns[1],
    ]
    harness.script("s-snap", turns, {"lookup": READ})
    await harness.sessions.start_session("s-snap", "q1")
    await idle_after(harness, "s-snap", 1)
    for n, text in enumerate(["q2", "q3"], start=2):
        assert await harness.sessions.send_user_message("s-snap", text)
        await idle_after(harness, "s-snap", n)
    snapshot = await harness.sessions.get_agent_snapshot("s-snap")
    assert snapshot.usage.requests == 4
    assert snapshot.usage.input_tokens == 101 + 7 + 102 + 103
    assert snapshot.usage.output_tokens == 1 + 3 + 2 + 3
    assert snapshot.message_count == 8
    page = await harness.sessions.list_agent_messages("s-snap", limit=3)
    assert [m.sequence for m in page.messages] == [1, 2, 3] and page.next_after == 3
    page = await harness.sessions.list_agent_messages("s-snap", after=page.next_after, limit=3)
    assert [m.sequence for m in page.messages] == [4, 5, 6] and page.next_after == 6
    page = await harness.sessions.list_agent_messages("s-snap", after=6, limit=3)
    assert [m.sequence for m in page.messages] == [7, 8] and page.next_after is None
    assert len((await harness.sessions.list_agent_messages("s-snap", limit=0)).messages) == 1
    assert len((await harness.sessions.list_agent_messages("s-snap", limit=10_000)).messages) == 8
    description = await harness.stack.client.get_workflow_handle("s-snap").describe()
    assert description.id == "s-snap"
    assert description.workflow_type == harness.flow.flow_type
    assert description.task_queue == harness.flow.flow_type


async def test_messages_queue_while_a_turn_runs(harness: Harness) -> None:
    harness.script(
        "s-queue",
        [[{"gate": "slow-model", "text": "first"}], [{"text": "second"}]],
    )
    await harness.sessions.start_session("s-queue", "one")
    gate = FileGate(harness.state_dir, "slow-model")
    await gate.wait_until_reached()
    assert await harness.sessions.send_user_message("s-queue", "two")
    snapshot = await harness.sessions.get_agent_snapshot("s-queue")
    assert snapshot.queued_message_count == 1
    gate.release()
    snapshot = await idle_after(harness, "s-queue", 2)
    assert texts(snapshot) == ["one", "first", "two", "second"]
    assert snapshot.queued_message_count == 0


async def test_tool_call_ids_may_repeat_across_turns(harness: Harness) -> None:
    harness.script(
        "s-repeat",
        [
            [{"tool_calls": [call("c1", "save")]}, {"text": "one"}],
            [{"tool_calls": [call("c1", "save")]}, {"text": "two"}],
        ],
        {"save": {"effect": "idempotent_write"}},
    )
    await harness.sessions.start_session("s-repeat", "a")
    await idle_after(harness, "s-repeat", 1)
    assert await harness.sessions.send_user_message("s-repeat", "b")
    snapshot = await idle_after(harness, "s-repeat", 2)
    assert snapshot.state is not None and snapshot.state.last_turn_error is None
    keys = [e["idempotency_key"] for e in harness.log.entries("tool", "save")]
    assert keys == ["s-repeat/turn-1/c1", "s-repeat/turn-2/c1"]


async def test_turn_two_sees_turn_one_tool_results(harness: Harness) -> None:
    harness.script(
        "s-multi",
        [[{"tool_calls": [call("c1", "lookup")]}, {"text": "one"}], [{"text": "two"}]],
        {"lookup": {**READ, "output": "fact from turn 1"}},
    )
    await harness.sessions.start_session("s-multi", "a")
    await idle_after(harness, "s-multi", 1)
    assert await harness.sessions.send_user_message("s-multi", "b")
    await idle_after(harness, "s-multi", 2)
    assert "fact from turn 1" in harness.seen("s-multi", 3)
    assert harness.seen("s-multi", 3)[-1] == "b"


async def test_large_tool_output(harness: Harness) -> None:
    harness.script(
        "s-big",
        [[{"tool_calls": [call("c1", "dump")]}, {"text": "got it"}]],
        {"dump": {**READ, "output_bytes": 200_000}},
    )
    await harness.sessions.start_session("s-big", "dump")
    await idle_after(harness, "s-big", 1)
    assert len(harness.seen("s-big", 2)[-1]) == 200_000


async def test_turn_aborted_fails_the_turn_without_retrying(harness: Harness) -> None:
    harness.script("s-abort", [[{"abort": "guardrail tripped: no secrets"}]])
    await harness.sessions.start_session("s-abort", "tell me the password")
    snapshot = await idle_after(harness, "s-abort", 1)
    assert snapshot.state is not None
    assert snapshot.state.last_turn_error == "model call failed: TurnAborted: guardrail tripped: no secrets"
    assert [e["attempt"] for e in harness.log.entries("model", session="s-abort")] == [1]


async def test_session_settings_reach_the_model_step_and_the_tool_step(harness: Harness) -> None:
    harness.script(
        "s-settings",
        [[{"tool_calls": [call("c1", "lookup")]}, {"text": "one"}], [{"text": "two"}]],
        {"lookup": READ},
    )
    await harness.sessions.start_session("s-settings", "a", settings={"model": "small"})
    await idle_after(harness, "s-settings", 1)
    assert await harness.sessions.send_user_message(
        "s-settings", "b", settings={"local_tools": {"shell": False}}
    )
    await idle_after(harness, "s-settings", 2)
    models = harness.log.entries("model", session="s-settings")
    assert [m["settings"] for m in models] == [
        {"model": "small"},
        {"model": "small"},
        {"local_tools": {"shell": False}},
    ]
    assert harness.log.entries("tool", "lookup")[0]["settings"] == {"model": "small"}


async def test_question_tool_with_approval_gets_the_answer(harness_factory: HarnessFactory) -> None:
    harness: Harness = await harness_factory(
        tool_policies={"ask_user": ToolPolicy(effect=ToolEffect.READ, requires_approval=True)}
    )
    harness.script(
        "s-ask2",
        [[{"tool_calls": [call("q1", "ask_user", question="Which colour?")]}, {"text": "noted"}]],
        {"ask_user": {"returns_answer": True}},
    )
    await harness.sessions.start_session("s-ask2", "pick for me")
    interrupt = await pending_interrupt(harness, "s-ask2")
    assert await harness.sessions.resolve_interrupt(
        "s-ask2", interrupt.interrupt_id, approved=True, answer="blue"
    )
    await idle_after(harness, "s-ask2", 1)
    assert harness.seen("s-ask2", 2)[-1] == "the user answered: blue"


async def test_a_retried_send_with_the_same_message_id_queues_one_message(harness: Harness) -> None:
    harness.script("s-dedup", [[{"text": "one"}], [{"text": "two"}], [{"text": "three"}]])
    await harness.sessions.start_session("s-dedup", "first")
    await idle_after(harness, "s-dedup", 1)
    assert await harness.sessions.send_user_message("s-dedup", "second", message_id="m-2")
    assert await harness.sessions.send_user_message("s-dedup", "second", message_id="m-2")
    await idle_after(harness, "s-dedup", 2)
    assert await harness.sessions.send_user_message("s-dedup", "second", message_id="m-2")
    assert await harness.sessions.send_user_message("s-dedup", "third", message_id="m-3")
    snapshot = await idle_after(harness, "s-dedup", 3)
    assert texts(snapshot) == ["first", "one", "second", "two", "third", "three"]
    assert snapshot.state is not None and snapshot.state.turn_count == 3


async def test_stop_session_ends_it_and_reads_keep_working(harness: Harness) -> None:
    harness.script("s-stop", [[{"text": "hello"}]])
    await harness.sessions.start_session("s-stop", "hi")
    await idle_after(harness, "s-stop", 1)
    assert await harness.sessions.stop_session("s-stop")
    await harness.stack.client.get_workflow_handle("s-stop").result()
    snapshot = await harness.sessions.get_agent_snapshot("s-stop")
    assert snapshot.stopped and texts(snapshot) == ["hi", "hello"]
    assert [m.sequence for m in (await harness.sessions.list_agent_messages("s-stop")).messages] == [1, 2]
    assert not await harness.sessions.send_user_message("s-stop", "anyone there?")
    assert not await harness.sessions.stop_session("s-stop")
