"""Workspaces: an agent's `LocalWorkspace` capability, its tools on ``ctx.workspace``.

Pydantic AI 2.68's `Agent` takes no ``workspace=``: an agent's workspace is a capability
(`LocalWorkspace(path)`), selected when a run starts, and each response records the
workspace's `WorkspaceRef` (``ModelResponse.workspace_ref``), which a later run is offered
from the history. A session's every step is a run, so each step selects the workspace again
from the agent's capability (over the same directory: a local backend holds no state of
its own), with the ref the stored history carries. The tools read and write the same files,
the model is sent the same, and the stored responses keep plain's refs.

A per-run ``workspace=`` (`agent.run(workspace=...)`) has no flow option: the flow refuses
it (`test_build_refusals.py`).
"""

from __future__ import annotations

from pathlib import Path

from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import LocalWorkspace

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_pydantic_ai.differential.harness import (
    AgentBuilder,
    Built,
    Models,
    Scenario,
    assert_same_run,
    run_both,
)


def workspace_agent(root: Path) -> AgentBuilder:
    def build(models: Models, log: InvocationLog) -> Built:
        # The runs (plain, then the session) each start from the same directory, reset: the
        # workspace's ref names the directory, and both must record the same.
        directory = root
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "notes.txt").write_text("buy milk\n")
        agent = Agent(models.model(), instructions="Keep notes.", capabilities=[LocalWorkspace(directory)])

        @agent.tool
        async def read_notes(ctx: RunContext[object]) -> str:
            """Read the notes file."""
            text = (await ctx.workspace.read_bytes("notes.txt")).decode()
            log.record("tool", "read_notes", text=text)
            return text

        @agent.tool
        async def add_note(ctx: RunContext[object], note: str) -> str:
            """Append a note."""
            path = "notes.txt"
            text = (await ctx.workspace.read_bytes(path)).decode() + note + "\n"
            await ctx.workspace.write_bytes(path, text.encode())
            log.record("tool", "add_note", note=note, ref=str(ctx.workspace.ref))
            return "added"

        return Built(agent=agent)

    return build


async def test_a_local_workspace_capability_serves_every_step_as_the_plain_run(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="workspace",
        build=workspace_agent(tmp_path / "workspaces"),
        script=[
            ModelReply.call(ScriptedToolCall("call_1", "add_note", {"note": "call mum"})),
            ModelReply.say("Added."),
            ModelReply.call(ScriptedToolCall("call_2", "read_notes", {})),
            ModelReply.say("You have two notes."),
        ],
        turns=["Note: call mum", "What are my notes?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.tool_runs[1] == {"name": "read_notes", "text": "buy milk\ncall mum\n"}
    refs = [m["workspace_ref"] for m in plain.history if m["kind"] == "response"]
    assert len(refs) == 4 and all(ref is not None and ref["provider"] == "local" for ref in refs)
    assert_same_run(plain, session)
