"""Approvals and deferred tools as Pydantic AI has them (issue 23, item 3).

The agents are the deferred-tools docs' (docs/deferred-tools.md): `update_file` asks for
approval itself (`ApprovalRequired`) for a protected file, `delete_file` is declared
``requires_approval=True``, and a tool whose result comes from outside raises
`CallDeferred`. The plain run ends with `DeferredToolRequests` and resumes with
`DeferredToolResults`; the session waits durably instead, and the model must see the same.
"""

from __future__ import annotations

from pathlib import Path

from pydantic_ai import Agent, ApprovalRequired, CallDeferred, DeferredToolRequests, RunContext

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_pydantic_ai.differential.harness import Built, Models, Scenario, assert_same_run, run_both

PROTECTED_FILES = {".env"}


def file_agent(models: Models, log: InvocationLog) -> Built:
    """docs/deferred-tools.md, "Human-in-the-Loop Tool Approval"."""
    agent = Agent(models.model(), output_type=[str, DeferredToolRequests])

    @agent.tool
    def update_file(ctx: RunContext, path: str, content: str) -> str:
        if path in PROTECTED_FILES and not ctx.tool_call_approved:
            raise ApprovalRequired(metadata={"reason": "protected"})
        log.record("tool", "update_file", path=path)
        return f"File {path!r} updated: {content!r}"

    @agent.tool_plain(requires_approval=True)
    def delete_file(path: str) -> str:
        log.record("tool", "delete_file", path=path)
        return f"File {path!r} deleted"

    return Built(agent=agent)


def task_agent(models: Models, log: InvocationLog) -> Built:
    """docs/deferred-tools.md, "External Tool Execution": a task another system runs."""
    agent = Agent(models.model(), output_type=[str, DeferredToolRequests])

    @agent.tool
    async def calculate_answer(ctx: RunContext, question: str) -> str:
        log.record("tool", "calculate_answer", question=question)
        raise CallDeferred(metadata={"task": "long-running"})

    return Built(agent=agent)


def update(call_id: str, path: str, content: str) -> ScriptedToolCall:
    return ScriptedToolCall(call_id, "update_file", {"path": path, "content": content})


async def test_a_tool_that_asks_for_approval_itself_waits_for_a_person(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="approval-required",
        build=file_agent,
        script=[
            ModelReply.call(update("c1", "README.md", "Hello"), update("c2", ".env", "SECRET=1")),
            ModelReply.say("Both files are updated."),
        ],
        turns=["Update README.md and .env"],
        approvals=[True],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.asked == [("update_file", {"path": ".env", "content": "SECRET=1"})]
    # README.md ran once; .env ran twice (asked, then approved) and updated once.
    # In order: .env's update waited for its approval, README.md's did not.
    assert plain.tool_runs == [
        {"name": "update_file", "path": "README.md"},
        {"name": "update_file", "path": ".env"},
    ]
    assert "File '.env' updated" in str(plain.requests[""][1]["messages"])
    assert_same_run(plain, session)


async def test_a_denied_approval_reaches_the_model_as_pydantic_ai_words_it(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="approval-denied",
        build=file_agent,
        script=[
            ModelReply.call(update("c1", ".env", "SECRET=1")),
            ModelReply.say("I left .env alone."),
        ],
        turns=["Update .env"],
        approvals=[False],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.tool_runs == []
    assert "The tool call was denied." in str(plain.requests[""][1]["messages"])
    assert_same_run(plain, session)


async def test_a_requires_approval_tool_waits_for_a_person(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="requires-approval",
        build=file_agent,
        script=[
            ModelReply.call(ScriptedToolCall("c1", "delete_file", {"path": "__init__.py"})),
            ModelReply.say("Deleted."),
        ],
        turns=["Delete __init__.py"],
        approvals=[True],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.asked == [("delete_file", {"path": "__init__.py"})]
    assert plain.tool_runs == [{"name": "delete_file", "path": "__init__.py"}]
    assert_same_run(plain, session)


async def test_a_call_deferred_tool_waits_for_its_result_from_outside(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="call-deferred",
        build=task_agent,
        script=[
            ModelReply.call(ScriptedToolCall("c1", "calculate_answer", {"question": "6 x 7?"})),
            ModelReply.say("The answer is 42."),
        ],
        turns=["What is 6 x 7? Use the calculator."],
        external_results=["42"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.asked == [("calculate_answer", {"question": "6 x 7?"})]
    assert plain.requests[""][1]["messages"][-1] == {"role": "tool", "tool_call_id": "c1", "content": "42"}
    assert_same_run(plain, session)
