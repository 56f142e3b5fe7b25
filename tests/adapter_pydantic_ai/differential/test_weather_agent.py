"""weather_agent.py: tools that return objects, and an HTTP client in the deps.

The tools' objects (`LatLng`, a dict) go back to Pydantic AI as the values they were, so the
history keeps them as plain does. The client is the worker's resource (`deps_resources`):
the one deliberate difference, since a client cannot travel with the session's state.
"""

from __future__ import annotations

from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_pydantic_ai.differential import examples
from tests.adapter_pydantic_ai.differential.harness import Scenario, assert_same_run, run_both


def lat_lng(call_id: str, location: str) -> ScriptedToolCall:
    return ScriptedToolCall(call_id, "get_lat_lng", {"location_description": location})


def weather_at(call_id: str, lat: float, lng: float) -> ScriptedToolCall:
    return ScriptedToolCall(call_id, "get_weather", {"lat": lat, "lng": lng})


async def test_weather_agent_two_cities_then_a_third(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """weather_agent.py's question (parallel calls of each tool in turn), then a follow-up."""
    scenario = Scenario(
        name="weather",
        build=examples.weather_agent,
        script=[
            ModelReply.call(lat_lng("call_ll_london", "London"), lat_lng("call_ll_wilts", "Wiltshire")),
            ModelReply.call(
                weather_at("call_w_london", 51.5, -0.13), weather_at("call_w_wilts", 51.35, -1.99)
            ),
            ModelReply.say("It is 21 °C and sunny in London, and 21 °C with drizzle in Wiltshire."),
            ModelReply.call(lat_lng("call_ll_paris", "Paris")),
            ModelReply.call(weather_at("call_w_paris", 48.86, 2.35)),
            ModelReply.say("It is 21 °C and cloudy in Paris."),
        ],
        turns=["What is the weather like in London and in Wiltshire?", "And in Paris?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.outputs == [
        "It is 21 °C and sunny in London, and 21 °C with drizzle in Wiltshire.",
        "It is 21 °C and cloudy in Paris.",
    ]
    runs = [(run["name"], run.get("location_description", run.get("lat"))) for run in plain.tool_runs]
    # Each of the first two responses asks for two calls, which Pydantic AI runs concurrently
    # (`pydantic_ai._tool_execution`): in order response by response, each pair in any order.
    assert sorted(runs[:2]) == [("get_lat_lng", "London"), ("get_lat_lng", "Wiltshire")]
    assert sorted(runs[2:4]) == [("get_weather", 51.35), ("get_weather", 51.5)]
    assert runs[4:] == [("get_lat_lng", "Paris"), ("get_weather", 48.86)]
    # The model saw the mock endpoints' answers, as the tools returned them.
    assert (
        plain.requests[""][2]["messages"][-1]["content"] == '{"temperature":"21 °C","description":"Drizzle"}'
    )
    assert_same_run(plain, session)
