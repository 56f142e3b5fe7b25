"""``end_strategy``: function tool calls next to an output, differential against plain Pydantic AI.

One response asks for a function tool (``notify``, a side effect) and gives the output, in
either order, or gives an invalid output (the function tool runs and the model is asked
again). Under ``'early'`` an output that succeeds ends the run before any function tool
runs, so ``notify`` never runs, plain or session; under ``'graceful'`` and ``'exhaustive'``
it runs. The real tool runs, the requests and the stored history are compared whole.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel
from pydantic_ai import Agent, NativeOutput

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

Strategy = Literal["early", "graceful", "exhaustive"]


class Report(BaseModel):
    summary: str


def reporter(strategy: Strategy, *, native: bool = False) -> AgentBuilder:
    def build(models: Models, log: InvocationLog) -> Built:
        agent = Agent[Any, Any](
            models.model(),
            output_type=NativeOutput(Report) if native else Report,
            end_strategy=strategy,
            instructions="Notify who asked, and report.",
        )

        @agent.tool_plain
        def notify(who: str) -> str:
            """Tell someone the report is ready."""
            log.record("tool", "notify", who=who)
            return f"notified {who}"

        return Built(agent=agent)

    return build


NOTIFY = ScriptedToolCall("c1", "notify", {"who": "bob"})
DONE = ScriptedToolCall("o1", "final_result", {"summary": "done"})
INVALID = ScriptedToolCall("o1", "final_result", {"nope": 1})
AGAIN = ModelReply.call(ScriptedToolCall("o2", "final_result", {"summary": "again"}))

CASES: dict[str, tuple[Strategy, list[ScriptedToolCall], list[dict[str, Any]], dict[str, str]]] = {
    # strategy, the response's calls, plain's tool runs, plain's output
    "early-function-first": ("early", [NOTIFY, DONE], [], {"summary": "done"}),
    "early-output-first": ("early", [DONE, NOTIFY], [], {"summary": "done"}),
    "early-invalid-output": (
        "early",
        [NOTIFY, INVALID],
        [{"name": "notify", "who": "bob"}],
        {"summary": "again"},
    ),
    "graceful-output-first": (
        "graceful",
        [DONE, NOTIFY],
        [{"name": "notify", "who": "bob"}],
        {"summary": "done"},
    ),
    "graceful-invalid-output": (
        "graceful",
        [NOTIFY, INVALID],
        [{"name": "notify", "who": "bob"}],
        {"summary": "again"},
    ),
    "exhaustive-output-first": (
        "exhaustive",
        [DONE, NOTIFY],
        [{"name": "notify", "who": "bob"}],
        {"summary": "done"},
    ),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_function_tools_next_to_an_output_run_as_the_strategy_says(
    case: str, temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    strategy, calls, runs, output = CASES[case]
    scenario = Scenario(
        name=f"end-{case}",
        build=reporter(strategy),
        script=[ModelReply.call(*calls), AGAIN],
        turns=["Report."],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)
    assert plain.tool_runs == runs and plain.outputs == [output]
    assert len(plain.requests[""]) == (1 if output == {"summary": "done"} else 2)
    assert_same_run(plain, session)


async def test_early_native_output_next_to_a_function_call_ends_the_run_before_it(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """`NativeOutput` text that validates ends an ``'early'`` run: the function tool is skipped."""
    scenario = Scenario(
        name="end-early-native",
        build=reporter("early", native=True),
        script=[ModelReply.call(NOTIFY, text=json.dumps({"summary": "done"})), ModelReply.say("{}")],
        turns=["Report."],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)
    assert plain.tool_runs == [] and plain.outputs == [{"summary": "done"}] and len(plain.requests[""]) == 1
    assert_same_run(plain, session)
