"""An `LlmAgent`'s options and callbacks through sessionflow, compared with plain ADK on the
same scripted Gemini server (the differential harness of `test_agent_trees`): what each
request carried, the final events and state, and how often tools and callbacks ran."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from google.adk.agents import BaseAgent, LlmAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.models.google_llm import Gemini
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.planners import BuiltInPlanner
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types
from pydantic import BaseModel

from sessionflow import tool_effect
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_google_adk.agents import MODEL
from tests.adapter_google_adk.test_agent_trees import run_differential


class CapitalAnswer(BaseModel):
    """ADK's output_schema sample: the capital of a country, as JSON."""

    capital: str


def configured(base_url: str, log: InvocationLog) -> BaseAgent:
    """`generate_content_config`, `output_schema` with `output_key`, `include_contents`."""
    return LlmAgent(
        name="capital_agent",
        model=Gemini(model=MODEL, base_url=base_url),
        instruction="Answer with the capital of the country, as JSON.",
        generate_content_config=types.GenerateContentConfig(temperature=0.2, max_output_tokens=250),
        output_schema=CapitalAnswer,
        output_key="found_capital",
        include_contents="none",
    )


async def test_content_config_output_schema_and_include_contents_as_plain_adk(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    def script() -> list[ModelReply]:
        return [ModelReply.say('{"capital": "Paris"}'), ModelReply.say('{"capital": "Rome"}')]

    plain, _, _, _, _ = await run_differential(
        temporal_address,
        model_server,
        tmp_path,
        name="configured",
        tree=configured,
        script=script,
        texts=["France?", "Italy?"],
    )
    requests = model_server.requests("adk-configured")
    config = requests[0].body["generationConfig"]
    assert (config["temperature"], config["maxOutputTokens"]) == (0.2, 250)
    assert config["responseMimeType"] == "application/json"
    # include_contents="none": turn 2's request holds turn 2's message only.
    assert [c["parts"][0]["text"] for c in requests[1].body["contents"]] == ["Italy?"]
    assert plain["state"] == {"found_capital": {"capital": "Rome"}}


def guarded(base_url: str, log: InvocationLog) -> BaseAgent:
    """ADK's callback docs' guardrails: a `before_model_callback` that answers instead of
    the model when the message says BLOCK, a `before_tool_callback` that answers instead of
    the tool for one city, and an `after_model_callback` and `after_tool_callback` that
    only count."""

    @tool_effect("read")
    def get_capital_city(country: str, tool_context: ToolContext) -> str:
        """Returns the capital of a country."""
        log.record("tool", "get_capital_city", country=country)
        return {"france": "Paris", "italy": "Rome"}.get(country.lower(), "unknown")

    def block_keyword(callback_context: CallbackContext, llm_request: LlmRequest) -> LlmResponse | None:
        log.record("callback", "before_model")
        last = llm_request.contents[-1].parts or [] if llm_request.contents else []
        if any(part.text and "BLOCK" in part.text for part in last):
            return LlmResponse(content=types.Content(role="model", parts=[types.Part(text="Blocked.")]))
        return None

    def after_model(callback_context: CallbackContext, llm_response: LlmResponse) -> None:
        log.record("callback", "after_model")

    def skip_paris(tool: BaseTool, args: dict[str, Any], tool_context: ToolContext) -> dict[str, Any] | None:
        log.record("callback", "before_tool")
        if args.get("country", "").lower() == "france":
            return {"result": "Tool call was blocked by before_tool_callback."}
        return None

    def after_tool(
        tool: BaseTool, args: dict[str, Any], tool_context: ToolContext, tool_response: Any
    ) -> None:
        log.record("callback", "after_tool")

    return LlmAgent(
        name="guarded_agent",
        model=Gemini(model=MODEL, base_url=base_url),
        instruction="You answer questions about capitals.",
        tools=[get_capital_city],
        before_model_callback=block_keyword,
        after_model_callback=after_model,
        before_tool_callback=skip_paris,
        after_tool_callback=after_tool,
    )


async def test_callbacks_that_answer_replace_the_call_as_in_plain_adk(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    def script() -> list[ModelReply]:
        return [
            ModelReply.call(
                ScriptedToolCall("c1", "get_capital_city", {"country": "France"}),
                ScriptedToolCall("c2", "get_capital_city", {"country": "Italy"}),
            ),
            ModelReply.say("Italy's capital is Rome; France's I may not say."),
        ]

    plain, snapshot, log, plain_log, _ = await run_differential(
        temporal_address,
        model_server,
        tmp_path,
        name="guarded",
        tree=guarded,
        script=script,
        texts=["Capitals of France and Italy?", "BLOCK this one"],
    )
    requests = model_server.requests("adk-guarded")
    assert len(requests) == 2  # turn 2's model call was answered by the callback
    assert requests[1].tool_results() == {
        "c1": "Tool call was blocked by before_tool_callback.",
        "c2": "Rome",
    }
    # The tool ran for Italy only, once; every callback ran as often as in plain ADK.
    assert [e["country"] for e in log.entries("tool", "get_capital_city")] == ["Italy"]
    assert [e["country"] for e in plain_log.entries("tool", "get_capital_city")] == ["Italy"]

    def counts(of: InvocationLog) -> dict[str, int]:
        names = [str(e["name"]) for e in of.entries("callback")]
        return {name: names.count(name) for name in sorted(set(names))}

    # after_model runs on each streamed response (a partial and the whole one); after_tool
    # also on the answer a before_tool_callback gave, as ADK's pipeline runs it.
    assert (
        counts(log)
        == counts(plain_log)
        == {
            "after_model": 4,
            "after_tool": 2,
            "before_model": 3,
            "before_tool": 2,
        }
    )
    assert snapshot.messages[-1].message.text == "Blocked."
    assert plain["events"][-1] == {
        "author": "guarded_agent",
        "content": {"parts": [{"text": "Blocked."}], "role": "model"},
    }


def planned(base_url: str, log: InvocationLog) -> BaseAgent:
    """A `BuiltInPlanner` (Gemini's thinking config), a `static_instruction` and a
    `global_instruction`, and a tool whose
    error an `on_tool_error_callback` answers (ADK's callback docs' error handler)."""

    @tool_effect("read")
    def lookup_order(order_id: str) -> str:
        """Looks an order up."""
        log.record("tool", "lookup_order", order_id=order_id)
        raise RuntimeError(f"order service down for {order_id}")

    def on_tool_error(
        tool: BaseTool, args: dict[str, Any], tool_context: ToolContext, error: Exception
    ) -> dict[str, Any]:
        log.record("callback", "on_tool_error", error=str(error))
        return {"error": "The order service is down; try later."}

    return LlmAgent(
        name="orders_agent",
        model=Gemini(model=MODEL, base_url=base_url),
        static_instruction=types.Content(role="user", parts=[types.Part(text="You track orders.")]),
        global_instruction="Answer in English.",
        instruction="Be brief.",
        planner=BuiltInPlanner(
            thinking_config=types.ThinkingConfig(include_thoughts=True, thinking_budget=64)
        ),
        tools=[lookup_order],
        on_tool_error_callback=on_tool_error,
    )


async def test_a_planner_static_and_global_instructions_and_a_tool_error_callback_as_plain_adk(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    def script() -> list[ModelReply]:
        return [
            ModelReply.call(ScriptedToolCall("o1", "lookup_order", {"order_id": "A7"})),
            ModelReply.say("The order service is down."),
        ]

    _, _, log, plain_log, _ = await run_differential(
        temporal_address,
        model_server,
        tmp_path,
        name="planned",
        tree=planned,
        script=script,
        texts=["Where is order A7?"],
    )
    first, second = model_server.requests("adk-planned")
    assert first.body["generationConfig"]["thinkingConfig"] == {
        "include_thoughts": True,
        "thinking_budget": 64,
    }
    assert first.saw("You track orders.") and first.saw("Be brief.") and first.saw("Answer in English.")
    # The error callback's answer is what the model saw; the tool and the callback ran once.
    assert second.tool_results() == {"o1": "The order service is down; try later."}
    for of in (log, plain_log):
        assert of.count("tool") == 1
        assert [e["error"] for e in of.entries("callback")] == ["order service down for A7"]
