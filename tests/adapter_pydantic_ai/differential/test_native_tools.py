"""Native (provider-run) tools: the provider runs them inside the model request.

`WebSearchTool` on OpenAI's Responses API, as Pydantic AI's docs configure it
(``capabilities=[NativeTool(WebSearchTool())]``): the request offers ``web_search``, and
the provider's own ``web_search_call`` item comes back in the response, before its
message, as the scripted server sends it (`ModelReply.output_items`). There is nothing to
run: no tool step, the call and its result are parts of the model step's response (stored
as Pydantic AI's `BuiltinToolCallPart` and `BuiltinToolReturnPart`), and the next turn's
request is plain's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.capabilities import NativeTool
from pydantic_ai.native_tools import WebSearchTool

from sessionflow.demo import ModelReply, ScriptedModelServer
from sessionflow.testing import InvocationLog
from sessionflow_pydantic_ai._models import model_for_api
from tests.adapter_pydantic_ai.differential.harness import Built, Models, Scenario, assert_same_run, run_both


def searching_agent(models: Models, log: InvocationLog) -> Built:
    base_url = f"{models.server_url}/k/{models.key}/v1"
    model = model_for_api("responses", "scripted-model", base_url=base_url, api_key="x")
    agent = Agent(model, instructions="Search the web.", capabilities=[NativeTool(WebSearchTool())])
    return Built(agent=agent)


def web_search_call(query: str, number: int) -> dict[str, Any]:
    return {
        "id": f"ws_{number}",
        "type": "web_search_call",
        "status": "completed",
        "action": {"type": "search", "query": query},
    }


async def test_a_provider_run_web_search_is_part_of_the_model_step_as_plain(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="native-web-search",
        build=searching_agent,
        script=[
            ModelReply(
                text="Temporal is a durable execution engine.", output_items=[web_search_call("temporal", 1)]
            ),
            ModelReply.say("It was founded in 2019."),
        ],
        turns=["What is Temporal?", "When was it founded?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.outputs == ["Temporal is a durable execution engine.", "It was founded in 2019."]
    assert [t["type"] for t in plain.requests[""][0]["tools"]] == ["web_search"]
    # The provider's call and result are parts of the stored response, not a tool step's.
    parts = [p["part_kind"] for m in plain.history if m["kind"] == "response" for p in m["parts"]]
    assert parts[:3] == ["builtin-tool-call", "builtin-tool-return", "text"]
    # The second turn's request is plain's: the search's answer as assistant text.
    assert [item.get("role") for item in plain.requests[""][1]["input"]] == ["user", "assistant", "user"]
    assert plain.tool_runs == session.tool_runs == []
    assert_same_run(plain, session)
