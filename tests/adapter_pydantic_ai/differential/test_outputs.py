"""Differential tests of Pydantic AI's output types and modes (output_agents.py).

Each agent is copied from Pydantic AI's output docs; the session must send the same
requests (output tools, response format, prompted schema) and end each turn with the same
output as plain ``agent.run``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_pydantic_ai.differential import output_agents
from tests.adapter_pydantic_ai.differential.harness import Scenario, assert_same_run, run_both

FORD = {"name": "Ford Explorer", "wheels": 4}


def offered(request: dict[str, Any]) -> list[str]:
    """The names of the tools a request offered the model."""
    return [t["function"]["name"] for t in request.get("tools", [])]


async def test_union_of_a_model_and_text(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """box_or_error.py: a text answer asking for units, then the box through the output tool."""
    ask = "Please provide the units for the dimensions (e.g., cm, in, m)."
    box = {"width": 10, "height": 20, "depth": 30, "units": "cm"}
    scenario = Scenario(
        name="box",
        build=output_agents.box_or_error,
        script=[ModelReply.say(ask), ModelReply.call(ScriptedToolCall("call_box", "final_result", box))],
        turns=["The box is 10x20x30", "The box is 10x20x30 cm"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.outputs == [ask, box]
    assert offered(plain.requests[""][0]) == ["final_result"]
    # Text is allowed, so the model is not forced to call the output tool.
    assert plain.requests[""][0]["tool_choice"] == "auto"
    assert_same_run(plain, session)


async def test_union_of_two_list_types(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """colors_or_sizes.py: one output tool per list type, each wrapping its list as ``response``."""
    scenario = Scenario(
        name="colors",
        build=output_agents.colors_or_sizes,
        script=[
            ModelReply.call(
                ScriptedToolCall("call_c", "final_result_list", {"response": ["red", "blue", "green"]})
            ),
            ModelReply.call(ScriptedToolCall("call_s", "final_result_list_2", {"response": [10, 20, 30]})),
        ],
        turns=["red square, blue circle, green triangle", "square size 10, circle size 20, triangle size 30"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.outputs == [["red", "blue", "green"], [10, 20, 30]]
    assert offered(plain.requests[""][0]) == ["final_result_list", "final_result_list_2"]
    assert_same_run(plain, session)


async def test_tool_output_with_names(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """tool_output.py: ``ToolOutput(Fruit, name='return_fruit')`` and ``return_vehicle``."""
    banana = {"name": "banana", "color": "yellow"}
    scenario = Scenario(
        name="tool-output",
        build=output_agents.tool_output,
        script=[ModelReply.call(ScriptedToolCall("call_fruit", "return_fruit", banana))],
        turns=["What is a banana?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.outputs == [banana]
    assert offered(plain.requests[""][0]) == ["return_fruit", "return_vehicle"]
    assert plain.requests[""][0]["tool_choice"] == "required"
    assert_same_run(plain, session)


async def test_native_output(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """native_output.py: the schema goes as ``response_format``; the answer is JSON text."""
    answer = json.dumps({"result": {"kind": "Vehicle", "data": FORD}})
    scenario = Scenario(
        name="native",
        build=output_agents.native_output,
        script=[ModelReply.say(answer, chunks=[answer[:20], answer[20:]])],
        turns=["What is a Ford Explorer?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.outputs == [FORD]
    response_format = plain.requests[""][0]["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["name"] == "Fruit_or_vehicle"
    assert_same_run(plain, session)


async def test_prompted_output(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """prompted_output.py: the schema in the instructions, the answer JSON text."""
    macbook = {"name": "MacBook", "kind": "laptop"}
    answer = json.dumps({"result": {"kind": "Device", "data": macbook}})
    scenario = Scenario(
        name="prompted",
        build=output_agents.prompted_output,
        script=[ModelReply.say(answer)],
        turns=["What is a MacBook?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.outputs == [macbook]
    system = plain.requests[""][0]["messages"][0]
    assert system["role"] == "system"
    assert (
        system["content"]
        .strip()
        .startswith("Always respond with a JSON object that's compatible with this schema:")
    )
    assert plain.requests[""][0]["response_format"] == {"type": "json_object"}
    assert_same_run(plain, session)


async def test_text_output_function(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """text_output_function.py: the text goes through ``split_into_words``."""
    text = "Albert Einstein was a German-born theoretical physicist."
    scenario = Scenario(
        name="text-output",
        build=output_agents.text_output_function,
        script=[ModelReply.say(text)],
        turns=["Who was Albert Einstein?"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.outputs == [["Albert", "Einstein", "was", "a", "German-born", "theoretical", "physicist."]]
    assert "tools" not in plain.requests[""][0]
    assert_same_run(plain, session)


async def test_typed_dict_output(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """streamed_user_profile.py's agent, run to the end: a TypedDict with a date, through the output tool."""
    profile = {"name": "Ben", "dob": "1990-01-28", "bio": "Likes the chain the dog and the pyramid"}
    scenario = Scenario(
        name="profile",
        build=output_agents.user_profile,
        script=[ModelReply.call(ScriptedToolCall("call_profile", "final_result", profile))],
        turns=["My name is Ben, I was born on January 28th 1990, I like the chain the dog and the pyramid."],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.outputs == [profile]
    assert offered(plain.requests[""][0]) == ["final_result"]
    assert_same_run(plain, session)
