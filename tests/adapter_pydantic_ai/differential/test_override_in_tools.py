"""`Agent.override` inside a tool: a tool runs the agent itself again, under an override.

The tool step is a Pydantic AI run of the agent (with a model that makes no request), and
the tool inside it opens ``agent.override(model=..., instructions=...)`` and runs the agent
nested, as the docs' agent delegation does. The override wins over the step's own model and
ends with the tool: the nested run's requests (their own conversation, ``-nested``) and the
outer run's are plain's.
"""

from __future__ import annotations

from pathlib import Path

from pydantic_ai import Agent

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_pydantic_ai.differential.harness import Built, Models, Scenario, assert_same_run, run_both


def self_delegating(models: Models, log: InvocationLog) -> Built:
    agent = Agent(models.model(), instructions="Delegate summaries.")

    @agent.tool_plain
    async def summarise(text: str) -> str:
        """Summarise a text with a second run of this agent."""
        with agent.override(model=models.model("-nested", name="nested-model"), instructions="Be brief."):
            result = await agent.run(f"Summarise: {text}")
        log.record("tool", "summarise", text=text, summary=result.output)
        return result.output

    return Built(agent=agent)


async def test_a_tool_runs_the_agent_under_an_override(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="override-in-tool",
        build=self_delegating,
        script=[
            ModelReply.call(ScriptedToolCall("call_sum", "summarise", {"text": "a long story"})),
            ModelReply.say("Summary: short."),
        ],
        side_scripts={"-nested": [ModelReply.say("short")]},
        turns=["Summarise a long story"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.outputs == ["Summary: short."]
    assert plain.tool_runs == [{"name": "summarise", "text": "a long story", "summary": "short"}]
    nested = plain.requests["-nested"]
    assert len(nested) == 1 and nested[0]["model"] == "nested-model"
    assert nested[0]["messages"][0] == {"role": "system", "content": "Be brief."}
    assert_same_run(plain, session)
